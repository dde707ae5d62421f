/**
 * One communicator as this node's Inspector files show it: its local ranks (RankState), the
 * recent collectives of each type with every local rank's execution time (OpWindow), and the
 * verdicts made from them (straggler.ts, the bandwidth series of its ranks), evaluated when a
 * snapshot asks and a record came since.
 */
import { OpWindow } from "./op-window.js";
import { MAX_OPS, RankState } from "./rank-state.js";
import { compareRanks, verdictOf, type RankComparison } from "./straggler.js";
import type {
  BandwidthDrop,
  BandwidthOptions,
  InspectorCommSnapshot,
  InspectorLimits,
  InspectorRecord,
  InspectorRankSnapshot,
  StragglerOptions,
} from "./types.js";

interface Evaluation {
  /** Ranks compared, in rank order, and the comparison (indexes into them). */
  ranks: RankState[];
  comparison: RankComparison;
  drops: BandwidthDrop[];
}

export class CommState {
  commName: string | undefined;
  nnodes: number | undefined;
  lastRecordMs = 0;
  /** Time of the last GPU-timed collective of any local rank. */
  lastTimedMs = -Infinity;
  readonly ranks = new Map<number, RankState>();
  private readonly windows = new Map<string, OpWindow>();
  private evaluation: Evaluation | undefined;

  constructor(
    readonly commId: string,
    readonly nranks: number,
    private readonly limits: InspectorLimits,
    /** The owner (uid) of the file that first named it; -1 unknown. */
    readonly owner = -1,
  ) {}

  /** A new local rank in the next free column. */
  addRank(rank: number, bwOpts: BandwidthOptions): RankState {
    const st = new RankState(rank, this.ranks.size, this.limits, bwOpts);
    this.ranks.set(rank, st);
    return st;
  }

  /** A GPU-timed collective of one of its ranks. */
  addTimed(st: RankState, r: InspectorRecord, t: number): void {
    st.addTimed(r, t);
    if (t > this.lastTimedMs) this.lastTimedMs = t;
    this.evaluation = undefined;
    let w = this.windows.get(r.op);
    if (w === undefined) {
      if (this.windows.size >= MAX_OPS) return;
      w = new OpWindow(this.limits.seqWindow, Math.min(this.ranks.size, this.limits.maxRanksPerComm));
      this.windows.set(r.op, w);
    }
    w.set(r.seq, st.slot, Math.round(r.execSeconds * 1e6));
  }

  touch(t: number): void {
    if (t > this.lastRecordMs) this.lastRecordMs = t;
  }

  private evaluate(straggler: StragglerOptions): Evaluation {
    if (this.evaluation !== undefined) return this.evaluation;
    // Ranks with a GPU-timed record lately: a rank whose process is gone stops being waited for.
    const since = this.lastTimedMs - this.limits.activeWithinMs;
    const ranks = [...this.ranks.values()].filter((r) => r.lastTimedMs >= since).sort((a, b) => a.rank - b.rank);
    const comparison = compareRanks(
      [...this.windows.values()],
      ranks.map((r) => r.slot),
      straggler,
    );
    this.evaluation = { ranks, comparison, drops: this.drops(ranks) };
    return this.evaluation;
  }

  /** Series (collective type x size class) where more than half of the compared ranks dropped. */
  private drops(ranks: readonly RankState[]): BandwidthDrop[] {
    const by = new Map<string, { compared: number; dropped: number; recent: number[]; baseline: number[] }>();
    for (const r of ranks) {
      for (const s of r.bwSeries()) {
        if (!s.compared) continue;
        const key = `${s.op}|${s.sizeClassBytes}`;
        let g = by.get(key);
        if (g === undefined) by.set(key, (g = { compared: 0, dropped: 0, recent: [], baseline: [] }));
        g.compared++;
        if (s.dropped) g.dropped++;
        g.recent.push(s.recentBytesPerSecond);
        g.baseline.push(s.baselineBytesPerSecond);
      }
    }
    const out: BandwidthDrop[] = [];
    for (const [key, g] of by) {
      if (g.dropped * 2 <= g.compared) continue;
      const bar = key.lastIndexOf("|");
      out.push({
        op: key.slice(0, bar),
        sizeClassBytes: Number(key.slice(bar + 1)),
        ranksDropped: g.dropped,
        ranksCompared: g.compared,
        recentBytesPerSecond: middle(g.recent),
        baselineBytesPerSecond: middle(g.baseline),
      });
    }
    return out.sort((a, b) => a.op.localeCompare(b.op) || a.sizeClassBytes - b.sizeClassBytes);
  }

  snapshot(now: number, straggler: StragglerOptions): InspectorCommSnapshot {
    const active = now - this.lastRecordMs <= this.limits.activeWithinMs;
    const ev = this.evaluate(straggler);
    const c = ev.comparison;
    const compared = new Map(ev.ranks.map((r, i) => [r.rank, i]));
    const ranks: InspectorRankSnapshot[] = [...this.ranks.values()]
      .sort((a, b) => a.rank - b.rank)
      .map((r) => {
        const m = r.medians();
        const i = compared.get(r.rank);
        const delay = i !== undefined ? (c.delaySeconds[i] as number) : NaN;
        const share = i !== undefined ? (c.share[i] as number) : NaN;
        const snap: InspectorRankSnapshot = {
          rank: r.rank,
          collectives: r.collectives,
          p2p: r.p2p,
          lastRecordMs: r.lastRecordMs,
          busBw: m.busBw,
          straggler: active && i !== undefined && i === c.straggler,
        };
        if (r.hostname !== undefined) snap.hostname = r.hostname;
        if (r.pid !== undefined) snap.pid = r.pid;
        if (r.lastSeq !== undefined) snap.lastSeq = r.lastSeq;
        if (r.lastOp !== undefined) snap.lastOp = r.lastOp;
        if (!Number.isNaN(m.execSeconds)) snap.execSeconds = m.execSeconds;
        if (!Number.isNaN(delay)) snap.delaySeconds = delay;
        if (!Number.isNaN(share)) snap.shortestShare = share;
        return snap;
      });
    const out: InspectorCommSnapshot = {
      commId: this.commId,
      nranks: this.nranks,
      localRanks: this.ranks.size,
      partial: this.nranks > this.ranks.size,
      lastRecordMs: this.lastRecordMs,
      active,
      ranks,
      commonSeqs: c.common,
      bandwidthDrop: active && ev.drops.length > 0,
      drops: active ? ev.drops : [],
    };
    if (this.commName !== undefined) out.commName = this.commName;
    if (this.nnodes !== undefined) out.nnodes = this.nnodes;
    const s = ev.ranks[c.straggler];
    if (active && s !== undefined) out.straggler = verdictOf(c, s.rank);
    return out;
  }
}

function middle(xs: number[]): number {
  const s = xs.sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}
