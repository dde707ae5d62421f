/**
 * Fuzz: the log line splitter (collectors/follow/line-splitter.ts). Any byte stream cut into
 * any chunks, handed over in reused buffers with stale bytes around them, gives exactly the lines
 * (and the too-long count) of a reference split of the whole stream; no line is longer than the
 * cap and the splitter never holds more than cap + 1 bytes of a partial line.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../collectors/follow/line-splitter.js";
import { RUNS } from "./mutate.js";

/** Byte fragments that matter to a splitter: newlines, CR, NUL, invalid and multi-byte UTF-8. */
const FRAGMENTS: readonly number[][] = [
  [0x61],
  [0x62, 0x63],
  [0x20],
  [0x0a],
  [0x0a],
  [0x0d],
  [0x0d, 0x0a],
  [0x00],
  [0xff],
  [0xc3, 0xa9],
  [0xc3],
  [0xa9],
  [0xe2, 0x94, 0x82],
  [0xf0, 0x9f, 0x98, 0x80],
  [0xed, 0xa0, 0x80], // the last one: a UTF-8-encoded lone surrogate (invalid)
];

const streamArb = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.array(fc.nat(255), { maxLength: 6 })), { maxLength: 120 })
  .map((parts) => Buffer.from(parts.flat()));

/** The lines of the whole stream, decided all at once. */
function reference(stream: Buffer, max: number): { lines: string[]; tooLong: number } {
  const lines: string[] = [];
  let tooLong = 0;
  let i = 0;
  for (;;) {
    const nl = stream.indexOf(10, i);
    if (nl < 0) break;
    let e = nl;
    if (e > i && stream[e - 1] === 13) e--;
    if (e - i > max) tooLong++;
    else lines.push(stream.toString("utf8", i, e));
    i = nl + 1;
  }
  // An incomplete last line is given up (and counted) as soon as it cannot fit any more.
  if (stream.length - i > max + 1) tooLong++;
  return { lines, tooLong };
}

/** Cut points (sorted, unique) in [0, n]. */
function cuts(n: number, raw: readonly number[]): number[] {
  return [...new Set(raw.map((c) => c % (n + 1)))].sort((a, b) => a - b);
}

function pendingBytes(s: LineSplitter): number {
  return (s as unknown as { pending: Buffer | null }).pending?.length ?? 0;
}

/** Feeds `stream` cut at `at`, each chunk copied into a larger buffer full of stale bytes. */
function chunked(s: LineSplitter, stream: Buffer, at: readonly number[], stale: number, offset: number, max: number): string[] {
  const out: string[] = [];
  let prev = 0;
  for (const c of [...at, stream.length]) {
    const chunk = stream.subarray(prev, c);
    const big = Buffer.alloc(offset + chunk.length + 8, stale);
    chunk.copy(big, offset);
    s.push(big, offset, offset + chunk.length, out);
    expect(pendingBytes(s)).toBeLessThanOrEqual(max + 1);
    prev = c;
  }
  return out;
}

describe("fuzz: line splitter", () => {
  it("any chunking of any byte stream gives the reference lines and too-long count", () => {
    fc.assert(
      fc.property(
        streamArb,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 24 }),
        fc.constantFrom(0x0a, 0x00, 0x41, 0x0d),
        fc.nat(5),
        (stream, raw, max, stale, offset) => {
          const want = reference(stream, max);
          const s = new LineSplitter(max);
          const got = chunked(s, stream, cuts(stream.length, raw), stale, offset, max);
          expect(got).toEqual(want.lines);
          expect(s.tooLong).toBe(want.tooLong);
          for (const l of got) expect(l.length).toBeLessThanOrEqual(max);
          const whole = new LineSplitter(max);
          const once: string[] = [];
          whole.push(stream, 0, stream.length, once);
          expect(once).toEqual(want.lines);
          expect(whole.tooLong).toBe(want.tooLong);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("skipNul drops the NUL hole before the first data, and only that", () => {
    fc.assert(
      fc.property(fc.nat(9000), streamArb, fc.array(fc.nat(), { maxLength: 6 }), (holes, stream, raw) => {
        const withHole = Buffer.concat([Buffer.alloc(holes), stream]);
        let first = 0;
        while (first < stream.length && stream[first] === 0) first++;
        const want = reference(stream.subarray(first), 64);
        const s = new LineSplitter(64);
        s.skipNul = true;
        expect(chunked(s, withHole, cuts(withHole.length, raw), 0x0a, 0, 64)).toEqual(want.lines);
      }),
      { numRuns: RUNS },
    );
  });

  it("pushTo with a bytes() fast path hands over the same lines, in order, as push", () => {
    const sinkLines = (stream: Buffer, at: readonly number[], accept: readonly boolean[]): { lines: string[]; counted: number } => {
      const s = new LineSplitter(32);
      const lines: string[] = [];
      let k = 0;
      let counted = 0;
      const sink = {
        bytes(buf: Buffer, a: number, e: number): boolean {
          const take = accept[k++ % Math.max(1, accept.length)] ?? false;
          if (take) lines.push(buf.toString("utf8", a, e));
          return take;
        },
        line(text: string): void {
          lines.push(text);
        },
      };
      let prev = 0;
      for (const c of [...at, stream.length]) {
        counted += s.pushTo(stream, prev, c, sink);
        prev = c;
      }
      return { lines, counted };
    };
    fc.assert(
      fc.property(streamArb, fc.array(fc.nat(), { maxLength: 8 }), fc.array(fc.boolean(), { maxLength: 5 }), (stream, raw, accept) => {
        const want = reference(stream, 32).lines;
        const got = sinkLines(stream, cuts(stream.length, raw), accept);
        expect(got.lines).toEqual(want);
        expect(got.counted).toBe(want.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("a 10 MB line in 64 KiB reads is skipped and counted once; the cap holds; the next line comes through", () => {
    const max = 64 * 1024;
    const s = new LineSplitter(max);
    const out: string[] = [];
    const read = Buffer.alloc(64 * 1024, 0x78);
    for (let n = 0; n < 160; n++) {
      s.push(read, 0, read.length, out);
      expect(pendingBytes(s)).toBeLessThanOrEqual(max + 1);
    }
    s.push(Buffer.from("tail\nok\n"), 0, 8, out);
    expect(out).toEqual(["ok"]);
    expect(s.tooLong).toBe(1);
    expect(s.hasPartial()).toBe(false);
  });
});
