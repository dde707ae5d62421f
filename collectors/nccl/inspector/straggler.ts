/**
 * Straggler from GPU-timed execution times. Inside a collective's kernel a rank waits for the
 * others: the rank that arrives last waits least, so its execution time is the shortest, and the
 * others' are longer by about how late it came. Over the collectives that every active local rank
 * reported (OpWindow rows), per rank: how often it was the strictly shortest, and the median of
 * (median of the other ranks' times - its time). A rank is the straggler when it was shortest in
 * at least `share` of at least `minCommon` collectives and that median is at least
 * `minDelaySeconds`. In a healthy job the last to arrive changes from one collective to the next,
 * so no rank reaches the share; two ranks late together split it and neither is named.
 *
 * Only the ranks in this node's files are compared: see README.md ("What one node can tell").
 */
import type { OpWindow } from "./op-window.js";
import { medianInPlace } from "./ring.js";
import type { StragglerOptions, StragglerVerdict } from "./types.js";

export interface RankComparison {
  /** Rows compared. */
  common: number;
  /** Per active slot (in the order given): median delay (s; NaN under minCommon) and shortest share. */
  delaySeconds: Float64Array;
  share: Float64Array;
  /** Index into the given slots of the straggler, or -1. */
  straggler: number;
}

/**
 * Compares the given slots (columns) over every row of `windows` in which all of them reported.
 * Fewer than two slots: nothing to compare.
 */
export function compareRanks(windows: readonly OpWindow[], slots: readonly number[], opts: StragglerOptions): RankComparison {
  const k = slots.length;
  const delaySeconds = new Float64Array(k).fill(NaN);
  const share = new Float64Array(k).fill(NaN);
  const out: RankComparison = { common: 0, delaySeconds, share, straggler: -1 };
  if (k < 2) return out;
  let rows = 0;
  for (const w of windows) rows += w.size;
  // diffs[j * rows + r]: slot j's (others' median - its time) in compared row r, µs.
  const diffs = new Float64Array(k * rows);
  const shortest = new Float64Array(k);
  const v = new Float64Array(k);
  const order = new Int32Array(k);
  let common = 0;
  for (const w of windows) {
    for (let i = 0; i < w.size; i++) {
      if ((w.seqs[i] as number) < 0) continue;
      const base = i * w.stride;
      let complete = true;
      for (let j = 0; j < k; j++) {
        const x = w.vals[base + (slots[j] as number)] as number;
        if (Number.isNaN(x)) {
          complete = false;
          break;
        }
        v[j] = x;
      }
      if (!complete) continue;
      sortIndexes(v, order);
      const o0 = order[0] as number;
      if ((v[o0] as number) < (v[order[1] as number] as number)) shortest[o0] = (shortest[o0] as number) + 1;
      for (let p = 0; p < k; p++) {
        const j = order[p] as number;
        diffs[j * rows + common] = othersMedian(v, order, p) - (v[j] as number);
      }
      common++;
    }
  }
  out.common = common;
  if (common === 0) return out;
  let best = -1;
  for (let j = 0; j < k; j++) {
    share[j] = (shortest[j] as number) / common;
    if (common >= opts.minCommon) delaySeconds[j] = medianInPlace(diffs.subarray(j * rows, j * rows + common), common) / 1e6;
    if (best < 0 || (share[j] as number) > (share[best] as number)) best = j;
  }
  if (common >= opts.minCommon && (share[best] as number) >= opts.share && (delaySeconds[best] as number) >= opts.minDelaySeconds) out.straggler = best;
  return out;
}

/** The verdict for slot index `s` of a comparison, with its rank. */
export function verdictOf(c: RankComparison, rank: number): StragglerVerdict {
  return { rank, delaySeconds: c.delaySeconds[c.straggler] as number, share: c.share[c.straggler] as number, common: c.common };
}

/** order := indexes of v sorted by value (insertion sort: k is a node's ranks, at most a few dozen). */
function sortIndexes(v: Float64Array, order: Int32Array): void {
  const k = v.length;
  for (let a = 0; a < k; a++) {
    let b = a;
    const x = v[a] as number;
    while (b > 0 && (v[order[b - 1] as number] as number) > x) {
      order[b] = order[b - 1] as number;
      b--;
    }
    order[b] = a;
  }
}

/** Median of the values other than the one at sorted position p (v sorted through order). */
function othersMedian(v: Float64Array, order: Int32Array, p: number): number {
  const n = v.length - 1;
  const at = (q: number): number => v[order[q < p ? q : q + 1] as number] as number;
  const m = n >> 1;
  return n % 2 === 1 ? at(m) : (at(m - 1) + at(m)) / 2;
}
