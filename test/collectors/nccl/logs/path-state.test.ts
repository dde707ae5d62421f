/**
 * The state of each configured NCCL log path, over real directories: what each kind of path names
 * (a directory, a file, nothing, a glob's root, brace alternatives), and the log lines: one per
 * change, a warning for a path that is not there, info for the default missing from the start and
 * for a path that comes back.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LogPaths, lookAtPath, pathRoots, type LogPathState } from "../../../../collectors/nccl/logs/path-state.js";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { testTempDir } from "../../../helpers/test-temp-dir.js";

const isRoot = process.getuid?.() === 0;

function rig(paths: string[], quiet: string[] = []) {
  const { logger, lines } = memoryLogger();
  const published: Array<ReadonlyMap<string, LogPathState>> = [];
  const p = new LogPaths({ paths, log: logger, quietWhenMissing: new Set(quiet), onLook: (s) => published.push(s) });
  const said = (): Array<[unknown, unknown]> => lines().map((l) => [l["level"], l["msg"]]);
  return { p, lines, said, published };
}

describe("lookAtPath", () => {
  it("tells a directory, a missing path, a file, a special file and a path through a file apart", async () => {
    const dir = testTempDir();
    mkdirSync(join(dir, "logs"));
    writeFileSync(join(dir, "file.log"), "");
    expect(await lookAtPath(join(dir, "logs"))).toEqual({ state: "present" });
    expect(await lookAtPath(join(dir, "nope"))).toEqual({ state: "missing", reason: "ENOENT" });
    // A file named directly is followed as it is (the follower's file pattern).
    expect(await lookAtPath(join(dir, "file.log"))).toEqual({ state: "present" });
    expect(await lookAtPath(join(dir, "file.log", "sub"))).toEqual({ state: "not_a_directory", reason: "ENOTDIR" });
    expect(spawnSync("mkfifo", [join(dir, "fifo")]).status).toBe(0);
    expect(await lookAtPath(join(dir, "fifo"))).toEqual({ state: "not_a_directory", reason: "a special file" });
  });

  it("judges a glob by the directory it starts at, whatever it matches", async () => {
    const dir = testTempDir();
    mkdirSync(join(dir, "logs"));
    writeFileSync(join(dir, "file"), "");
    expect(await lookAtPath(join(dir, "logs", "*.log"))).toEqual({ state: "present" }); // no match yet: still present
    expect(await lookAtPath(join(dir, "none", "*", "nccl.log"))).toEqual({ state: "missing", reason: "ENOENT" });
    expect(await lookAtPath(join(dir, "file", "*.log"))).toEqual({ state: "not_a_directory", reason: "a file" });
    expect(pathRoots("/a/{b,c}/**/nccl-*.log")).toEqual([
      { root: "/a/b", glob: true },
      { root: "/a/c", glob: true },
    ]);
    expect(pathRoots("/var/log/nccl")).toEqual([{ root: "/var/log/nccl", glob: false }]);
  });

  it("brace alternatives: present only when each is, else the first one's state that is not", async () => {
    const dir = testTempDir();
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    expect(await lookAtPath(join(dir, "{a,b}"))).toEqual({ state: "present" });
    expect(await lookAtPath(join(dir, "{a,c}"))).toEqual({ state: "missing", reason: "ENOENT" });
  });

  // As root, chmod does not deny reads; the end-to-end test runs the agent as nobody for this case.
  it.skipIf(isRoot)("a directory the agent's user may not list is unreadable", async () => {
    const dir = testTempDir();
    mkdirSync(join(dir, "locked"));
    chmodSync(join(dir, "locked"), 0o000);
    try {
      expect(await lookAtPath(join(dir, "locked"))).toEqual({ state: "unreadable", reason: "EACCES" });
      expect(await lookAtPath(join(dir, "locked", "*.log"))).toEqual({ state: "unreadable", reason: "EACCES" });
    } finally {
      chmodSync(join(dir, "locked"), 0o755);
    }
  });
});

describe("LogPaths", () => {
  it("logs a path that is not there once, as a warning, and once more when it comes back and goes again", async () => {
    const dir = testTempDir();
    const path = join(dir, "nccl");
    const r = rig([path]);
    await r.p.look();
    await r.p.look();
    expect(r.said()).toEqual([[40, `nccl: log path ${path} does not exist: nothing is followed there until it appears`]]);
    expect(r.lines()[0]).toMatchObject({ path, state: "missing", reason: "ENOENT" });
    expect(r.p.source()).toBe("absent");
    mkdirSync(path);
    await r.p.look();
    await r.p.look();
    expect(r.p.source()).toBe("present");
    rmSync(path, { recursive: true });
    await r.p.look();
    expect(r.said()).toEqual([
      [40, `nccl: log path ${path} does not exist: nothing is followed there until it appears`],
      [30, `nccl: log path ${path} is present now; following it`],
      [40, `nccl: log path ${path} does not exist: nothing is followed there until it appears`],
    ]);
    expect(r.published.map((m) => m.get(path))).toEqual(["missing", "missing", "present", "present", "missing"]);
  });

  it("the default missing from the start is info (no job has logged here yet); its loss later is a warning", async () => {
    const dir = testTempDir();
    const path = join(dir, "nccl");
    const r = rig([path], [path]);
    await r.p.look();
    expect(r.lines().map((l) => l["level"])).toEqual([30]);
    expect(String(r.lines()[0]?.["msg"])).toContain("(the default; point --collector.nccl.path at the jobs' NCCL_DEBUG_FILE directory)");
    mkdirSync(path);
    await r.p.look();
    rmSync(path, { recursive: true });
    await r.p.look();
    expect(r.lines().map((l) => l["level"])).toEqual([30, 30, 40]);
  });

  it("a present path logs nothing; the collector's source is present with one path there, absent with none, failing where one exists but cannot be used", async () => {
    const dir = testTempDir();
    mkdirSync(join(dir, "ok"));
    writeFileSync(join(dir, "file"), "");
    const one = rig([join(dir, "ok"), join(dir, "missing")]);
    expect(one.p.source()).toBeUndefined();
    await one.p.look();
    expect(one.p.source()).toBe("present");
    expect(one.said()).toHaveLength(1);

    const none = rig([join(dir, "missing"), join(dir, "gone", "*.log")]);
    await none.p.look();
    expect(none.p.source()).toBe("absent");

    const broken = rig([join(dir, "missing"), join(dir, "file", "*.log")]);
    await broken.p.look();
    expect(broken.p.source()).toBe("failing");
    expect(broken.said()[1]).toEqual([40, `nccl: log path ${join(dir, "file", "*.log")} is not a directory (a file): nothing is followed there`]);

    const clean = rig([join(dir, "ok")]);
    await clean.p.look();
    expect(clean.said()).toEqual([]);
    expect(clean.p.isRoot(join(dir, "ok"))).toBe(true);
    expect(clean.p.isRoot(join(dir, "ok", "a.log"))).toBe(false);
  });

  it("a reload keeps the state of the paths still configured (nothing logged again) and judges the new ones", async () => {
    const dir = testTempDir();
    const [a, b] = [join(dir, "a"), join(dir, "b")];
    const r = rig([a]);
    await r.p.look();
    r.p.setPaths([a, b]);
    await r.p.look();
    expect(r.said().map(([, m]) => m)).toEqual([
      `nccl: log path ${a} does not exist: nothing is followed there until it appears`,
      `nccl: log path ${b} does not exist: nothing is followed there until it appears`,
    ]);
    expect([...(r.published.at(-1)?.keys() ?? [])]).toEqual([a, b]);
    r.p.setPaths([b]);
    await r.p.look();
    expect([...(r.published.at(-1)?.keys() ?? [])]).toEqual([b]);
    expect(r.said()).toHaveLength(2);
  });
});
