import { appendFileSync, closeSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

describe.each(MODES)("Follower ($name)", ({ opts }) => {
  it("reads an existing file's head as historical, then appended lines as new", async () => {
    const d = testTempDir();
    const p = join(d, "nccl-h-1.log");
    writeFileSync(p, "NCCL version 2.21.5+cuda12.4\nInit COMPLETE\n");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    // start() resolves once the head is read: no waiting needed.
    expect(rec.got.map((g) => [g.line, g.historical])).toEqual([
      ["NCCL version 2.21.5+cuda12.4", true],
      ["Init COMPLETE", true],
    ]);
    appendFileSync(p, "AllReduce: opCount 1\nAllReduce: opCount 2\n");
    await eventually(() => expect(rec.lines()).toHaveLength(4));
    expect(rec.got.slice(2).map((g) => [g.line, g.historical])).toEqual([
      ["AllReduce: opCount 1", false],
      ["AllReduce: opCount 2", false],
    ]);
    expect(f.stats()).toMatchObject({ files: 1, linesRead: 4, polling: opts.usePolling });
    expect(rec.events).toEqual(["added nccl-h-1.log g0"]);
  });

  it("keeps a half-written line until the rest arrives", async () => {
    const d = testTempDir();
    const p = join(d, "r.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    const fd = openSync(p, "a");
    writeSync(fd, "first\nAllRed");
    await eventually(() => expect(rec.lines()).toEqual(["first"]));
    await f.flush();
    expect(rec.lines()).toEqual(["first"]); // the half line is not emitted, even on flush
    writeSync(fd, "uce: opCount 3\r\n");
    closeSync(fd);
    await eventually(() => expect(rec.lines()).toEqual(["first", "AllReduce: opCount 3"]));
  });

  it("survives binary junk, NULs and a UTF-8 character split across writes", async () => {
    const d = testTempDir();
    const p = join(d, "junk.log");
    writeFileSync(p, "");
    const { rec } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, Buffer.from([0x00, 0x01, 0xff, 0x0a, 0x68, 0xc3]));
    await eventually(() => expect(rec.lines()).toEqual(["\u0000\u0001\ufffd"]));
    appendFileSync(p, Buffer.from([0xa9, 0x0a]));
    await eventually(() => expect(rec.lines()).toEqual(["\u0000\u0001\ufffd", "h\u00e9"]));
  });

  it("skips and counts over-long lines without losing the next one", async () => {
    const d = testTempDir();
    const p = join(d, "long.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d], maxLineBytes: 1000 });
    appendFileSync(p, "a".repeat(5000) + "\nshort\n");
    await eventually(() => expect(rec.lines()).toEqual(["short"]));
    const fd = openSync(p, "a");
    for (let i = 0; i < 4; i++) {
      writeSync(fd, "b".repeat(400)); // grows past the cap across reads
      await f.flush();
    }
    writeSync(fd, "\nafter\n");
    closeSync(fd);
    await eventually(() => expect(rec.lines()).toEqual(["short", "after"]));
    expect(f.stats().linesTooLong).toBe(2);
  });

  it("reads at most headBytes of an existing file, then only what follows its end", async () => {
    const d = testTempDir();
    const p = join(d, "big.log");
    const head = "version\ninit\n"; // 13 bytes, inside the 20-byte head
    const middle = Array.from({ length: 100 }, (_, i) => `middle ${i}`).join("\n");
    writeFileSync(p, head + "cut-by-head-limit\n" + middle + "\nfrag"); // ends mid-line
    const { rec } = await follow({ ...opts, paths: [d], headBytes: 20 });
    expect(rec.got.map((g) => [g.line, g.historical])).toEqual([
      ["version", true],
      ["init", true],
    ]);
    appendFileSync(p, "ment\nnew 1\n");
    await eventually(() => expect(rec.lines()).toEqual(["version", "init", "new 1"]));
    expect(rec.got[2]?.historical).toBe(false);
  });

  it("reads a file created after start from its beginning", async () => {
    const d = testTempDir();
    const { rec } = await follow({ ...opts, paths: [d] });
    expect(rec.got).toEqual([]);
    writeFileSync(join(d, "late.log"), "l1\nl2\n");
    await eventually(() =>
      expect(rec.got.map((g) => [g.file, g.line, g.historical])).toEqual([
        ["late.log", "l1", false],
        ["late.log", "l2", false],
      ]),
    );
    expect(rec.events).toEqual(["added late.log g0"]);
  });

  it("batches the lines of one read into one onLines call", async () => {
    const d = testTempDir();
    const p = join(d, "batch.log");
    writeFileSync(p, "");
    const { rec } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, Array.from({ length: 500 }, (_, i) => `line ${i}\n`).join(""));
    await eventually(() => expect(rec.lines()).toHaveLength(500));
    expect(rec.batches).toBe(1);
  });
});
