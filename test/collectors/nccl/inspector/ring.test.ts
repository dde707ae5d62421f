/** The bounded pieces under the feed: Ring and its quickselect median, size buckets, a rank's series limit. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RankState } from "../../../../collectors/nccl/inspector/rank-state.js";
import { medianInPlace, Ring } from "../../../../collectors/nccl/inspector/ring.js";
import { sizeBucket, sizeClass } from "../../../../collectors/nccl/inspector/size-bucket.js";
import { DEFAULT_BANDWIDTH, DEFAULT_LIMITS, type InspectorRecord } from "../../../../collectors/nccl/inspector/types.js";

function sortedMedian(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

describe("Ring and medianInPlace", () => {
  it("medianInPlace equals the sorted median, duplicates and all (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ min: -1e9, max: 1e9, noNaN: true })), { minLength: 1, maxLength: 300 }),
        (xs) => {
          expect(medianInPlace(Float64Array.from(xs), xs.length)).toBe(sortedMedian(xs));
        },
      ),
      { numRuns: 2000, seed: 11 },
    );
  });

  it("keeps the last `capacity` values and returns what it pushes out", () => {
    const r = new Ring(4);
    expect(r.median()).toBeNaN();
    const out = [1, 2, 3, 4, 5, 6].map((v) => r.push(v));
    expect(out.slice(0, 4).every(Number.isNaN)).toBe(true);
    expect(out.slice(4)).toEqual([1, 2]);
    expect(r.size).toBe(4);
    expect(r.median()).toBe(4.5); // 3 4 5 6
    r.push(100);
    expect(r.median()).toBe(5.5); // 4 5 6 100
  });
});

describe("size buckets and classes", () => {
  it("five buckets at 64 KiB, 1 MiB, 16 MiB, 256 MiB; classes are powers of two", () => {
    expect([0, 65535, 65536, 2 ** 20 - 1, 2 ** 20, 16 * 2 ** 20, 256 * 2 ** 20 - 1, 2 ** 40].map(sizeBucket)).toEqual([
      "lt_64KiB",
      "lt_64KiB",
      "64KiB_1MiB",
      "64KiB_1MiB",
      "1MiB_16MiB",
      "16MiB_256MiB",
      "16MiB_256MiB",
      "ge_256MiB",
    ]);
    expect([0, 1, 3, 4096, 6000, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 3 * 2 ** 40, Number.MAX_SAFE_INTEGER].map(sizeClass)).toEqual([
      0,
      1,
      2,
      4096,
      4096,
      2 ** 31,
      2 ** 31,
      2 ** 32,
      2 ** 41,
      2 ** 52,
    ]);
  });
});

describe("RankState", () => {
  it("keeps at most maxBwSeriesPerRank bandwidth series, dropping the least recently used", () => {
    const r = new RankState(0, 0, DEFAULT_LIMITS, DEFAULT_BANDWIDTH);
    const rec = (seq: number, bytes: number): InspectorRecord => ({
      kind: "coll",
      commId: "0x1",
      rank: 0,
      nranks: 2,
      op: "AllReduce",
      seq,
      msgBytes: bytes,
      execSeconds: 1e-3,
      busBwBytesPerSecond: 1e9,
    });
    let seq = 0;
    for (let k = 10; k < 30; k++) {
      r.seen("AllReduce", seq);
      r.addTimed(rec(seq++, 2 ** k), 0);
    }
    // Class 2^10 again: it is the most recent now, and 2^22 (the oldest left) goes.
    r.seen("AllReduce", seq);
    r.addTimed(rec(seq++, 2 ** 10), 0);
    expect([...r.bwSeries()].map((s) => Math.log2(s.sizeClassBytes)).sort((a, b) => a - b)).toEqual([10, 23, 24, 25, 26, 27, 28, 29]);
  });
});
