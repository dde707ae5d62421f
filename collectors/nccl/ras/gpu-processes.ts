/**
 * The processes computing on this node's GPUs (the job collector's `nvidia-smi
 * --query-compute-apps`), read through the collector wiring's peer() without importing the job
 * collector: a RAS service held by one of them is the job's, as one held by a logged rank is.
 */
export interface GpuProcesses {
  /** Pids (in the agent's PID namespace) of the GPU compute processes of the last poll. */
  computePids(): readonly number[];
}

export function isGpuProcesses(c: object | undefined): c is GpuProcesses {
  return c !== undefined && typeof (c as Partial<GpuProcesses>).computePids === "function";
}
