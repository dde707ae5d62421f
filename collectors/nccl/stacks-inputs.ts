/**
 * What the live stacks (stacks/live/watch.ts) learn from the evidence sources: the communicators
 * and process groups suspected now, each with its ranks on this node and their live processes.
 *  - the logs' COLL verdicts (a hang, or a rank behind): a process counts only where it runs as
 *    the user who owns the log that named it (as for RAS: logs/rank-processes.ts), so a job user's
 *    log cannot aim the agent at another user's process;
 *  - NCCL RAS's verdicts (hung, or ranks behind) of communicators the logs do not already suspect:
 *    the pids a report names for this node's addresses. Any local user can listen on the RAS port,
 *    so such a pid is believed only when its process runs as the uid of the RAS socket the agent
 *    verified (ras/socket-owner.ts: held by a logged rank, by root, or by a logged rank's user) or
 *    is a logged rank's process that passed the rule above; any other is `untrusted`, never asked;
 *  - PyTorch's process-group verdicts (logs/pytorch/verdict.ts): the processes of the logs whose
 *    PyTorch lines speak for that group, by the logs' rule.
 * One process suspected by several of them is collected once (watch.ts reuses its stacks).
 */
import type { CommVerdict } from "./logs/detect/types.js";
import type { NodeView, TrackedState } from "./logs/detect/verdict.js";
import { groupProcesses } from "./logs/pytorch/findings-groups.js";
import type { PytorchLog } from "./logs/pytorch/log.js";
import { PYTORCH_HOLD_MS, type PytorchVerdict } from "./logs/pytorch/verdict.js";
import type { ProcessState } from "./logs/state/model.js";
import type { RasCommVerdict } from "./ras/verdict.js";
import type { StackTarget } from "./stacks/live/collect.js";
import type { StackSuspect } from "./stacks/live/watch.js";
import { liveRankPids } from "./logs/rank-processes.js";

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

/** What RAS suspects need of the node: a RAS pid's process here, its uid, and whom the agent believes. */
export interface RasStackNode {
  /** The node pid (in <path.procfs>) of the live process whose own pid (as RAS prints it) is pid; undefined: none found. */
  nodePid(pid: number): number | undefined;
  uidOf(pid: number): number | undefined;
  /** The uid of the RAS socket the agent verified for the report now (RasWatch.verifiedOwnerUid); undefined: none. */
  verifiedUid: number | undefined;
  /** Node pids of the logged rank processes that pass the logs' owner rule (logs/rank-processes.ts liveRankPids). */
  loggedPids: ReadonlySet<number>;
}

/**
 * The suspects of RAS's verdicts that the logs' suspects do not already hold (same comm_id): a
 * communicator hung or with ranks behind, its ranks on this node by the pids RAS names. `all`: every
 * RAS verdict now (the global rank of a pid: its rank in the largest communicator it is in).
 */
export function rasStackSuspects(all: readonly RasCommVerdict[], node: RasStackNode, already: ReadonlySet<string>): StackSuspect[] {
  const world = new Map<number, { size: number; rank: number }>();
  for (const v of all)
    for (const l of v.local) {
      if (l.pid === undefined) continue;
      const size = v.size ?? 0;
      const w = world.get(l.pid);
      if (w === undefined || size > w.size) world.set(l.pid, { size, rank: l.rank });
    }
  const out: StackSuspect[] = [];
  for (const v of all) {
    if ((!v.hang && v.behind.length === 0) || already.has(v.commId)) continue;
    const ranks: StackSuspect["ranks"][number][] = [];
    const untrusted: NonNullable<StackSuspect["untrusted"]>[number][] = [];
    const seen = new Set<number>();
    for (const l of v.local) {
      if (l.pid === undefined || l.alive === false || seen.has(l.rank)) continue;
      seen.add(l.rank);
      const nodePid = node.nodePid(l.pid);
      if (nodePid === undefined) continue;
      const uid = node.uidOf(nodePid);
      if (uid === undefined) continue; // gone
      const target: StackTarget = { nodePid, pid: l.pid, globalRank: world.get(l.pid)?.rank, uid };
      if ((node.verifiedUid !== undefined && uid === node.verifiedUid) || node.loggedPids.has(nodePid)) ranks.push({ rank: l.rank, target });
      else untrusted.push({ rank: l.rank, pid: l.pid, nodePid, uid });
    }
    if (ranks.length > 0 || untrusted.length > 0)
      out.push({
        commId: v.commId,
        ranks: ranks.sort((a, b) => a.rank - b.rank),
        behind: v.behind.map((r) => r.rank),
        ...(untrusted.length > 0 ? { untrusted } : {}),
      });
  }
  return out;
}

/**
 * The suspects of PyTorch's process-group verdicts: per group, the processes of the logs whose
 * PyTorch lines (watchdog, status, hang signs) of the last holdMs speak for it, or, for a verdict
 * naming no group, for its ranks; by the logs' owner rule. behind: the ranks of a rank_behind verdict.
 */
export function pytorchStackSuspects(
  t: TrackedState,
  pt: PytorchLog,
  verdicts: readonly PytorchVerdict[],
  view: Pick<NodeView, "alive" | "nodePid">,
  uidOf: (pid: number) => number | undefined,
  sinceMs: number,
): StackSuspect[] {
  const groups = new Map<string, { behind: Set<number>; ranks: Set<number> }>();
  for (const v of verdicts) {
    let g = groups.get(v.processGroup);
    if (g === undefined) groups.set(v.processGroup, (g = { behind: new Set(), ranks: new Set() }));
    for (const r of v.ranks) g.ranks.add(r);
    if (v.kind === "rank_behind") for (const r of v.ranks) g.behind.add(r);
  }
  const fresh = <T extends { atMs?: number }>(r: T): boolean => r.atMs !== undefined && r.atMs >= sinceMs;
  const recent = {
    watchdogs: pt.watchdogs.filter(fresh),
    workStatus: pt.workStatus.filter(fresh),
    hangSigns: pt.hangSigns.filter(fresh),
    errors: pt.errors.filter(fresh),
  };
  // A group's processes as its verdict placed their lines: by group, not by each line's own label.
  const members = groupProcesses(recent);
  const records = [...recent.watchdogs, ...recent.workStatus, ...recent.hangSigns];
  const out: StackSuspect[] = [];
  for (const [pg, g] of groups) {
    let byProcess = new Map<string, number | undefined>();
    if (pg !== "") byProcess = members.get(pg) ?? byProcess;
    else
      for (const r of records) {
        if (r.processKey === undefined || r.rank === undefined || !g.ranks.has(r.rank)) continue;
        if (byProcess.get(r.processKey) === undefined) byProcess.set(r.processKey, r.rank);
      }
    const ranks: StackSuspect["ranks"][number][] = [];
    const seen = new Set<number>();
    for (const [key, logged] of byProcess) {
      const p = t.processes.get(key);
      if (p === undefined || view.alive(p) !== true) continue;
      const nodePid = view.nodePid?.(p);
      if (nodePid === undefined || seen.has(nodePid)) continue;
      const uid = uidOf(nodePid);
      if (p.owner >= 0 && uid !== p.owner) continue;
      const rank = logged ?? globalRank(t, p);
      if (rank === undefined) continue;
      seen.add(nodePid);
      ranks.push({ rank, target: { nodePid, pid: p.pid, globalRank: globalRank(t, p) ?? logged, uid } });
    }
    if (ranks.length > 0) out.push({ commId: "", processGroup: pg, ranks: ranks.sort((a, b) => a.rank - b.rank), behind: [...g.behind] });
  }
  return out;
}

/** What the suspects are drawn from at one evaluation. */
export interface SuspectInputs {
  tracker: TrackedState;
  pt: PytorchLog;
  view: NodeView;
  uidOf: (pid: number) => number | undefined;
  /** The logs' COLL verdicts. */
  logs: readonly CommVerdict[];
  /** RAS's verdicts and what believing its pids needs; undefined: RAS off. */
  ras?: { verdicts: readonly RasCommVerdict[]; verifiedUid: number | undefined; nodePid: (pid: number) => number | undefined };
  /** PyTorch's process-group verdicts. */
  pytorch: readonly PytorchVerdict[];
  now: number;
}

/** The suspects of every source now: the logs' first, then RAS's (communicators the logs do not suspect), then PyTorch's process groups. */
export function liveStackSuspects(i: SuspectInputs): StackSuspect[] {
  const fromLogs = stackSuspects(i.tracker, i.logs, i.view, i.uidOf);
  const ras = i.ras;
  const fromRas =
    ras !== undefined && ras.verdicts.some((v) => v.hang || v.behind.length > 0)
      ? rasStackSuspects(
          ras.verdicts,
          { nodePid: (pid) => ras.nodePid(pid), uidOf: i.uidOf, verifiedUid: ras.verifiedUid, loggedPids: new Set(liveRankPids(i.tracker, i.view, i.uidOf)) },
          new Set(fromLogs.map((s) => s.commId)),
        )
      : [];
  const fromPytorch = i.pytorch.length > 0 ? pytorchStackSuspects(i.tracker, i.pt, i.pytorch, i.view, i.uidOf, i.now - PYTORCH_HOLD_MS) : [];
  return [...fromLogs, ...fromRas, ...fromPytorch];
}
