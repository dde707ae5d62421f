/**
 * nvidia-smi's one-shot runs (the `--query-gpu` identity, `dmon -c 1` for --once), bounded: in
 * time by --collector.timeout (10 s by default), and in output by 1 MiB (--query-gpu prints one
 * short line per GPU, dmon -c 1 one sample set: more is a broken tool).
 */
import type { Exec, ToolResult } from "../exec.js";

export const ONE_SHOT_TIMEOUT_MS = 10_000;
export const ONE_SHOT_MAX_BYTES = 1024 * 1024;

/** Runs nvidia-smi once with these arguments. */
export type OneShot = (args: readonly string[]) => Promise<ToolResult>;

export function oneShot(exec: Exec, nvidiaSmi: string, timeoutMs = ONE_SHOT_TIMEOUT_MS): OneShot {
  return (args) => exec.run(nvidiaSmi, args, { timeoutMs, maxBytes: ONE_SHOT_MAX_BYTES });
}
