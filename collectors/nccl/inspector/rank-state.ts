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
  private readonly lastSeqByOp = new Map<string, number>();
  private readonly exec: Ring;
  private readonly bw: (Ring | undefined)[] = SIZE_BUCKETS.map(() => undefined);
  readonly bwSeries = new Map<string, BwSeries>();
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
    const last = this.lastSeqByOp.get(op);
    if (last !== undefined && seq <= last) return true;
    if (last !== undefined || this.lastSeqByOp.size < MAX_OPS) this.lastSeqByOp.set(op, seq);
    return false;
  }

  /** A GPU-timed collective with its bus bandwidth (bytes/s, > 0) or undefined. */
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
    const key = `${r.op}|${sizeClass(r.msgBytes)}`;
    let series = this.bwSeries.get(key);
    if (series === undefined) {
      if (this.bwSeries.size >= this.limits.maxBwSeriesPerRank) {
        const oldest = this.bwSeries.keys().next().value;
        if (oldest !== undefined) this.bwSeries.delete(oldest);
      }
      series = new BwSeries(this.bwOpts);
    } else {
      this.bwSeries.delete(key); // re-inserted below: most recently used last
    }
    this.bwSeries.set(key, series);
    series.push(bw);
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
