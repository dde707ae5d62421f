import { describe, expect, it } from "vitest";
import { SteadyClock } from "../../agent/steady-clock.js";

/** A wall and a monotonic clock the test moves: the steps a real system clock takes. */
class Clocks {
  wallMs = 1_800_000_000_000;
  monoMs = 5_000;
  tick(ms: number): void {
    this.wallMs += ms;
    this.monoMs += ms;
  }
  readonly src = { wall: () => this.wallMs, mono: () => this.monoMs };
}

describe("SteadyClock", () => {
  it("follows the wall clock while it does not step", () => {
    const c = new Clocks();
    const clock = new SteadyClock(c.src);
    for (let i = 0; i < 100; i++) {
      c.tick(500);
      expect(clock.now()).toBe(c.wallMs);
    }
  });

  it("a step back of an hour does not stop time: 90 s of silence still read 90 s", () => {
    const c = new Clocks();
    const clock = new SteadyClock(c.src);
    c.tick(1000);
    const lastLine = clock.now();
    c.tick(6000);
    c.wallMs -= 3_600_000; // 6 s into the stall the clock is set back an hour
    for (let s = 0; s < 84; s++) {
      c.tick(1000);
      clock.now();
    }
    const silence = clock.now() - lastLine;
    expect(silence).toBeGreaterThan(90_000 * 0.99);
    expect(silence).toBeLessThanOrEqual(90_000);
  });

  it("a step forward of an hour fakes no silence", () => {
    const c = new Clocks();
    const clock = new SteadyClock(c.src);
    const before = clock.now();
    c.tick(2000);
    c.wallMs += 3_600_000;
    expect(clock.now() - before).toBe(2000);
  });

  it("bleeds the skew off at 1 % of the elapsed time until it agrees with the wall clock again", () => {
    const c = new Clocks();
    const clock = new SteadyClock(c.src);
    c.tick(1000);
    c.wallMs -= 60_000;
    clock.now();
    expect(clock.skewMs).toBe(-60_000);
    for (let i = 0; i < 50; i++) {
      c.tick(100_000); // 5,000 s: 1 % of it is 50 s of the 60 s skew
      clock.now();
    }
    expect(clock.skewMs).toBeCloseTo(-10_000, 0);
    for (let i = 0; i < 20; i++) {
      c.tick(100_000);
      clock.now();
    }
    expect(clock.skewMs).toBe(0);
    expect(clock.now()).toBe(c.wallMs);
  });

  it("never goes backwards, whatever the sources do", () => {
    const c = new Clocks();
    const clock = new SteadyClock(c.src);
    let prev = clock.now();
    for (let i = 0; i < 200; i++) {
      c.tick(i % 7 === 0 ? 0 : 37);
      if (i % 13 === 0) c.wallMs -= 5_000;
      if (i % 17 === 0) c.wallMs += 9_000;
      const t = clock.now();
      expect(t).toBeGreaterThanOrEqual(prev);
      prev = t;
    }
  });
});
