import {
  appendFileSync,
  closeSync,
  copyFileSync,
  openSync,
  renameSync,
  statSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

describe.each(MODES)("Follower rotation ($name)", ({ opts }) => {
  it("rotate-create: follows the renamed file (still written through its fd) and reads the new one from its start", async () => {
    const d = testTempDir();
    const p = join(d, "nccl.log");
    const old = openSync(p, "a");
    writeSync(old, "old 1\n");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    writeSync(old, "old 2\n");
    await eventually(() => expect(rec.lines()).toEqual(["old 1", "old 2"]));
    const oldIno = statSync(p).ino;

    renameSync(p, join(d, "nccl.log.1"));
    writeFileSync(p, "new 1\n");
    writeSync(old, "old 3\n"); // NCCL keeps its fd: this lands in nccl.log.1
    closeSync(old);

    await eventually(() => {
      expect(rec.got.filter((g) => g.ino === oldIno).map((g) => g.line)).toEqual(["old 1", "old 2", "old 3"]);
      expect(rec.got.filter((g) => g.ino !== oldIno).map((g) => [g.file, g.line, g.generation])).toEqual([["nccl.log", "new 1", 1]]);
      return true;
    });
    await f.flush();
    expect(rec.count("old 1")).toBe(1); // the renamed file was not read again
    // Read through the inode, maybe before the new name was known: (path, generation) still
    // tells the old file (g0) from the new one (g1).
    expect(rec.got.find((g) => g.line === "old 3")).toMatchObject({ ino: oldIno, generation: 0 });
    appendFileSync(join(d, "nccl.log.1"), "old 4\n");
    await eventually(() => expect(rec.got.find((g) => g.line === "old 4")).toMatchObject({ file: "nccl.log.1", ino: oldIno, generation: 0 }));
    expect(rec.events).toEqual(["added nccl.log g0", "added nccl.log g1"]);
    expect(f.stats()).toMatchObject({ files: 2, rotations: 1, truncations: 0 });
  });

  it.each([
    ["smaller", "x\n"],
    ["larger", "rewritten past the old offset 1\nrewritten past the old offset 2\n"],
  ])("copytruncate, %s: reads again from 0 with a new generation", async (_kind, rewrite) => {
    const d = testTempDir();
    const p = join(d, "r0.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, "before 1\nbefore 2\n");
    await eventually(() => expect(rec.lines()).toEqual(["before 1", "before 2"]));
    copyFileSync(p, join(d, "r0.log.1.gz")); // the copy is not followed (compressed name)
    writeFileSync(p, rewrite); // truncate + write, before the follower looks
    const want = ["before 1", "before 2", ...rewrite.split("\n").filter((l) => l !== "")];
    await eventually(() => expect(rec.lines()).toEqual(want));
    expect(rec.got.at(-1)?.generation).toBe(1);
    expect(rec.events).toEqual(["added r0.log g0", "truncated r0.log g1"]);
    expect(f.stats()).toMatchObject({ truncations: 1, files: 1 });
  });

  it("copytruncate, same size: a rewrite to exactly the old size is caught by the fingerprint", async () => {
    const d = testTempDir();
    const p = join(d, "r1.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, "aaaa\nbbbb\n");
    await eventually(() => expect(rec.lines()).toEqual(["aaaa", "bbbb"]));
    const before = statSync(p);
    writeFileSync(p, "cccc\ndddd\n");
    // A later rewrite has a later mtime; set it explicitly so a coarse clock tick cannot hide it.
    utimesSync(p, before.atime, new Date(before.mtimeMs + 2000));
    expect(statSync(p).size).toBe(before.size);
    await eventually(() => expect(rec.lines()).toEqual(["aaaa", "bbbb", "cccc", "dddd"]));
    expect(f.stats().truncations).toBe(1);
    expect(rec.truncated).toHaveLength(1);
  });

  it("same size and untouched bytes (only mtime moved) is not a truncation", async () => {
    const d = testTempDir();
    const p = join(d, "t.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, "keep\n");
    await eventually(() => expect(rec.lines()).toEqual(["keep"]));
    const st = statSync(p);
    utimesSync(p, st.atime, new Date(st.mtimeMs + 5000));
    await f.flush();
    appendFileSync(p, "more\n");
    await eventually(() => expect(rec.lines()).toEqual(["keep", "more"]));
    expect(f.stats().truncations).toBe(0);
  });

  it("copytruncate with a writer that does not append: skips the NUL hole it leaves", async () => {
    const d = testTempDir();
    const p = join(d, "sparse.log");
    const w = openSync(p, "w"); // like NCCL's fopen(path, "w"): no O_APPEND
    writeSync(w, "first line of the old file\n");
    const { rec } = await follow({ ...opts, paths: [d] });
    writeSync(w, "second\n");
    await eventually(() => expect(rec.lines()).toEqual(["first line of the old file", "second"]));
    truncateSync(p, 0);
    writeSync(w, "after truncate\n"); // lands at the writer's old offset: NULs before it
    closeSync(w);
    await eventually(() => expect(rec.lines()).toEqual(["first line of the old file", "second", "after truncate"]));
    expect(rec.truncated).toHaveLength(1);
  });

  it("delete: onFileRemoved, and a partial last line is not emitted", async () => {
    const d = testTempDir();
    const p = join(d, "gone.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, "one\npartial");
    await eventually(() => expect(rec.lines()).toEqual(["one"]));
    unlinkSync(p);
    await eventually(() => expect(rec.events).toEqual(["added gone.log g0", "removed gone.log g0"]));
    expect(rec.lines()).toEqual(["one"]);
    expect(f.stats().files).toBe(0);
  });

  it("delete + recreate at the same path: new generation, read from its start", async () => {
    const d = testTempDir();
    const p = join(d, "again.log");
    writeFileSync(p, "v1 a\n");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    const hold = openSync(p, "r"); // keeps the old inode alive: the new file gets another number
    unlinkSync(p);
    writeFileSync(p, "v2 a\nv2 b\n");
    closeSync(hold);
    await eventually(() => {
      expect(rec.got.map((g) => [g.line, g.generation, g.historical])).toEqual([
        ["v1 a", 0, true],
        ["v2 a", 1, false],
        ["v2 b", 1, false],
      ]);
      expect(rec.events).toContain("removed again.log g0");
      return true;
    });
    expect(rec.events.filter((e) => e.startsWith("added"))).toEqual(["added again.log g0", "added again.log g1"]);
    expect(f.stats().files).toBe(1);
  });
});
