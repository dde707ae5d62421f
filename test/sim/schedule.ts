/**
 * Simulated time: init takes `initMs`, then steps follow back to back. A step lasts `stepMs`
 * (or slowButMoving's `stepMs`) with seeded jitter, plus the largest straggler delay. Inside a
 * step the k-th of K collectives is enqueued at 15 % + 75 % * k/K of the step, plus a 0-3 ms
 * per-rank skew; a straggler adds its delay. All times are integer ms since job start.
 */
import type { Fault } from "./faults.js";
import { unit } from "./rng.js";
import type { ResolvedSpec } from "./spec.js";

export class Schedule {
  private readonly starts: number[] = [];
  private readonly slow: { stepMs: number; fromStep: number } | undefined;
  private readonly delays = new Map<number, number>();
  private readonly maxDelay: number;

  constructor(
    private readonly spec: ResolvedSpec,
    faults: Fault[],
  ) {
    for (const f of faults) {
      if (f.type === "straggler") this.delays.set(f.rank, Math.max(f.delayMs, this.delays.get(f.rank) ?? 0));
      if (f.type === "slowButMoving") this.slow = { stepMs: f.stepMs, fromStep: f.fromStep };
    }
    this.maxDelay = Math.max(0, ...this.delays.values());
    this.starts.push(spec.initMs);
  }

  /** Nominal (un-jittered) length of step s without straggler delay. */
  baseMs(s: number): number {
    return this.slow !== undefined && s >= this.slow.fromStep ? this.slow.stepMs : this.spec.stepMs;
  }

  durationMs(s: number): number {
    const j = this.spec.jitter * (2 * unit(this.spec.seed, 101, s) - 1);
    return Math.max(1, Math.round(this.baseMs(s) * (1 + j))) + this.maxDelay;
  }

  stepStart(s: number): number {
    while (this.starts.length <= s) {
      const i = this.starts.length - 1;
      this.starts.push((this.starts[i] ?? 0) + this.durationMs(i));
    }
    return this.starts[s] ?? 0;
  }

  /** Index of the step running at time t (-1 during init). */
  stepAt(t: number): number {
    if (t < this.spec.initMs) return -1;
    let s = 0;
    while (this.stepStart(s + 1) <= t) s++;
    return s;
  }

  delayOf(rank: number): number {
    return this.delays.get(rank) ?? 0;
  }

  /** When `rank` enqueues collective k of K in step s. */
  collTime(rank: number, s: number, k: number, K: number): number {
    const start = this.stepStart(s);
    const span = this.durationMs(s) - this.maxDelay;
    const skew = Math.floor(unit(this.spec.seed, 202, rank, s, k) * 3);
    const t = start + Math.floor(span * (0.15 + (0.75 * k) / Math.max(1, K))) + skew + this.delayOf(rank);
    return Math.min(t, this.stepStart(s + 1) - 1);
  }
}
