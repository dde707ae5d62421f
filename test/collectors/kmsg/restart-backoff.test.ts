/** When a failed kmsg source is tried again: one pending restart, delays doubling 1 s to 60 s, reset once it reads. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RestartBackoff } from "../../../collectors/kmsg/restart-backoff.js";

describe("RestartBackoff", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => void vi.useRealTimers());

  /** Schedules `n` restarts, each after the last one ran; returns how long each waited. */
  async function restarts(b: RestartBackoff, n: number): Promise<number[]> {
    const waited: number[] = [];
    for (let i = 0; i < n; i++) {
      const from = Date.now();
      b.schedule(() => waited.push(Date.now() - from));
      await vi.advanceTimersByTimeAsync(60_000);
    }
    return waited;
  }

  it("doubles the delay at each restart up to the cap", async () => {
    const b = new RestartBackoff(1000, 60_000);
    expect(await restarts(b, 9)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  });

  it("keeps one restart pending: a second schedule() before it ran changes nothing", async () => {
    const b = new RestartBackoff(1000, 60_000);
    const ran: string[] = [];
    b.schedule(() => ran.push("first"));
    b.schedule(() => ran.push("second"));
    expect(b.nextDelayMs).toBe(2000);
    await vi.advanceTimersByTimeAsync(999);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(["first"]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ran).toEqual(["first"]);
  });

  it("goes back to the first delay after reset()", async () => {
    const b = new RestartBackoff(1000, 60_000);
    expect(await restarts(b, 3)).toEqual([1000, 2000, 4000]);
    b.reset();
    expect(b.nextDelayMs).toBe(1000);
    expect(await restarts(b, 2)).toEqual([1000, 2000]);
  });

  it("runs nothing after cancel()", async () => {
    const b = new RestartBackoff(1000, 60_000);
    let ran = false;
    b.schedule(() => (ran = true));
    b.cancel();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(ran).toBe(false);
  });
});
