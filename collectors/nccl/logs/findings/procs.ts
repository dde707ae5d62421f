/** Naming processes in findings: their ranks, and `host:pid [dev]`. */
import type { TrackedState } from "../detect/verdict.js";
import type { ProcessState } from "../state/model.js";
import type { Finding } from "../../verdict/report.js";

/**
 * The ranks of these processes in the communicators seen; else the global rank a launcher prefix
 * gave them (srun's task number where the logs show a task per process: srunTaskIsRank); else the rank of an Init START (a process whose init never completed); else the rank
 * its first channel, ring or teardown line names as its own (excerpts, 2.3+).
 */
export function ranksOf(state: TrackedState, procs: readonly ProcessState[]): number[] {
  const keys = new Set(procs.map((p) => p.key));
  const out = new Set<number>();
  for (const c of state.comms.values()) for (const r of c.ranks.values()) if (keys.has(r.processKey)) out.add(r.rank);
  for (const p of procs) {
    const launcher = p.launcherRank ?? (srunTaskIsRank(state, p) ? p.srunTask : undefined);
    if (launcher === undefined) continue;
    let known = false;
    for (const key of p.comms.values()) if (state.comms.get(key)?.ranks.size) known = true;
    if (!known) out.add(launcher);
  }
  if (out.size === 0) for (const p of procs) for (const s of p.initStarts.values()) if (s.rank !== undefined) out.add(s.rank);
  if (out.size === 0) for (const p of procs) if (p.lineRank !== undefined) out.add(p.lineRank);
  return [...out].sort((a, b) => a - b);
}

/**
 * p's srun task number is its rank where the logs show a task per process: no other process carries
 * it, and its host runs processes of several tasks (a task per GPU, nccl-pasted 287). One task's
 * processes, or a host showing one task, may be torchrun's under srun: the number is the node's.
 */
function srunTaskIsRank(state: TrackedState, p: ProcessState): boolean {
  if (p.srunTask === undefined) return false;
  const tasksOnHost = new Set<number>();
  for (const q of state.processes.values()) {
    if (q.srunTask === undefined) continue;
    if (q !== p && q.srunTask === p.srunTask) return false;
    if (q.host === p.host) tasksOnHost.add(q.srunTask);
  }
  return tasksOnHost.size >= 2;
}

/**
 * Findings that name processes (`host:pid`) and no rank get the ranks the logs give those
 * processes (ranksOf), so that every finding says which ranks it is about where the logs tell.
 */
export function withProcessRanks(state: TrackedState, findings: readonly Finding[]): Finding[] {
  return findings.map((f) => {
    if (f.ranks.length > 0 || f.processes.length === 0) return f;
    const procs = f.processes.map((k) => state.processes.get(k)).filter((p): p is ProcessState => p !== undefined);
    const ranks = ranksOf(state, procs);
    return ranks.length > 0 ? { ...f, ranks } : f;
  });
}

/** `host:pid [dev]` (the device of the line, when it had one). */
export function who(key: string, cudaDev: number | undefined): string {
  return cudaDev === undefined ? key : `${key} [${cudaDev}]`;
}
