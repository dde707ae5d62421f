/**
 * What the feed keeps of one rank of one communicator: counts, the last sequence number per
 * collective type (to drop a record seen twice), the recent execution times and bus bandwidths
 * behind the exported medians, and its bandwidth-drop series. Bounded: statWindow values per ring,
 * five size buckets, maxBwSeriesPerRank series (least recently used evicted), MAX_OPS types.
 */
import { BwSeries } from "./bandwidth.js";
import { Ring } from "./ring.js";
import { SIZE_BUCKETS, sizeBucketIndex, sizeClass } from "./size-bucket.js";
import type { BandwidthOptions, InspectorLimits, InspectorRecord, RankBandwidth } from "./types.js";

/** Collective types tracked per rank (NCCL has ten); records of further ones count but are not compared. */
export const MAX_OPS = 16;

interface OpState {
  lastSeq: number;
  /** Bandwidth-drop series by log2 of the size class. */
  series: Map<number, BwSeries>;
}

export class RankState {
  hostname: string | undefined;
  pid: number | undefined;
  collectives = 0;
  p2p = 0;
  lastSeq: number | undefined;
  lastOp: string | undefined;
  lastRecordMs = 0;
  /** Time of the last GPU-timed collective (the records the detectors use); -Infinity for none. */
  lastTimedMs = -Infinity;
  private readonly ops = new Map<string, OpState>();
  private seriesCount = 0;
  private tick = 0;
  private readonly exec: Ring;
  private readonly bw: (Ring | undefined)[] = SIZE_BUCKETS.map(() => undefined);
  /** Medians as of the last snapshot, recomputed when a record came since. */
  private cache: { execSeconds: number; busBw: RankBandwidth[] } | undefined;

  constructor(
    readonly rank: number,
    readonly slot: number,
    private readonly limits: InspectorLimits,
    private readonly bwOpts: BandwidthOptions,
  ) {
    this.exec = new Ring(limits.statWindow);
  }

  /** True when (op, seq) is not newer than the last seen for op: a record read twice. */
  seen(op: string, seq: number): boolean {
    const o = this.ops.get(op);
    if (o === undefined) {
      if (this.ops.size < MAX_OPS) this.ops.set(op, { lastSeq: seq, series: new Map() });
      return false;
    }
    if (seq <= o.lastSeq) return true;
    o.lastSeq = seq;
    return false;
  }

  /** A GPU-timed collective (seen() has been asked about it). */
  addTimed(r: InspectorRecord, t: number): void {
    this.lastTimedMs = t;
    this.cache = undefined;
    this.exec.push(r.execSeconds);
    const bw = r.busBwBytesPerSecond;
    if (bw === undefined || !(bw > 0)) return;
    const b = sizeBucketIndex(r.msgBytes);
    let ring = this.bw[b];
    if (ring === undefined) this.bw[b] = ring = new Ring(this.limits.statWindow);
    ring.push(bw);
    const o = this.ops.get(r.op);
    if (o === undefined) return;
    const cls = sizeClass(r.msgBytes);
    const key = Math.log2(cls);
    let series = o.series.get(key);
    if (series === undefined) {
      if (this.seriesCount >= this.limits.maxBwSeriesPerRank) this.evictSeries();
      series = new BwSeries(r.op, cls, this.bwOpts);
      o.series.set(key, series);
      this.seriesCount++;
    }
    series.touched = ++this.tick;
    series.push(bw);
  }

  /** Every bandwidth-drop series of the rank. */
  *bwSeries(): Generator<BwSeries> {
    for (const o of this.ops.values()) yield* o.series.values();
  }

  private evictSeries(): void {
    let oldest: { o: OpState; key: number; touched: number } | undefined;
    for (const o of this.ops.values()) {
      for (const [key, s] of o.series) if (oldest === undefined || s.touched < oldest.touched) oldest = { o, key, touched: s.touched };
    }
    if (oldest === undefined) return;
    oldest.o.series.delete(oldest.key);
    this.seriesCount--;
  }

  medians(): { execSeconds: number; busBw: RankBandwidth[] } {
    if (this.cache !== undefined) return this.cache;
    const busBw: RankBandwidth[] = [];
    this.bw.forEach((ring, i) => {
      const m = ring?.median() ?? NaN;
      if (!Number.isNaN(m)) busBw.push({ bucket: SIZE_BUCKETS[i] ?? "lt_64KiB", bytesPerSecond: m });
    });
    this.cache = { execSeconds: this.exec.median(), busBw };
    return this.cache;
  }
}
