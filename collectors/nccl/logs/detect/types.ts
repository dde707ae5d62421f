import type { GpuObservation } from "../../verdict/gpu-signature.js";

export interface DetectOptions {
  /** Silence after which a communicator may be called hung (ms); --collector.nccl.hang-threshold. */
  hangThresholdMs: number;
  /** The threshold stretches to this many times the communicator's recent p99 gap between collectives... */
  gapFactor: number;
  /** ...but never beyond this (ms). */
  maxThresholdMs: number;
  /** Straggler (detect/straggler.ts): at least this many finished collectives in the window, */
  stragglerMinSamples: number;
  /** with the same rank surely last, by at least the lead below, in at least this share of them; */
  stragglerShare: number;
  /** the lead: at least this (ms), */
  stragglerMinSpreadMs: number;
  /** and at least this share of the window's mean interval between collectives. */
  stragglerMinLeadOfInterval: number;
  /** Named once the window has named the rank at every evaluation for this long (ms) and stragglerMinSamples more collectives; */
  stragglerRaiseMs: number;
  /** no longer named once it has not, likewise (ms). */
  stragglerClearMs: number;
}

export const DEFAULT_DETECT: DetectOptions = {
  hangThresholdMs: 120_000,
  gapFactor: 10,
  maxThresholdMs: 30 * 60_000,
  stragglerMinSamples: 20,
  stragglerShare: 0.8,
  stragglerMinSpreadMs: 20,
  stragglerMinLeadOfInterval: 0.1,
  stragglerRaiseMs: 30_000,
  stragglerClearMs: 60_000,
};

export interface CommVerdict {
  commKey: string;
  hangSuspected: boolean;
  /** Silence of the communicator's processes (ms), when known. */
  silentMs?: number;
  thresholdMs: number;
  /** Ranks (local to this node) that never entered the collective the others wait in. */
  behind: number[];
  /** Ranks that arrive last, by a delay that matters, at most collectives while the job moves (held: detect/straggler.ts). */
  stragglers: number[];
  mismatch: boolean;
  /** Local ranks whose process is alive (or not known to be dead) and not torn down. */
  liveRanks: number[];
  /** GPU readings of the local ranks while silent. */
  gpus: GpuObservation[];
  /** Why (or why not) in a few words, for logs. */
  reason: string;
}
