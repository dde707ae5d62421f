/**
 * The gpu collector's health from what it knows of the dmon child: when it last delivered a sample,
 * the failure nvidia-smi last printed (until the child ends), and why the child is down, in one
 * line: not found, killed for flooding or silence, or its exit, each with when it is tried again.
 */
import type { CollectorHealth } from "../collector.js";
import type { StreamExit } from "../exec.js";
import type { NvsmiFailure } from "./failures.js";
import type { ExitInfo } from "./supervisor.js";

/** A GPU without a row for this many intervals is withdrawn; a child silent for as long is killed. */
export const STALE_INTERVALS = 3;

/** The child as the supervisor sees it. */
export interface ChildState {
  running: boolean;
  lastSampleMs: number | undefined;
}

export class DmonStatus {
  /** When a sample was last delivered (stream or --once). */
  lastSuccessMs: number | undefined;
  /** The failure nvidia-smi last printed, since the current child started. */
  lastFailure: NvsmiFailure | undefined;
  private downReason = "not started";

  /** Why the child is down, as health says it while no child runs. */
  get reason(): string {
    return this.downReason;
  }

  /** start(): the first child is on its way. */
  starting(): void {
    this.downReason = "waiting for nvidia-smi dmon to start";
  }

  /** nvidia-smi could not be started; tried again in `retryS` seconds. */
  notFound(file: string, retryS: number): void {
    this.downReason = `${file} not found or not executable (no NVIDIA driver tools on this node?); retrying every ${retryS}s`;
  }

  /**
   * The child ended (not for a missing file): says why, forgets its failure, and returns the key
   * under which this kind of end is logged once.
   */
  ended(exit: StreamExit, info: ExitInfo, retryS: number): string {
    const failure = this.lastFailure ? `: ${this.lastFailure.message}` : "";
    const what = info.flooded
      ? `nvidia-smi dmon printed ${info.flooded.lines} lines in ${(info.flooded.ms / 1000).toFixed(1)}s (about one per GPU per interval expected) and was killed`
      : info.stalled
        ? `nvidia-smi dmon was silent for ${STALE_INTERVALS} intervals and was killed`
        : exit.problem;
    this.downReason = `${what}${failure}; restarting in ${retryS}s`;
    this.lastFailure = undefined;
    return info.flooded ? "flooded" : info.stalled ? "stalled" : `${exit.exitCode ?? exit.signal ?? "?"}${failure}`;
  }

  /**
   * The collector's health: `ok` when started and fresh; otherwise why, from the child's state.
   * `absent`: nvidia-smi is not there.
   */
  health(started: boolean, ok: boolean, child: ChildState, absent: boolean): CollectorHealth {
    const h: CollectorHealth = { ok };
    if (this.lastSuccessMs !== undefined) h.lastSuccessMs = this.lastSuccessMs;
    if (h.ok) return h;
    if (!started) h.reason = "gpu collector is not running";
    else if (!child.running) h.reason = this.downReason;
    else if (child.lastSampleMs === undefined) {
      h.reason = "waiting for the first sample from nvidia-smi dmon";
      h.starting = true;
    } else h.reason = `no sample from nvidia-smi dmon for ${STALE_INTERVALS} intervals`;
    if (absent) h.absent = true;
    return h;
  }
}
