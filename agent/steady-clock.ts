/**
 * The agent's clock: Unix milliseconds that never step. Silence is what ringwatch measures (a
 * communicator quiet past its threshold), and a step of the system clock (`date -s`, `chronyc
 * makestep`, a VM resumed) would otherwise fake a silence (forward) or hide one for as long as the
 * step (backward: an hour back made an hour-long hang invisible). So the clock advances with the
 * monotonic clock (performance.now(), which NTP slews but never steps); a step of the wall clock
 * becomes a skew, which is then bled off at BLEED of the elapsed time until the two agree again
 * (a 1 h step in 100 h; durations meanwhile read at most 1 % long or short). Timestamps ringwatch
 * publishes follow the wall clock as closely as that allows.
 */
import { performance } from "node:perf_hooks";

/** Wall-clock moves that differ from the monotonic clock by more than this count as a step. */
const STEP_MS = 1000;
/** Share of elapsed time by which a skew is corrected. */
const BLEED = 0.01;

export interface ClockSources {
  wall(): number;
  mono(): number;
}

const SYSTEM: ClockSources = { wall: () => Date.now(), mono: () => performance.now() };

export class SteadyClock {
  private lastWall: number;
  private lastMono: number;
  /** wall - steady: what the steps added up to, less what was bled off. */
  private skew = 0;
  private last: number;

  constructor(private readonly src: ClockSources = SYSTEM) {
    this.lastWall = src.wall();
    this.lastMono = src.mono();
    this.last = this.lastWall;
  }

  /** Unix ms: monotonic, within `skew` of the wall clock. */
  readonly now = (): number => {
    const wall = this.src.wall();
    const mono = this.src.mono();
    const monoDelta = Math.max(0, mono - this.lastMono);
    // The skew of before this call is bled off over the time elapsed; a step seen now is added after.
    this.skew -= Math.sign(this.skew) * Math.min(Math.abs(this.skew), monoDelta * BLEED);
    const stepped = wall - this.lastWall - monoDelta;
    if (Math.abs(stepped) > STEP_MS) this.skew += stepped;
    this.lastWall = wall;
    this.lastMono = mono;
    this.last = Math.max(this.last, wall - this.skew);
    return this.last;
  };

  /** How far the wall clock is from this one (ms): the steps not yet bled off. */
  get skewMs(): number {
    return this.skew;
  }
}
