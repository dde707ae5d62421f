/**
 * Groups ranks by where their Python is, as ByteDance's ByteRobust localizes a hang: the stack
 * most ranks share is the healthy wait (inside the collective the job is stuck in); the ranks
 * whose stack differs share the fault. Pure: the same dumps give the same grouping.
 *
 * One stack per rank: its process's main thread (py-spy's `MainThread`, or the thread whose id is
 * the pid; for faulthandler, the thread whose outermost frame is `<module>`), where the training
 * loop runs and so where a rank that took another path is; else the thread that wrote the dump,
 * else the deepest. Stacks are the same when their frames are, compared by function and
 * package-relative file (frames.ts), without line numbers and without py-spy's unnamed native
 * addresses.
 */
import { frameKey, inCollective } from "./frames.js";
import type { StackDump, StackThread } from "./types.js";

/** Groups kept; the rest are counted. */
export const MAX_GROUPS = 64;

/** A rank's dump, placed (its rank known). */
export interface RankStack {
  rank: number;
  /** `host:pid` where the logs tie it to a process. */
  process?: string;
  dump: StackDump;
}

export interface StackGroup {
  /** Ranks with this stack, ascending. */
  ranks: number[];
  /** `host:pid` of the members the logs tie to a process, by rank. */
  processOf: Map<number, string>;
  /** The first rank's: its thread and dump stand for the group. */
  thread: StackThread;
  dump: StackDump;
  /** Each member's dump's `where`, in rank order. */
  evidence: string[];
  inCollective: boolean;
}

export interface StackGrouping {
  /** Ranks with a usable stack. */
  ranks: number;
  /** Largest first (ties: the one in a collective, then the lowest rank); at most MAX_GROUPS. */
  groups: StackGroup[];
  groupsLeftOut: number;
  /** The stack most ranks share, when it is inside a collective and held by at least half of the ranks. */
  dominant?: StackGroup;
  /** The other groups when there is a dominant one: those in no collective first, then the smaller, then by lowest rank. */
  outliers: StackGroup[];
}

/** A thread threading started: its whole stack is shown and ends in `_bootstrap`. */
function startedByThreading(t: StackThread): boolean {
  const outer = t.frames[t.frames.length - 1]?.function;
  return !t.truncated && (outer === "_bootstrap" || outer === "_bootstrap_inner");
}

function isMainByName(t: StackThread, pid: number | undefined): boolean {
  return t.name === "MainThread" || (pid !== undefined && t.id === String(pid));
}

/** The thread that stands for the process (see the top of this file); undefined when no thread has a frame. */
export function keyThread(d: StackDump): StackThread | undefined {
  const withFrames = d.threads.filter((t) => t.frames.length > 0);
  if (withFrames.length === 0) return undefined;
  const named = withFrames.find((t) => isMainByName(t, d.pid));
  if (named !== undefined) return named;
  const module = withFrames.find((t) => t.frames[t.frames.length - 1]?.function === "<module>");
  if (module !== undefined) return module;
  const current = withFrames.find((t) => t.current === true);
  if (current !== undefined) return current;
  // The deepest thread not started by threading (outermost frame `_bootstrap`), else the deepest.
  let best = withFrames[0] as StackThread;
  for (const t of withFrames) {
    if ((startedByThreading(best) && !startedByThreading(t)) || (startedByThreading(best) === startedByThreading(t) && t.frames.length > best.frames.length))
      best = t;
  }
  return best;
}

/** What makes two ranks' stacks the same. */
export function stackKey(t: StackThread): string {
  const parts: string[] = [];
  for (const f of t.frames) {
    const k = frameKey(f);
    if (k !== undefined) parts.push(k);
  }
  return parts.join("\u0001");
}

/** The ranks' stacks grouped (the last dump of a rank given counts). */
export function groupStacks(stacks: readonly RankStack[]): StackGrouping {
  const latest = new Map<number, RankStack>();
  for (const s of stacks) latest.set(s.rank, s);
  const byKey = new Map<string, { members: { rank: number; process?: string; dump: StackDump; thread: StackThread }[] }>();
  for (const s of [...latest.values()].sort((a, b) => a.rank - b.rank)) {
    const thread = keyThread(s.dump);
    if (thread === undefined) continue;
    const key = stackKey(thread);
    let g = byKey.get(key);
    if (g === undefined) {
      g = { members: [] };
      byKey.set(key, g);
    }
    g.members.push({ rank: s.rank, ...(s.process !== undefined ? { process: s.process } : {}), dump: s.dump, thread });
  }
  const all: StackGroup[] = [];
  let ranks = 0;
  for (const { members } of byKey.values()) {
    const first = members[0];
    if (first === undefined) continue;
    ranks += members.length;
    all.push({
      ranks: members.map((m) => m.rank),
      processOf: new Map(members.flatMap((m) => (m.process !== undefined ? [[m.rank, m.process] as const] : []))),
      thread: first.thread,
      dump: first.dump,
      evidence: members.map((m) => m.dump.where),
      inCollective: inCollective(first.thread),
    });
  }
  all.sort((a, b) => b.ranks.length - a.ranks.length || Number(b.inCollective) - Number(a.inCollective) || (a.ranks[0] ?? 0) - (b.ranks[0] ?? 0));
  const groups = all.slice(0, MAX_GROUPS);
  const out: StackGrouping = { ranks, groups, groupsLeftOut: all.length - groups.length, outliers: [] };
  const top = groups[0];
  if (top === undefined || !top.inCollective || top.ranks.length * 2 < ranks) return out;
  out.dominant = top;
  out.outliers = groups
    .slice(1)
    .sort((a, b) => Number(a.inCollective) - Number(b.inCollective) || a.ranks.length - b.ranks.length || (a.ranks[0] ?? 0) - (b.ranks[0] ?? 0));
  return out;
}
