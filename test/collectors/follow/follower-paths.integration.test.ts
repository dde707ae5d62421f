import { chmodSync, appendFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

describe.each(MODES)("Follower paths ($name)", ({ opts }) => {
  it("follows a symlinked file and a symlinked directory through their targets", async () => {
    const d = testTempDir();
    // Outside the followed folder a link is followed to what every user could read (docs/security.md).
    chmodSync(d, 0o755);
    const logs = join(d, "logs");
    const outside = join(d, "outside");
    mkdirSync(logs);
    mkdirSync(join(outside, "sub"), { recursive: true });
    writeFileSync(join(outside, "target.log"), "t0\n");
    writeFileSync(join(outside, "sub", "inner.log"), "i0\n");
    symlinkSync(join(outside, "target.log"), join(logs, "link.log"));
    symlinkSync(join(outside, "sub"), join(logs, "linkdir"));
    const { rec } = await follow({ ...opts, paths: [logs] });
    expect(rec.lines().sort()).toEqual(["i0", "t0"]);
    appendFileSync(join(outside, "target.log"), "t1\n");
    appendFileSync(join(outside, "sub", "inner.log"), "i1\n");
    await eventually(() => {
      expect(rec.lines("link.log")).toEqual(["t0", "t1"]);
      expect(rec.lines("inner.log")).toEqual(["i0", "i1"]);
      return true;
    });
  });

  it("follows a file reached twice (itself and a symlink) once", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "real.log"), "once\n");
    symlinkSync(join(d, "real.log"), join(d, "alias.log"));
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(join(d, "real.log"), "twice?\n");
    await eventually(() => expect(rec.count("twice?")).toBe(1));
    await f.flush();
    expect(rec.count("once")).toBe(1);
    expect(rec.count("twice?")).toBe(1);
    expect(rec.added).toHaveLength(1);
    expect(f.stats().files).toBe(1);
  });

  it("matches globs with ** and {a,b} below their static prefix only", async () => {
    const d = testTempDir();
    mkdirSync(join(d, "nccl", "job1", "n0"), { recursive: true });
    mkdirSync(join(d, "torch"), { recursive: true });
    mkdirSync(join(d, "other"), { recursive: true });
    writeFileSync(join(d, "nccl", "job1", "n0", "nccl-h-1.log"), "deep\n");
    writeFileSync(join(d, "nccl", "nccl-h-2.log"), "top\n");
    writeFileSync(join(d, "nccl", "job1", "notes.txt"), "no\n");
    writeFileSync(join(d, "torch", "rank0.err"), "torch\n");
    writeFileSync(join(d, "other", "nccl-h-3.log"), "no\n");
    const { rec } = await follow({ ...opts, paths: [join(d, "{nccl/**/nccl-*.log,torch/*.err}")] });
    expect(rec.lines().sort()).toEqual(["deep", "top", "torch"]);
    writeFileSync(join(d, "nccl", "job1", "nccl-h-4.log"), "later\n");
    writeFileSync(join(d, "nccl", "job1", "later.txt"), "no\n");
    await eventually(() => expect(rec.lines()).toContain("later"));
    expect(rec.lines()).not.toContain("no");
  });

  it("skips hidden and compressed files by default, and obeys an accept predicate", async () => {
    const d = testTempDir();
    writeFileSync(join(d, ".hidden.log"), "h\n");
    writeFileSync(join(d, "old.log.1.gz"), "gz\n");
    writeFileSync(join(d, "old.log.zst"), "zst\n");
    writeFileSync(join(d, "a.log"), "a\n");
    writeFileSync(join(d, "b.skip"), "b\n");
    const def = await follow({ ...opts, paths: [d] });
    expect(def.rec.lines().sort()).toEqual(["a", "b"]);
    const own = await follow({ ...opts, paths: [d], accept: (p) => !p.endsWith("/a.log") });
    expect(own.rec.lines().sort()).toEqual(["b", "gz", "h", "zst"]);
  });

  it("caps the number of followed files and counts the rest as dropped", async () => {
    const d = testTempDir();
    for (let i = 0; i < 5; i++) writeFileSync(join(d, `r${i}.log`), `line ${i}\n`);
    const { rec, f } = await follow({ ...opts, paths: [d], maxFiles: 3 });
    expect(rec.lines()).toHaveLength(3);
    await f.flush(); // a rescan sees the dropped files again: still counted once each
    expect(f.stats()).toMatchObject({ files: 3, filesDropped: 2 });
  });

  it("watches a directory that does not exist yet once it appears", async () => {
    const d = testTempDir();
    const later = join(d, "later");
    const { rec, f } = await follow({ ...opts, paths: [later] });
    expect(f.stats().files).toBe(0);
    mkdirSync(later);
    writeFileSync(join(later, "x.log"), "appeared\n");
    await f.flush();
    await eventually(() => expect(rec.got.map((g) => [g.line, g.historical])).toEqual([["appeared", false]]));
  });

  it("follows one configured file and its rotate-create successor, nothing else", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "nccl.log"), "mine\n");
    writeFileSync(join(d, "other.log"), "not mine\n");
    const { rec } = await follow({ ...opts, paths: [join(d, "nccl.log")] });
    expect(rec.lines()).toEqual(["mine"]);
    appendFileSync(join(d, "other.log"), "still not\n");
    appendFileSync(join(d, "nccl.log"), "mine too\n");
    await eventually(() => expect(rec.lines()).toEqual(["mine", "mine too"]));
  });
});
