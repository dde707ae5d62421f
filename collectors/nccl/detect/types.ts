import type { GpuSignature } from "./gpu-signature.js";

export interface DetectOptions {
  /** Silence after which a communicator may be called hung (ms); --collector.nccl.hang-threshold. */
  hangThresholdMs: number;
  /** The threshold stretches to this many times the communicator's recent p99 gap between collectives... */
  gapFactor: number;
  /** ...but never beyond this (ms). */
  maxThresholdMs: number;
  /** Straggler: at least this many finished collectives in the window, */
  stragglerMinSamples: number;
  /** with the same rank last in at least this share of them, */
  stragglerShare: number;
  /** and a median lead of the first arrival over the last of at least this (ms). */
  stragglerMinSpreadMs: number;
}

export const DEFAULT_DETECT: DetectOptions = {
  hangThresholdMs: 120_000,
  gapFactor: 10,
  maxThresholdMs: 30 * 60_000,
  stragglerMinSamples: 20,
  stragglerShare: 0.8,
  stragglerMinSpreadMs: 50,
};

export interface GpuObservation {
  gpu: string;
  rank: number;
  signature: GpuSignature;
}

export interface CommVerdict {
  commKey: string;
  hangSuspected: boolean;
  /** Silence of the communicator's processes (ms), when known. */
  silentMs?: number;
  thresholdMs: number;
  /** Ranks (local to this node) that never entered the collective the others wait in. */
  behind: number[];
  /** Ranks that arrive last at most collectives while the job moves. */
  stragglers: number[];
  mismatch: boolean;
  /** Local ranks whose process is alive (or not known to be dead) and not torn down. */
  liveRanks: number[];
  /** GPU readings of the local ranks while silent. */
  gpus: GpuObservation[];
  /** Why (or why not) in a few words, for logs. */
  reason: string;
}
