/**
 * The processes that hold a compute context on each GPU: `nvidia-smi --query-compute-apps=pid,
 * gpu_uuid,gpu_bus_id --format=csv,noheader`, one fork per poll through collectors/exec.ts (the
 * poll is slow, 30 s by default: --collector.job.interval). Rows read `12345, GPU-5d5ba0d6-...,
 * 00000000:07:00.0`; no process prints nothing. A pid of 0 or a row that does not parse is skipped.
 */
import { trustedStdout, type Exec } from "../exec.js";

export const COMPUTE_APPS_ARGS = ["--query-compute-apps=pid,gpu_uuid,gpu_bus_id", "--format=csv,noheader"] as const;

export interface ComputeApp {
  /** The pid as nvidia-smi reports it (looked up in <path.procfs>). */
  pid: number;
  gpuUuid: string | undefined;
  pciBusId: string | undefined;
}

export type ComputeAppsResult =
  { state: "ok"; apps: ComputeApp[]; skipped: number } | { state: "absent"; message: string } | { state: "error"; message: string };

const PID = /^\d{1,10}$/;

function value(v: string | undefined): string | undefined {
  const s = v?.trim() ?? "";
  return s === "" || s === "N/A" || s.startsWith("[") ? undefined : s;
}

/** Parses the CSV rows; counts lines that are not rows. */
export function parseComputeApps(text: string): { apps: ComputeApp[]; skipped: number } {
  const apps: ComputeApp[] = [];
  let skipped = 0;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const [pid, uuid, bus] = line.split(",");
    const p = pid?.trim() ?? "";
    if (!PID.test(p) || Number(p) === 0) {
      skipped++;
      continue;
    }
    apps.push({ pid: Number(p), gpuUuid: value(uuid), pciBusId: value(bus) });
  }
  return { apps, skipped };
}

export async function queryComputeApps(exec: Exec, nvidiaSmi: string, timeoutMs: number): Promise<ComputeAppsResult> {
  // One row per process: 64 KiB is thousands of them.
  const r = await exec.run(nvidiaSmi, COMPUTE_APPS_ARGS, { timeoutMs, maxBytes: 256 * 1024 });
  if (r.notFound) return { state: "absent", message: `${nvidiaSmi}: not found or not executable` };
  if (!r.ok) return { state: "error", message: r.problem ?? `${r.command}: failed` };
  return { state: "ok", ...parseComputeApps(trustedStdout(r)) };
}
