/** Compressed logs for `ringwatch analyze`: gzip and zstd, streamed, zip bombs bounded. */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compressionOf, decompress, zstdWindow } from "../../agent/analyze-decompress.js";
import { notALog } from "../../agent/analyze-sniff.js";
import { zstdRawFrame } from "../e2e/analyze-zstd-raw.js";

/** Decompresses `data` fed in chunks of `size` bytes; what came out and why it stopped. */
async function run(data: Buffer, size: number, limits?: { ratio: number; floor: number }, want = Number.POSITIVE_INFINITY) {
  const kind = compressionOf(data);
  if (kind === undefined) throw new Error("not compressed");
  let off = size;
  const out: Buffer[] = [];
  let got = 0;
  const why = await decompress(
    kind,
    data.subarray(0, size),
    () => {
      if (off >= data.length) return undefined;
      const b = data.subarray(off, off + size);
      off += size;
      return b;
    },
    (b) => {
      out.push(Buffer.from(b));
      got += b.length;
      return got < want;
    },
    limits,
  );
  return { text: Buffer.concat(out), why };
}

const LOG = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `host-1:${1000 + (i % 8)}:${2000 + i} [${i % 8}] NCCL INFO step ${i}\n`).join(""));

describe("analyze's decompression", () => {
  it("knows gzip and zstd by their first bytes", () => {
    expect([compressionOf(gzipSync(LOG)), compressionOf(zstdRawFrame(LOG)), compressionOf(LOG), compressionOf(Buffer.alloc(0))]).toEqual([
      "gzip",
      "zstd",
      undefined,
      undefined,
    ]);
  });

  it("streams gzip (several members too) and zstd back to the same bytes, whatever the chunking", async () => {
    const twoMembers = Buffer.concat([gzipSync(LOG.subarray(0, 1000)), gzipSync(LOG.subarray(1000))]);
    for (const size of [7, 4096, 1 << 20]) {
      expect((await run(gzipSync(LOG), size)).text.equals(LOG)).toBe(true);
      expect((await run(twoMembers, size)).text.equals(LOG)).toBe(true);
      const z = await run(zstdRawFrame(LOG), size);
      expect([z.why, z.text.equals(LOG)]).toEqual([undefined, true]);
    }
  });

  it("stops a zip bomb at ratio x compressed bytes (at least the floor), with a line", async () => {
    const zeros = Buffer.alloc(64 * 1024 * 1024);
    const gz = gzipSync(zeros); // about 64 kB: 1000 to 1
    const r = await run(gz, 1 << 20, { ratio: 200, floor: 1024 * 1024 });
    expect(r.why).toBe(
      "stopped after 12 MiB decompressed, more than 200 times its compressed size (taken for a zip bomb); the rest is not read (a real log: gzip -dc FILE | ringwatch analyze -)",
    );
    expect(r.text.length).toBe(200 * gz.length);
    const zr = await run(zstdRawFrame(Buffer.alloc(4 * 1024 * 1024, 0x41)), 1 << 20, { ratio: 0.5, floor: 1024 * 1024 });
    expect(zr.why).toBe(
      "stopped after 1 MiB decompressed, more than 0.5 times its compressed size (taken for a zip bomb); the rest is not read (a real log: zstd -dc FILE | ringwatch analyze -)",
    );
    expect(zr.text.length).toBe(1024 * 1024);
  });

  it("stops when no more is wanted, and says when data is cut short or corrupt", async () => {
    expect((await run(gzipSync(LOG), 4096, undefined, 1)).why).toBeUndefined();
    const gz = gzipSync(LOG);
    const cut = await run(gz.subarray(0, gz.length - 100), 4096);
    expect(cut.why).toMatch(/^gzip data cut short after \d+ decompressed bytes; what came before is read$/);
    expect(LOG.subarray(0, cut.text.length).equals(cut.text)).toBe(true);
    const bad = Buffer.from(gz);
    bad.fill(0xff, 100, 200);
    expect((await run(bad, 4096)).why).toMatch(/^gzip data corrupt \(Z_DATA_ERROR\) after \d+ decompressed bytes/);
    const z = zstdRawFrame(LOG);
    expect((await run(z.subarray(0, z.length - 10), 4096)).why).toMatch(/^zstd data cut short after \d+ decompressed bytes/);
  });

  it("refuses a zstd window above 128 MiB (zstd's own default), before allocating it", async () => {
    expect(zstdWindow(zstdRawFrame(LOG, 20))).toBe(1024 * 1024);
    const big = zstdRawFrame(LOG, 31);
    expect(zstdWindow(big)).toBe(2 ** 31);
    expect((await run(big, 4096)).why).toBe(
      "zstd window of 2048 MiB is more than the 128 MiB analyze reads (compressed with --long?); decompress it first: zstd -d --long=31",
    );
  });

  it("tells what is no log by its first bytes", () => {
    const tar = Buffer.alloc(1024);
    tar.write("ustar", 257, "latin1");
    expect(
      [
        tar,
        Buffer.from("PK\x03\x04rest", "latin1"),
        Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 1]),
        Buffer.from("BZh91AY&SY", "latin1"),
        Buffer.from("\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\x10\x1a\0\0\0\0\0\0@\0\0\0", "latin1"),
        Buffer.from("# HELP x_total Things.\n# TYPE x_total counter\nx_total 3\n"),
        Buffer.from('# TYPE x gauge\nx{a="1"} 3\n'),
        Buffer.concat([Buffer.alloc(100), Buffer.from("after copytruncate\n")]),
        Buffer.alloc(100),
        Buffer.from("a log line with a stray \0 NUL and a latin1 \xe9 byte\n", "latin1"),
        Buffer.from("\0"),
        Buffer.from("# HELP is what I need: NCCL WARN x\nsome log\n"),
        Buffer.from("# TYPE x gauge\nNCCL INFO a line\n"),
      ].map((b) => notALog(b) ?? ""),
    ).toEqual([
      "a tar archive, not a log (unpack it first: tar -xf)",
      "a zip archive, not a log (unpack it first: unzip)",
      "xz-compressed (decompress it first: xz -d)",
      "bzip2-compressed (decompress it first: bzip2 -d)",
      "binary, not a log",
      "a Prometheus metrics scrape, not a log",
      "a Prometheus metrics scrape, not a log",
      "",
      "",
      "",
      "",
      "",
      "",
    ]);
  });
});
