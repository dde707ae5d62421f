import { appendFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eventually, follow } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

/** real: fs.watch as is; enospc: it throws like a full inotify table; deaf: watches never fire. */
type Mode = "real" | "enospc" | "deaf";
const ctl = vi.hoisted((): { mode: Mode; nfs: boolean } => ({ mode: "real", nfs: false }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const { EventEmitter } = await import("node:events");
  const watch = (...args: Parameters<typeof real.watch>): ReturnType<typeof real.watch> => {
    if (ctl.mode === "enospc") {
      throw Object.assign(new Error("ENOSPC: System limit for number of file watchers reached"), { code: "ENOSPC" });
    }
    if (ctl.mode === "deaf") {
      const w = Object.assign(new EventEmitter(), { close: () => undefined, ref: () => w, unref: () => w });
      return w;
    }
    return real.watch(...args);
  };
  return { ...real, default: { ...real, watch }, watch };
});

// nfs: statfs reports NFS_SUPER_MAGIC, as on a network file system.
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const statfs = async (p: string): ReturnType<typeof real.statfs> => {
    const s = await real.statfs(p);
    return ctl.nfs ? { ...s, type: 0x6969 } : s;
  };
  return { ...real, default: { ...real, statfs }, statfs };
});

afterEach(() => {
  ctl.mode = "real";
  ctl.nfs = false;
});

describe("Follower without working watches", () => {
  it("polls files and directories when no inotify watch can be had (ENOSPC)", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "a.log"), "a0\n");
    ctl.mode = "enospc";
    const { rec, f } = await follow({ paths: [d], usePolling: "auto", pollIntervalMs: 50, sweepIntervalMs: 60_000 });
    expect(f.stats().polling).toBe(true);
    appendFileSync(join(d, "a.log"), "a1\n");
    writeFileSync(join(d, "b.log"), "b0\n");
    await eventually(() => {
      expect(rec.lines("a.log")).toEqual(["a0", "a1"]);
      expect(rec.lines("b.log")).toEqual(["b0"]);
      return true;
    });
    expect(rec.added).toHaveLength(2);
  });

  it("auto mode polls a network file system (inotify would never fire there)", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "n.log"), "n0\n");
    ctl.nfs = true;
    ctl.mode = "deaf"; // were anything watched, it would never hear a thing
    const { rec, f } = await follow({ paths: [d], usePolling: "auto", pollIntervalMs: 50, sweepIntervalMs: 60_000 });
    expect(f.stats().polling).toBe(true);
    appendFileSync(join(d, "n.log"), "n1\n");
    writeFileSync(join(d, "m.log"), "m0\n");
    await eventually(() => {
      expect(rec.lines("n.log")).toEqual(["n0", "n1"]);
      expect(rec.lines("m.log")).toEqual(["m0"]);
      return true;
    });
  });

  it("the sweep reads appends, new files and deletions that no event reported", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "a.log"), "a0\n");
    writeFileSync(join(d, "gone.log"), "g0\n");
    ctl.mode = "deaf";
    const { rec, f } = await follow({ paths: [d], usePolling: false, pollIntervalMs: 60_000, sweepIntervalMs: 100 });
    expect(f.stats().polling).toBe(false); // the watches were armed; they just never fire
    appendFileSync(join(d, "a.log"), "a1\n");
    writeFileSync(join(d, "new.log"), "n0\n");
    unlinkSync(join(d, "gone.log"));
    await eventually(() => {
      expect(rec.lines("a.log")).toEqual(["a0", "a1"]);
      expect(rec.lines("new.log")).toEqual(["n0"]);
      expect(rec.events).toContain("removed gone.log g0");
      return true;
    });
  });

  it("an orphan whose new name is not known yet looks for it before it is removed (no re-read)", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "a.log"), "old 1\n");
    ctl.mode = "deaf";
    const { rec, f } = await follow({ paths: [d], pollIntervalMs: 60_000, sweepIntervalMs: 60_000, removeGraceMs: 50 });
    renameSync(join(d, "a.log"), join(d, "a.log.1"));
    writeFileSync(join(d, "a.log"), "new 1\n");
    // Only the path check, no directory rescan: the old file becomes an orphan with no new name.
    await (f as unknown as { sweeper: { run(k: string): Promise<void> } }).sweeper.run("full");
    await eventually(() => expect(rec.lines("a.log")).toEqual(["old 1", "new 1"]));
    const oldIno = rec.got[0]?.ino;
    type T = { paths: Set<string>; removed: boolean; file: { ino: number } };
    const reg = (f as unknown as { registry: { byId: Map<string, T> } }).registry;
    const orphan = [...reg.byId.values()].find((t) => t.file.ino === oldIno);
    expect(orphan).toBeDefined();
    // It lost its last path: its directory is looked at at once (and again before its 50 ms grace
    // ends), so it finds its new name instead of being removed.
    await eventually(() => expect(orphan!.paths.size > 0 || orphan!.removed).toBe(true));
    expect([...orphan!.paths]).toEqual([join(d, "a.log.1")]);
    appendFileSync(join(d, "a.log.1"), "old 2\n");
    await f.flush();
    expect(rec.got.filter((g) => g.line === "old 2")).toMatchObject([{ file: "a.log.1", ino: oldIno, generation: 0 }]);
    expect(rec.count("old 1")).toBe(1);
    expect(rec.removed).toEqual([]);
  });

  it("with events working and a slow sweep, the same changes arrive through the watches", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "a.log"), "a0\n");
    const { rec } = await follow({ paths: [d], usePolling: false, pollIntervalMs: 60_000, sweepIntervalMs: 60_000 });
    appendFileSync(join(d, "a.log"), "a1\n");
    writeFileSync(join(d, "new.log"), "n0\n");
    await eventually(() => {
      expect(rec.lines("a.log")).toEqual(["a0", "a1"]);
      expect(rec.lines("new.log")).toEqual(["n0"]);
      return true;
    });
  });
});
