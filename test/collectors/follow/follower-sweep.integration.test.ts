import { appendFileSync, existsSync, mkdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

/**
 * A temp directory on a file system that records birth times, which the case needs: the system
 * temp directory, else tmpfs (/dev/shm, /run: birth times since Linux 5.x), else /var/tmp.
 */
function birthTimeDir(): { dir?: string; tried: string[] } {
  const tried: string[] = [];
  for (const base of [tmpdir(), "/dev/shm", "/run", "/var/tmp"]) {
    if (!existsSync(base)) continue;
    let d: string;
    try {
      d = testTempDir(base);
    } catch {
      continue; // not writable here
    }
    tried.push(base);
    const probe = join(d, "probe");
    writeFileSync(probe, "");
    const born = statSync(probe).birthtimeMs;
    unlinkSync(probe);
    if (born > 0) return { dir: d, tried };
  }
  return { tried };
}

describe("Follower sweep and start-up edge cases", () => {
  it("drains lines appended just before a delete through the open fd (inotify)", async () => {
    const d = testTempDir();
    const p = join(d, "short-lived.log");
    writeFileSync(p, "");
    const { rec } = await follow({ paths: [d], usePolling: false, sweepIntervalMs: 60_000 });
    appendFileSync(p, "first\n");
    await eventually(() => expect(rec.lines()).toEqual(["first"]));
    appendFileSync(p, "last words\n");
    unlinkSync(p);
    await eventually(() => expect(rec.events).toContain("removed short-lived.log g0"));
    expect(rec.lines()).toEqual(["first", "last words"]);
  });

  it("a file moved in after start but born before it is read like an existing one (head, then its end)", async (ctx) => {
    const found = birthTimeDir();
    const d = found.dir;
    if (d === undefined) {
      const why = `no file system here records birth times (statx btime 0 in ${found.tried.join(", ")}): the case cannot run`;
      if (process.env.CI) throw new Error(why);
      console.warn(`SKIPPED: ${why} (with CI set this is a failure)`);
      return ctx.skip();
    }
    mkdirSync(join(d, "in"));
    const src = join(d, "elsewhere.log");
    writeFileSync(src, "old head\n" + "old body\n".repeat(50));
    const born = statSync(src).birthtimeMs;
    expect(born).toBeGreaterThan(0);
    // Precondition, not a timing assertion: the file must be born over 1 s before the start.
    await eventually(() => expect(Date.now() - born).toBeGreaterThan(1100));
    appendFileSync(src, "touched\n"); // ctime moves off the birth time (which is then trusted)
    const { rec } = await follow({ paths: [join(d, "in")], headBytes: 9 });
    renameSync(src, join(d, "in", "moved.log"));
    await eventually(() => expect(rec.lines()).toEqual(["old head"]));
    expect(rec.got[0]?.historical).toBe(true);
    appendFileSync(join(d, "in", "moved.log"), "new\n");
    await eventually(() => expect(rec.lines()).toEqual(["old head", "new"]));
  });

  it("a file that went quiet is watched again, and a later write still arrives", async () => {
    const d = testTempDir();
    const p = join(d, "q.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ paths: [d], usePolling: false, pollIntervalMs: 60_000, sweepIntervalMs: 60_000 });
    const tailOf = (): { watch: unknown; hotTimer: unknown } =>
      (f as unknown as { registry: { byPath: Map<string, { watch: unknown; hotTimer: unknown }> } }).registry.byPath.get(p)!;
    expect(tailOf().watch).not.toBeNull(); // idle: armed
    appendFileSync(p, "burst 1\n");
    await eventually(() => expect(tailOf().watch).toBeNull()); // the event made it hot: no watch
    await eventually(() => expect(rec.lines()).toEqual(["burst 1"]));
    await eventually(() => expect(tailOf().watch).not.toBeNull()); // quiet again: re-armed
    expect(tailOf().hotTimer).toBeNull();
    appendFileSync(p, "burst 2\n");
    await eventually(() => expect(rec.lines()).toEqual(["burst 1", "burst 2"]));
  });

  it("a renamed file that leaves the followed set is removed after the grace period", async () => {
    const d = testTempDir();
    mkdirSync(join(d, "logs"));
    writeFileSync(join(d, "logs", "r.log"), "x\n");
    const { rec, f } = await follow({ paths: [join(d, "logs")], removeGraceMs: 100 });
    renameSync(join(d, "logs", "r.log"), join(d, "archived.log"));
    await eventually(() => expect(rec.events).toEqual(["added r.log g0", "removed r.log g0"]));
    expect(f.stats().files).toBe(0);
  });
});
