/**
 * The files NCCL Inspector writes into NCCL_INSPECTOR_DUMP_DIR (default nccl-inspector-<SLURM_JOBID>
 * or nccl-inspector-unknown-jobid in the job's working directory):
 * - JSON mode (the default): `<hostname>-pid<pid>.log`, one per process, with every communicator
 *   of that process (inspectorStateDumpJSON, NCCL 2.28.3-2.30.7), opened with fopen("w").
 * - Prometheus mode (NCCL_INSPECTOR_PROM_DUMP=1, 2.29.3+): `nccl_inspector_metrics_<GPU UUID>.prom`,
 *   rewritten in place every interval (at least 30 s); ringwatch does not read it (README.md).
 * For the follower's `accept` option.
 */

function base(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** `<hostname>-pid<digits>.log`. */
export function isInspectorJsonFile(path: string): boolean {
  const b = base(path);
  if (!b.endsWith(".log")) return false;
  const end = b.length - 4;
  const at = b.lastIndexOf("-pid", end);
  if (at < 1 || at + 4 >= end) return false;
  for (let i = at + 4; i < end; i++) {
    const c = b.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/** `nccl_inspector_metrics_<uuid>.prom`. */
export function isInspectorPromFile(path: string): boolean {
  const b = base(path);
  return b.startsWith("nccl_inspector_metrics_") && b.endsWith(".prom");
}
