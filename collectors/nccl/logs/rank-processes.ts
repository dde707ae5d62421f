/**
 * Read-only: each rank this node's logs know, with the process that runs it, for whoever attributes
 * ranks to jobs (the job collector reads it through peer("nccl"), by its own declaration of it).
 * The same ranks as ringwatch_nccl_rank_info (ranks only NCCL RAS knows are not here: RAS gives a
 * pid but no log to pin the process by).
 * liveRankPids() gives the RAS client the processes it may believe (ras/socket-owner.ts).
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { canonicalBusId } from "../../pci.js";
import type { ProcessState } from "./state/model.js";
import type { NodeView, TrackedState } from "./detect/verdict.js";
import { ncclBusIdToPci } from "./parse/bus-id.js";

export interface RankProcess {
  /** The communicator key, as the comm_id label. */
  readonly commId: string;
  readonly rank: number;
  /** The pid the rank logged (its own PID namespace's). */
  readonly pid: number;
  /** Its pid in <path.procfs> (this node's), once the process was found there; undefined while not. */
  readonly nodePid: number | undefined;
  /** PCI bus id of its GPU from NCCL's busId, canonical (collectors/pci.ts); undefined when not logged. */
  readonly pciBusId: string | undefined;
}

export function rankProcesses(t: TrackedState, nodePid: (p: ProcessState) => number | undefined): RankProcess[] {
  const out: RankProcess[] = [];
  for (const c of t.comms.values()) {
    for (const r of c.ranks.values()) {
      const p = t.processes.get(r.processKey);
      if (p === undefined) continue;
      const bus = r.busId !== undefined ? ncclBusIdToPci(r.busId) : undefined;
      out.push({ commId: c.key, rank: r.rank, pid: p.pid, nodePid: nodePid(p), pciBusId: bus !== undefined ? canonicalBusId(bus) : undefined });
    }
  }
  return out;
}

/** At most this many logged rank processes are offered to the RAS check (each costs a look at its fds). */
export const MAX_RANK_PIDS = 256;

/**
 * The node pids (in <path.procfs>) of the processes that run a rank the logs know and that are alive
 * now: each is checked at the call (view.alive: the process found for the logged pid, with the start
 * time it had then), so a pid that exited, or was reused by another process, is not among them.
 * A log names its process in text a job user can write, so a process counts only when it runs as
 * the user who owns the log that named it (uidOf, where the owner is known): a user's log cannot
 * make another user's process, or root's, the job's. At most MAX_RANK_PIDS, the most recently
 * heard from first. Empty with --no-collector.nccl.check-pids (no process is looked up).
 */
export function liveRankPids(t: TrackedState, view: Pick<NodeView, "alive" | "nodePid">, uidOf?: (pid: number) => number | undefined): number[] {
  const keys = new Set<string>();
  for (const c of t.comms.values()) for (const r of c.ranks.values()) keys.add(r.processKey);
  const procs = [...keys].map((k) => t.processes.get(k)).filter((p) => p !== undefined);
  procs.sort((a, b) => b.lastSeenMs - a.lastSeenMs);
  const out = new Set<number>();
  for (const p of procs) {
    if (out.size >= MAX_RANK_PIDS) break;
    if (view.alive(p) !== true) continue;
    const pid = view.nodePid?.(p);
    if (pid === undefined) continue;
    if (p.owner >= 0 && uidOf !== undefined && uidOf(pid) !== p.owner) continue;
    out.add(pid);
  }
  return [...out];
}

/** The uid a process runs as: the owner of its <procfs>/<pid> directory (undefined: gone). */
export function processUid(procfsRoot: string, pid: number): number | undefined {
  try {
    return statSync(join(procfsRoot, String(pid))).uid;
  } catch {
    return undefined;
  }
}
