/**
 * What a GPU looks like while its rank is silent: a NCCL kernel spinning in a collective reads
 * ~100 % SM utilisation at near-idle power (nccl#968, NeMo#9291, horovod#3611); a rank blocked on
 * the CPU side leaves its GPU at ~0 %; a GPU computing (e.g. replaying CUDA graphs, which print no
 * COLL lines) is busy at high power, and its silence is not a hang.
 */
export type GpuSignature = "spin" | "idle" | "busy";

export interface GpuReading {
  /** SM utilisation, percent. */
  sm?: number;
  /** Power draw, watts. */
  powerW?: number;
  /** Enforced power limit, watts. */
  powerLimitW?: number;
  /** Framebuffer memory in use, MiB (dmon fb). */
  fbUsedMiB?: number;
}

/**
 * A GPU whose framebuffer is (nearly) empty holds no training process: the job that used it has
 * ended. A hung rank keeps its memory. Used where process liveness cannot be checked (pods).
 */
export const EMPTY_FB_MIB = 1024;

export function gpuReleased(r: GpuReading): boolean {
  return r.fbUsedMiB !== undefined && r.fbUsedMiB < EMPTY_FB_MIB;
}

/** SM utilisation at or above this counts as "spinning or computing". */
export const SPIN_SM_PERCENT = 90;
/** Below this share of the power limit a fully "utilised" GPU is spinning, not computing. */
export const SPIN_POWER_SHARE = 0.4;
/** At or below this SM utilisation the GPU is idle. */
export const IDLE_SM_PERCENT = 5;

export function classifyGpu(r: GpuReading): GpuSignature | undefined {
  if (r.sm === undefined) return undefined;
  if (r.sm <= IDLE_SM_PERCENT) return "idle";
  if (r.sm >= SPIN_SM_PERCENT && r.powerW !== undefined && r.powerLimitW !== undefined && r.powerLimitW > 0) {
    return r.powerW < SPIN_POWER_SHARE * r.powerLimitW ? "spin" : "busy";
  }
  // Partly utilised, or no power limit to judge by: something is running on it.
  return "busy";
}

/** A GPU of a local rank, as read while its communicator is silent. */
export interface GpuObservation {
  gpu: string;
  rank: number;
  signature: GpuSignature;
}
