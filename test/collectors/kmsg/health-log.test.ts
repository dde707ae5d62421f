/**
 * The kmsg collector's health and its log lines: one line per new failure (info when absent, warn
 * otherwise), none while the same one repeats, again after a healthy spell; lastSuccessMs once read.
 */
import { describe, expect, it } from "vitest";
import { HealthLog } from "../../../collectors/kmsg/health-log.js";
import { memoryLogger } from "../../helpers/memory-logger.js";

describe("HealthLog", () => {
  it("starts as starting, with no time of a read", () => {
    const h = new HealthLog(memoryLogger().logger);
    expect(h.ok).toBe(false);
    expect(h.health()).toEqual({ ok: false, starting: true, reason: "starting" });
  });

  it("logs a failure once while it repeats, a different one at once, and the same one again after being healthy", () => {
    const { logger, lines } = memoryLogger();
    const h = new HealthLog(logger);
    h.set({ ok: false, reason: "journalctl refused" });
    h.set({ ok: false, reason: "journalctl refused" });
    h.set({ ok: false, reason: "journalctl refused" });
    expect(lines().map((l) => [l["level"], l["msg"]])).toEqual([[40, "kmsg: journalctl refused"]]);
    h.set({ ok: false, reason: "journalctl exited" });
    h.set({ ok: true });
    expect(h.ok).toBe(true);
    h.set({ ok: false, reason: "journalctl exited" });
    expect(lines().map((l) => l["msg"])).toEqual(["kmsg: journalctl refused", "kmsg: journalctl exited", "kmsg: journalctl exited"]);
  });

  it("logs an absent source at info, and nothing while starting", () => {
    const { logger, lines } = memoryLogger();
    const h = new HealthLog(logger);
    h.set({ ok: false, starting: true, reason: "starting" });
    h.set({ ok: false, absent: true, reason: "cannot open /dev/kmsg: ENOENT" });
    h.set({ ok: false });
    expect(lines().map((l) => [l["level"], l["msg"]])).toEqual([
      [30, "kmsg: cannot open /dev/kmsg: ENOENT"],
      [40, "kmsg: failed"],
    ]);
    expect(h.health()).toEqual({ ok: false });
  });

  it("adds when the source was last read to the health as set", () => {
    const h = new HealthLog(memoryLogger().logger);
    h.set({ ok: true });
    h.read(1_000);
    h.read(2_500);
    expect(h.health()).toEqual({ ok: true, lastSuccessMs: 2_500 });
    h.set({ ok: false, reason: "reading /dev/kmsg failed: EIO: i/o error" });
    expect(h.health()).toEqual({ ok: false, reason: "reading /dev/kmsg failed: EIO: i/o error", lastSuccessMs: 2_500 });
  });
});
