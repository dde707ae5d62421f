/**
 * Who is behind, from NCCL RAS's operation counts. NCCL 2.26+ counts each collective type apart
 * (AllReduce, AllGather, ...), so counts are compared within a type only: the ranks at a lower count
 * of some type never launched the collectives the others launched. A rank that launched more of any
 * type is never behind: it went further, or down another code path (then the ranks issued different
 * collectives, a mismatch). The text report lists the ranks of outlier groups only; the JSON lists
 * every rank, and the same rule holds for both.
 *
 * Example (a real hang, NCCL 2.28.9): rank 0 at AllReduce 61 and AllGather 13, rank 1 at AllReduce 60
 * and AllGather 12: rank 1 is behind in both types and ahead in none, so rank 1 alone is behind.
 */
import type { RasCommRanks, RasGroup, RasOpMismatch, RasRank } from "./parse-text.js";

/** One collective type whose counts differ. */
export interface OpSpread {
  op: string;
  /** The highest count: the collective the others wait in. */
  top: number;
  /** The lowest count. */
  low: number;
  /** Ranks below the top (listed or not). */
  below: number;
  /** Ranks at the top. */
  atTop: number;
  /** `1 at #60, 1 at #61`, lowest first. */
  counts: string;
}

export interface CountSplit {
  /** Ranks at a lower count of some type and a higher count of none: they never entered the collective the others wait in. */
  behind: RasRank[];
  /** Ranks at a higher count of some type (never behind). */
  ahead: RasRank[];
  /** Ranks both below the top of one type and above the low of another: different code paths. */
  crossed: RasRank[];
  /** Ranks below the top of some type that the report does not list (NCCL lists outlier groups only). */
  unlistedBelow: number;
  ops: OpSpread[];
}

const MAX_LISTED = 1_000;

interface RankMark {
  r: RasRank;
  lower: boolean;
  higher: boolean;
}

function spreadOf(op: string, groups: readonly RasGroup[]): { spread: OpSpread; sorted: RasGroup[] } | undefined {
  const sorted = groups.filter((g) => g.opCount !== undefined).sort((a, b) => (a.opCount as number) - (b.opCount as number));
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first === undefined || last === undefined || first.opCount === last.opCount) return undefined;
  const top = last.opCount as number;
  let below = 0;
  let atTop = 0;
  for (const g of sorted) {
    if ((g.opCount as number) < top) below += g.count;
    else atTop += g.count;
  }
  return {
    spread: { op, top, low: first.opCount as number, below, atTop, counts: sorted.map((g) => `${g.count} at #${g.opCount as number}`).join(", ") },
    sorted,
  };
}

/** The split of one communicator's count blocks, or undefined when no type's counts differ. */
export function splitCounts(blocks: readonly RasOpMismatch[]): CountSplit | undefined {
  const marks = new Map<number, RankMark>();
  const mark = (r: RasRank): RankMark => {
    let m = marks.get(r.rank);
    if (m === undefined) {
      m = { r, lower: false, higher: false };
      if (marks.size < MAX_LISTED) marks.set(r.rank, m);
    } else if (m.r.pid === undefined && r.pid !== undefined) m.r = r;
    return m;
  };
  const ops: OpSpread[] = [];
  let unlistedBelow = 0;
  for (const b of blocks) {
    const s = spreadOf(b.op, b.groups);
    if (s === undefined) continue;
    ops.push(s.spread);
    for (const g of s.sorted) {
      const c = g.opCount as number;
      for (const r of g.ranks) {
        const m = mark(r);
        if (c < s.spread.top) m.lower = true;
        if (c > s.spread.low) m.higher = true;
      }
      if (c < s.spread.top) unlistedBelow = Math.max(unlistedBelow, g.count - g.ranks.length);
    }
  }
  if (ops.length === 0) return undefined;
  const all = [...marks.values()].sort((a, b) => a.r.rank - b.r.rank);
  return {
    behind: all.filter((m) => m.lower && !m.higher).map((m) => m.r),
    ahead: all.filter((m) => m.higher && !m.lower).map((m) => m.r),
    crossed: all.filter((m) => m.higher && m.lower).map((m) => m.r),
    unlistedBelow,
    ops,
  };
}

/** Count blocks of a communicator from every rank's counts (JSON): one block per type whose counts differ, every rank listed. */
export function blocksOfRanks(c: RasCommRanks): RasOpMismatch[] {
  const byOp = new Map<string, Map<number, RasRank[]>>();
  for (const r of c.ranks) {
    for (const [op, n] of r.counts) {
      let groups = byOp.get(op);
      if (groups === undefined) byOp.set(op, (groups = new Map<number, RasRank[]>()));
      const g = groups.get(n);
      if (g === undefined) groups.set(n, [r]);
      else g.push(r);
    }
  }
  const out: RasOpMismatch[] = [];
  for (const [op, groups] of byOp) {
    if (groups.size < 2) continue;
    out.push({ op, groups: [...groups].map(([opCount, ranks]): RasGroup => ({ count: ranks.length, opCount, ranks })) });
  }
  return out;
}
