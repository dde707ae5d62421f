/**
 * Bandwidth drop, per rank and per series (one collective type, one power-of-two size class): the
 * median bus bandwidth of the last `recent` records against the median of up to `baseline`
 * records before them. Below `ratio` x baseline the series has dropped; while it has, records
 * leaving the recent window are not added to the baseline, so a lasting drop stays a drop instead
 * of becoming the new normal (it ends when the bandwidth comes back, or with the communicator).
 * The communicator-level flag (comm-state.ts) needs more than half of its local ranks to agree.
 */
import { Ring } from "./ring.js";
import type { BandwidthOptions } from "./types.js";

/** The baseline's median is recomputed after this many additions (it moves slowly). */
const BASELINE_REFRESH = 8;

export class BwSeries {
  private readonly recent: Ring;
  private readonly baseline: Ring;
  private baselineMedian = NaN;
  private sinceRefresh = 0;
  dropped = false;
  /** Medians at the last push (bytes/s), for the snapshot. */
  recentMedian = NaN;

  constructor(private readonly opts: BandwidthOptions) {
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

  push(busBw: number): void {
    const out = this.recent.push(busBw);
    if (!Number.isNaN(out) && !this.dropped) {
      this.baseline.push(out);
      if (++this.sinceRefresh >= BASELINE_REFRESH || Number.isNaN(this.baselineMedian)) {
        this.baselineMedian = this.baseline.median();
        this.sinceRefresh = 0;
      }
    }
    if (!this.compared) {
      this.dropped = false;
      return;
    }
    if (this.sinceRefresh > 0 && this.baseline.size < this.opts.baseline) {
      // While the baseline fills, keep its median exact.
      this.baselineMedian = this.baseline.median();
      this.sinceRefresh = 0;
    }
    this.recentMedian = this.recent.median();
    this.dropped = this.recentMedian < this.opts.ratio * this.baselineMedian;
  }
}
