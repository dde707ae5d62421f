/**
 * The gpu collector's health from the dmon child's state, and the one line saying why the child
 * is down: flooded, silent, exited (with nvidia-smi's last failure), or not found.
 */
import { describe, expect, it } from "vitest";
import { DmonStatus, STALE_INTERVALS } from "../../../collectors/gpu/dmon-status.js";
import type { StreamExit } from "../../../collectors/exec.js";
import type { ExitInfo } from "../../../collectors/gpu/supervisor.js";

const EXIT: StreamExit = { exitCode: 9, signal: undefined, notFound: false, stderrTail: "", problem: "nvidia-smi dmon -s puc -d 1: exited with code 9" };
const KILLED: StreamExit = { exitCode: undefined, signal: "SIGKILL", notFound: false, stderrTail: "", problem: "nvidia-smi dmon: killed by SIGKILL" };
const info = (o: Partial<ExitInfo> = {}): ExitInfo => ({ delivered: false, retryInMs: 4000, stalled: false, ...o });
const RUNNING = { running: true, lastSampleMs: 1000 };

describe("DmonStatus", () => {
  it("says why a child ended, with the failure it printed, and keys repeats by exit code and failure", () => {
    const s = new DmonStatus();
    s.lastFailure = { kind: "driver_unreachable", message: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." };
    expect(s.ended(EXIT, info(), 4)).toBe("9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
    expect(s.reason).toBe(
      "nvidia-smi dmon -s puc -d 1: exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.; restarting in 4s",
    );
    expect(s.lastFailure).toBeUndefined();
    expect(s.ended(EXIT, info(), 8)).toBe("9");
    expect(s.reason).toBe("nvidia-smi dmon -s puc -d 1: exited with code 9; restarting in 8s");
  });

  it("says a child was killed for silence or for a flood, whatever its exit", () => {
    const s = new DmonStatus();
    expect(s.ended(KILLED, info({ stalled: true }), 1)).toBe("stalled");
    expect(s.reason).toBe(`nvidia-smi dmon was silent for ${STALE_INTERVALS} intervals and was killed; restarting in 1s`);
    expect(s.ended(KILLED, info({ flooded: { lines: 12345, ms: 2500 } }), 2)).toBe("flooded");
    expect(s.reason).toBe("nvidia-smi dmon printed 12345 lines in 2.5s (about one per GPU per interval expected) and was killed; restarting in 2s");
    expect(s.ended({ ...KILLED, signal: undefined }, info(), 2)).toBe("?");
  });

  it("is healthy when started and fresh, with when a sample last came", () => {
    const s = new DmonStatus();
    expect(s.health(true, true, RUNNING, false)).toEqual({ ok: true });
    s.lastSuccessMs = 5000;
    expect(s.health(true, true, RUNNING, false)).toEqual({ ok: true, lastSuccessMs: 5000 });
  });

  it("says why not otherwise: not running, down (and why), starting, or silent; absent where nvidia-smi is missing", () => {
    const s = new DmonStatus();
    expect(s.health(false, false, RUNNING, false)).toEqual({ ok: false, reason: "gpu collector is not running" });
    s.starting();
    expect(s.health(true, false, { running: false, lastSampleMs: undefined }, false)).toEqual({ ok: false, reason: "waiting for nvidia-smi dmon to start" });
    expect(s.health(true, false, { running: true, lastSampleMs: undefined }, false)).toEqual({
      ok: false,
      reason: "waiting for the first sample from nvidia-smi dmon",
      starting: true,
    });
    expect(s.health(true, false, RUNNING, false)).toEqual({ ok: false, reason: "no sample from nvidia-smi dmon for 3 intervals" });
    s.notFound("/opt/nvidia-smi", 60);
    s.lastSuccessMs = 5000;
    expect(s.health(true, false, { running: false, lastSampleMs: undefined }, true)).toEqual({
      ok: false,
      lastSuccessMs: 5000,
      reason: "/opt/nvidia-smi not found or not executable (no NVIDIA driver tools on this node?); retrying every 60s",
      absent: true,
    });
  });

  it("says 'not started' before start()", () => {
    expect(new DmonStatus().reason).toBe("not started");
  });
});
