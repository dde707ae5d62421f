/**
 * Bandwidth drop, per rank and per series (one collective type, one power-of-two size class): the
 * last `recent` records' bus bandwidth against the median of up to `baseline` records before
 * them. When more than half of the recent ones (so their median) are below `ratio` x that
 * median, the series has dropped: counted per record, not sorted. While it has, records leaving
 * the recent window do not enter the baseline, so a lasting drop stays a drop instead of becoming
 * the new normal; it ends when the bandwidth comes back, or with the communicator. The
 * communicator's flag (comm-state.ts) needs more than half of its local ranks to agree.
 */
import { Ring } from "./ring.js";
import type { BandwidthOptions } from "./types.js";

/** The baseline's median is recomputed after this many additions (it moves slowly). */
const BASELINE_REFRESH = 8;

export class BwSeries {
  /** Recency for the rank's least-recently-used eviction. */
  touched = 0;
  private readonly recent: Ring;
  private readonly baseline: Ring;
  private baselineMedian = NaN;
  private sinceRefresh = 0;
  dropped = false;

  constructor(
    readonly op: string,
    /** Lower bound (bytes) of the power-of-two size class. */
    readonly sizeClassBytes: number,
    private readonly opts: BandwidthOptions,
  ) {
    this.recent = new Ring(opts.recent);
    this.baseline = new Ring(opts.baseline);
  }

  /** Enough data for a verdict. */
  get compared(): boolean {
    return this.recent.full && this.baseline.size >= this.opts.minBaseline;
  }

  get baselineBytesPerSecond(): number {
    return this.baselineMedian;
  }

  /** Median of the recent records (bytes/s), for the snapshot. */
  get recentBytesPerSecond(): number {
    return this.recent.median();
  }

  push(busBw: number): void {
    const out = this.recent.push(busBw);
    if (!Number.isNaN(out) && !this.dropped) {
      this.baseline.push(out);
      // Exact when the baseline first counts, then refreshed every few additions.
      if (++this.sinceRefresh >= BASELINE_REFRESH || this.baseline.size === this.opts.minBaseline) {
        this.baselineMedian = this.baseline.median();
        this.sinceRefresh = 0;
      }
    }
    if (!this.compared) {
      this.dropped = false;
      return;
    }
    this.dropped = 2 * this.recent.countBelow(this.opts.ratio * this.baselineMedian) > this.recent.size;
  }
}
