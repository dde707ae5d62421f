/**
 * What the RAS watch (ras/watch.ts) learns from this node's other evidence: the communicators the
 * logs know with their live ranks here (the role where a text report does not name the querier),
 * the NCCL version of the rank processes (the defect table, before any report), and the local
 * suspicion of a hang that lets a node that is not its job's querier ask (ras/schedule.ts).
 */
import type { GpuSpinClock } from "./node-view.js";
import type { TrackedState } from "./logs/detect/verdict.js";
import type { LoggedComm } from "./ras/job-view.js";

/**
 * Each communicator the logs know, with the ranks whose process was not found gone. Read from what the
 * evaluations found (goneSinceMs), not by looking again: the watch asks every second, and a look would
 * refresh the process view's cache that the scrape's own look relies on.
 */
export function loggedComms(t: TrackedState): LoggedComm[] {
  const out: LoggedComm[] = [];
  for (const c of t.comms.values()) {
    const localRanks: number[] = [];
    for (const r of c.ranks.values()) {
      const p = t.processes.get(r.processKey);
      if (p !== undefined && p.goneSinceMs === undefined && r.tornDownMs === undefined) localRanks.push(r.rank);
    }
    out.push({ commId: c.key, nranks: c.nranks ?? c.ranks.size, localRanks });
  }
  return out;
}

/** The NCCL version of the most recently heard rank process that printed one (`2.27.3+cuda12.9` as NCCL prints it). */
export function loggedVersion(t: TrackedState): string | undefined {
  let best: { version: string; at: number } | undefined;
  for (const p of t.processes.values()) {
    if (p.version === undefined || p.goneSinceMs !== undefined) continue;
    if (best === undefined || p.lastSeenMs > best.at) best = { version: p.version, at: p.lastSeenMs };
  }
  return best?.version;
}

/** A GPU that has read `spin` (NCCL kernels waiting, little power) for this long is local evidence of a hang. */
export function spinSuspicionMs(hangThresholdMs: number): number {
  return Math.min(30_000, hangThresholdMs / 2);
}

/** Does any GPU of this node spin for spinSuspicionMs? */
export function gpusSpin(spin: GpuSpinClock, gpus: Iterable<string>, now: number, hangThresholdMs: number): boolean {
  const need = spinSuspicionMs(hangThresholdMs);
  for (const g of gpus) if (spin.heldMs(g, now) >= need) return true;
  return false;
}
