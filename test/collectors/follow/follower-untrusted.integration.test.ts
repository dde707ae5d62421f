/**
 * What one job user can do to the follower through the files it writes: flood the folder past the
 * file cap, link to files it may not read, make a file of holes. As root here (CI), the owners are
 * set with chown/lchown: the follower sees only the uid, as it would of a real other user's files.
 */
import { appendFileSync, chmodSync, chownSync, lchownSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SPARSE_MIN_BYTES } from "../../../collectors/follow/reader.js";
import { isRoot } from "../../helpers/staged-build.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";
import { eventually, follow, Recorder } from "./helpers.js";

const JOB_USER = 4242;
const OTHER_USER = 4343;

class Dropped extends Recorder {
  readonly dropped: [string, number][] = [];
  readonly errors: [string, string][] = [];
  onFileDropped(path: string, uid: number): void {
    this.dropped.push([path, uid]);
  }
  onReadError(path: string, code: string): void {
    this.errors.push([path, code]);
  }
}

describe.runIf(isRoot)("a job user's files against the follower", () => {
  it("a flood past the file cap gives way to another user's logs, the flooder's idle files first", async () => {
    const d = testTempDir();
    for (let i = 0; i < 30; i++) {
      const p = join(d, `flood-${i}.log`);
      writeFileSync(p, i === 0 ? "flood written\n" : "");
      chownSync(p, JOB_USER, JOB_USER);
    }
    const rec = new Dropped();
    const { f } = await follow({ paths: [d], maxFiles: 20, sweepIntervalMs: 100 }, rec);
    expect(f.stats().files).toBe(20);
    expect(f.stats().filesDropped).toBe(10);
    expect(new Set(rec.dropped.map(([, uid]) => uid))).toEqual(new Set([JOB_USER]));

    // Another user's job starts writing: its logs are followed, each at the cost of a flood file.
    for (let i = 0; i < 3; i++) {
      const p = join(d, `job-${i}.log`);
      writeFileSync(p, `job ${i} line 1\n`);
      chownSync(p, OTHER_USER, OTHER_USER);
    }
    await eventually(() =>
      expect(
        rec
          .lines()
          .filter((l) => l.startsWith("job "))
          .sort(),
      ).toEqual(["job 0 line 1", "job 1 line 1", "job 2 line 1"]),
    );
    expect(f.stats().files).toBe(20);
    expect(f.stats().filesDropped).toBe(13);
    // The files that gave way were the flooder's, and its one written file was not among them.
    const gaveWay = rec.removed.map((r) => r.path);
    expect(gaveWay).toHaveLength(3);
    expect(gaveWay.every((p) => p.includes("flood-"))).toBe(true);
    expect(gaveWay).not.toContain(join(d, "flood-0.log"));
    expect(rec.dropped.every(([, uid]) => uid === JOB_USER)).toBe(true);

    // More flood files of the same user: dropped, never pushing the other user's logs out.
    for (let i = 30; i < 40; i++) {
      const p = join(d, `flood-${i}.log`);
      writeFileSync(p, "");
      chownSync(p, JOB_USER, JOB_USER);
    }
    await eventually(() => expect(f.stats().filesDropped).toBe(23));
    appendFileSync(join(d, "job-1.log"), "job 1 line 2\n");
    await eventually(() => expect(rec.lines("job-1.log")).toEqual(["job 1 line 1", "job 1 line 2"]));
  });

  it("a symlink out of the folder is followed only to a file every user could read", async () => {
    const d = testTempDir();
    chmodSync(d, 0o755);
    const logs = join(d, "logs");
    const elsewhere = join(d, "elsewhere");
    mkdirSync(logs);
    mkdirSync(elsewhere);
    const secret = join(elsewhere, "secret.log");
    writeFileSync(secret, "secret line\n", { mode: 0o600 });
    chownSync(secret, OTHER_USER, OTHER_USER);
    const own = join(elsewhere, "own.log");
    writeFileSync(own, "own line\n", { mode: 0o644 });
    chownSync(own, JOB_USER, JOB_USER);
    for (const [name, target] of [
      ["steal.log", secret],
      ["mine.log", own],
    ] as const) {
      symlinkSync(target, join(logs, name));
      lchownSync(join(logs, name), JOB_USER, JOB_USER);
    }
    const rec = new Dropped();
    await follow({ paths: [logs], sweepIntervalMs: 100 }, rec);
    await eventually(() => expect(rec.errors.map(([p, code]) => [p.slice(logs.length + 1), code])).toContainEqual(["steal.log", "EFOREIGN"]));
    await eventually(() => expect(rec.lines()).toEqual(["own line"]));
  });

  it("a FIFO or a link to one in the folder is never opened for reading", async () => {
    const d = testTempDir();
    const { spawnSync } = await import("node:child_process");
    spawnSync("mkfifo", [join(d, "pipe.log")]);
    symlinkSync(join(d, "pipe.log"), join(d, "link.log"));
    writeFileSync(join(d, "real.log"), "real line\n");
    const rec = new Dropped();
    const { f } = await follow({ paths: [d], sweepIntervalMs: 100 }, rec);
    expect(rec.lines()).toEqual(["real line"]);
    expect(f.stats().files).toBe(1);
    // A writer that opens the FIFO would find no reader: open(O_WRONLY|O_NONBLOCK) says ENXIO.
    const { openSync, constants } = await import("node:fs");
    expect(() => openSync(join(d, "pipe.log"), constants.O_WRONLY | constants.O_NONBLOCK)).toThrow(/ENXIO/);
  });

  it("a file of holes (truncate -s) is read from near its end, not from its start", async () => {
    const d = testTempDir();
    const rec = new Dropped();
    const { f } = await follow({ paths: [d], sweepIntervalMs: 100, headBytes: 4096 }, rec);
    const p = join(d, "holes.log");
    writeFileSync(p, "first line, before the hole\n");
    truncateSync(p, 64 * SPARSE_MIN_BYTES); // 4 GiB of nothing
    appendFileSync(p, "\nlast line, after the hole\n");
    await eventually(() => expect(rec.lines()).toContain("last line, after the hole"));
    expect(f.stats().sparseSkipped).toBe(1);
    expect(rec.lines()).not.toContain("first line, before the hole");
    expect(f.stats().bytesRead).toBeLessThan(1024 * 1024);
  });

  it("a copytruncate under a writer without O_APPEND: the hole up to its old offset is skipped, not its first line", async () => {
    const d = testTempDir();
    const rec = new Dropped();
    const { f } = await follow({ paths: [d], sweepIntervalMs: 100, headBytes: 4096 }, rec);
    const p = join(d, "nccl.log");
    writeFileSync(p, "before rotation\n");
    await eventually(() => expect(rec.lines()).toEqual(["before rotation"]));
    // The writer's offset is 100 MiB on; the file is truncated under it; its next write lands there.
    const { openSync, writeSync, closeSync, ftruncateSync } = await import("node:fs");
    const fd = openSync(p, "r+");
    ftruncateSync(fd, 0);
    writeSync(fd, "FIRST after rotation\nSECOND\n", 100 * 1024 * 1024);
    closeSync(fd);
    await eventually(() => expect(rec.lines()).toEqual(["before rotation", "FIRST after rotation", "SECOND"]));
    expect(f.stats().truncations).toBe(1);
  });
});
