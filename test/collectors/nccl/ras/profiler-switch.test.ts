/** ProfilerSwitch: on once per episode, off after the window or the hang, a failed off retried each interval. */
import { describe, expect, it } from "vitest";
import { ProfilerSwitch } from "../../../../collectors/nccl/ras/profiler-switch.js";

const I = 30_000;

describe("ProfilerSwitch", () => {
  it("on when a hang begins (only where the node may ask), once per episode; off after the window", () => {
    const p = new ProfilerSwitch(60_000);
    expect(p.due(0, true)).toBeUndefined();
    p.setHang(true);
    expect(p.due(0, false)).toBeUndefined();
    expect(p.due(0, true)).toBe("on");
    p.answered("on", true, 100, I);
    expect(p.isOn).toBe(true);
    expect(p.due(60_099, true)).toBeUndefined();
    expect(p.due(60_100, false)).toBe("off"); // off does not need the querier role
    p.answered("off", true, 60_100, I);
    expect(p.isOn).toBe(false);
    expect(p.due(100_000, true)).toBeUndefined(); // the same episode: not on again
  });

  it("a refused on is not tried again in that episode; the hang's end switches off at once", () => {
    const p = new ProfilerSwitch(60_000);
    p.setHang(true);
    p.answered("on", false, 0, I);
    expect(p.due(1, true)).toBeUndefined();
    p.setHang(false);
    p.setHang(true);
    expect(p.due(2, true)).toBe("on");
    p.answered("on", true, 2, I);
    p.setHang(false);
    expect(p.due(3, true)).toBe("off");
  });

  it("an off that fails is sent again an interval later, until confirmed", () => {
    const p = new ProfilerSwitch(60_000);
    p.setHang(true);
    p.answered("on", true, 0, I);
    p.setHang(false);
    p.answered("off", false, 10, I);
    expect(p.isOn).toBe(true);
    expect(p.due(10 + I - 1, true)).toBeUndefined();
    expect(p.due(10 + I, false)).toBe("off");
    p.answered("off", false, 10 + I, I);
    expect(p.due(10 + 2 * I, false)).toBe("off");
    p.answered("off", true, 10 + 2 * I, I);
    expect(p.isOn).toBe(false);
    expect(p.due(10 + 3 * I, true)).toBeUndefined();
  });

  it("the job gone: nothing left to switch off", () => {
    const p = new ProfilerSwitch(60_000);
    p.setHang(true);
    p.answered("on", true, 0, I);
    p.jobGone();
    expect(p.isOn).toBe(false);
    expect(p.due(100_000, true)).toBeUndefined();
  });
});
