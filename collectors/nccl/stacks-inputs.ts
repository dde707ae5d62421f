/**
 * What the live stacks (stacks/live/watch.ts) learn from the logs: the communicators suspected now
 * (a hang, or a rank behind), each with its ranks on this node and their live processes. A
 * process counts only where it runs as the user who owns the log that named it (as for RAS:
 * logs/rank-processes.ts), so a job user's log cannot aim the agent at another user's process.
 */
import type { CommVerdict } from "./logs/detect/types.js";
import type { NodeView, TrackedState } from "./logs/detect/verdict.js";
import type { ProcessState } from "./logs/state/model.js";
import type { StackSuspect } from "./stacks/live/watch.js";

/** A process's rank in the largest communicator it is in (the world), else a launcher prefix's global rank. */
function globalRank(t: TrackedState, p: ProcessState): number | undefined {
  if (p.launcherRank !== undefined) return p.launcherRank;
  let best: { n: number; rank: number } | undefined;
  for (const key of p.comms.values()) {
    const c = t.comms.get(key);
    if (c === undefined) continue;
    const n = c.nranks ?? c.ranks.size;
    for (const r of c.ranks.values()) if (r.processKey === p.key && (best === undefined || n > best.n)) best = { n, rank: r.rank };
  }
  return best?.rank;
}

/** The suspect communicators of one evaluation with their live rank processes here. */
export function stackSuspects(
  t: TrackedState,
  verdicts: readonly CommVerdict[],
  view: Pick<NodeView, "alive" | "nodePid">,
  uidOf: (pid: number) => number | undefined,
): StackSuspect[] {
  const out: StackSuspect[] = [];
  for (const v of verdicts) {
    if (!v.hangSuspected && v.behind.length === 0) continue;
    const c = t.comms.get(v.commKey);
    if (c === undefined) continue;
    const ranks: StackSuspect["ranks"][number][] = [];
    for (const r of c.ranks.values()) {
      const p = t.processes.get(r.processKey);
      if (p === undefined || view.alive(p) !== true) continue;
      const nodePid = view.nodePid?.(p);
      if (nodePid === undefined) continue;
      const uid = uidOf(nodePid);
      if (p.owner >= 0 && uid !== p.owner) continue;
      ranks.push({ rank: r.rank, target: { nodePid, pid: p.pid, globalRank: globalRank(t, p), uid } });
    }
    if (ranks.length > 0) out.push({ commId: v.commKey, ranks: ranks.sort((a, b) => a.rank - b.rank), behind: v.behind });
  }
  return out;
}
