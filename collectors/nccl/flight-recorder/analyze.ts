/**
 * What the Flight Recorder dumps of many ranks say about each process group: which ranks are
 * behind (the lowest last-enqueued collective, or with every rank at the same one, the lowest
 * completed), the collective the others wait in with the Python stacks they called it from, which
 * member ranks left no readable dump, and the collectives whose records differ across ranks
 * (match.ts). "Not enqueued" means the rank's Python code never got there (another path, or stuck
 * on the CPU); "enqueued but not completed" points below Python, at the network or a GPU
 * (pytorch PR #120438). Pure functions; the work is bounded by the limits of groups.ts and below.
 */
import { jobGroups, type JobGroup, type RankInGroup } from "./groups.js";
import { callOf, mismatchesOf, type FrMismatch } from "./match.js";
import { stacksOf, type FrStack } from "./stacks.js";
import type { FrDump, FrEntry, FrFrame, FrRead } from "./types.js";

export type { FrMismatch } from "./match.js";
export type { FrStack } from "./stacks.js";

export interface FrRankStatus {
  rank: number;
  source: string;
  lastEnqueued?: number;
  lastStarted?: number;
  lastCompleted?: number;
}

/** The collective that ranks entered and did not finish. */
export interface FrWait {
  seq: number;
  /** `all_reduce` (several joined by `+` for a coalesced group); undefined when no dump still holds it. */
  op?: string;
  /** Ranks that enqueued it and have not completed it. */
  ranks: number[];
  /** Their entries' states: `scheduled` (not started on the GPU, or timing off), `started`. */
  states: { state: string; ranks: number[] }[];
  stacks: FrStack[];
  timeoutMs?: number;
}

export interface FrBehind {
  /** `enqueued`: they never enqueued collective `seq`; `completed`: every rank enqueued it, these did not complete it. */
  by: "enqueued" | "completed";
  ranks: number[];
  /** Their last enqueued (or completed) collective. */
  at: number;
  aheadRanks: number[];
  /** The highest last enqueued (or completed) collective of the others. */
  aheadAt: number;
  /** What the ranks behind last enqueued (their entry at `at`), where a dump still holds it. */
  last: { rank: number; seq: number; op: string; state?: string; frames: FrFrame[] }[];
}

export interface FrGroupAnalysis {
  name: string;
  desc?: string;
  /** From pg_config; undefined when no dump gives the rank list. */
  size?: number;
  ranks?: number[];
  status: FrRankStatus[];
  /** Member ranks with no dump at all, and those whose dump could not be read. */
  missing: number[];
  unreadable: number[];
  behind?: FrBehind;
  wait?: FrWait;
  mismatches: FrMismatch[];
}

export interface FrAnalysis {
  groups: FrGroupAnalysis[];
  /** Dumps read, one per rank. */
  dumps: number;
  /** Dumps left out: a second dump of a rank (the first read is used), or a dump with no rank. */
  duplicates: { rank: number; source: string; used: string }[];
  unplaced: string[];
  /** Dumps that could not be read. */
  failed: { source: string; rank?: number; error: string }[];
  /** More groups or ranks than the limits: some were left out. */
  truncated: boolean;
}

const minOf = (xs: readonly number[]): number => xs.reduce((a, b) => (b < a ? b : a), Infinity);
const maxOf = (xs: readonly number[]): number => xs.reduce((a, b) => (b > a ? b : a), -Infinity);

function lastEntry(m: RankInGroup, seq: number): FrEntry | undefined {
  const list = m.bySeq.get(seq);
  return list?.[list.length - 1];
}

function behindOf(members: readonly RankInGroup[]): FrBehind | undefined {
  const known = members.filter((m) => m.lastEnqueued !== undefined);
  if (known.length < 2) return undefined;
  const enq = known.map((m) => m.lastEnqueued as number);
  const min = minOf(enq);
  const max = maxOf(enq);
  if (min < max) {
    const ahead = known.filter((m) => (m.lastEnqueued as number) > min);
    // The ranks ahead must still wait in the collective the others never enqueued (else nothing hangs on it).
    if (!ahead.some((m) => m.lastCompleted === undefined || m.lastCompleted < min + 1)) return undefined;
    const behind = known.filter((m) => m.lastEnqueued === min);
    return {
      by: "enqueued",
      ranks: behind.map((m) => m.rank),
      at: min,
      aheadRanks: ahead.map((m) => m.rank),
      aheadAt: max,
      last: behind.slice(0, 16).flatMap((m) => {
        const e = lastEntry(m, min);
        return e ? [{ rank: m.rank, seq: min, op: e.op, ...(e.state !== undefined ? { state: e.state } : {}), frames: e.frames }] : [];
      }),
    };
  }
  const done = known.filter((m) => m.lastCompleted !== undefined);
  if (done.length < 2) return undefined;
  const lows = done.map((m) => m.lastCompleted as number);
  const low = minOf(lows);
  const high = maxOf(lows);
  if (low >= high || low >= max) return undefined;
  const behind = done.filter((m) => m.lastCompleted === low);
  return {
    by: "completed",
    ranks: behind.map((m) => m.rank),
    at: low,
    aheadRanks: done.filter((m) => (m.lastCompleted as number) > low).map((m) => m.rank),
    aheadAt: high,
    last: [],
  };
}

function waitOf(members: readonly RankInGroup[], behind: FrBehind | undefined): FrWait | undefined {
  let seq: number | undefined;
  if (behind?.by === "enqueued") seq = behind.at + 1;
  else {
    for (const m of members) {
      if (m.lastEnqueued === undefined) continue;
      const next = (m.lastCompleted ?? -1) + 1;
      if (next <= m.lastEnqueued && (seq === undefined || next < seq)) seq = next;
    }
  }
  if (seq === undefined) return undefined;
  const s = seq;
  const waiting = members.filter((m) => m.lastEnqueued !== undefined && m.lastEnqueued >= s && (m.lastCompleted ?? -1) < s);
  if (waiting.length === 0) return undefined;
  const calls = waiting.flatMap((m) => {
    const list = m.bySeq.get(s);
    return list && list.length > 0 ? [{ rank: m.rank, list }] : [];
  });
  const states = new Map<string, number[]>();
  for (const { rank, list } of calls) {
    const st = list[list.length - 1]?.state ?? "?";
    states.set(st, [...(states.get(st) ?? []), rank]);
  }
  const first = calls[0]?.list;
  const timeout = first?.[0]?.timeoutMs;
  return {
    seq: s,
    ...(first ? { op: callOf(first).op } : {}),
    ranks: waiting.map((m) => m.rank),
    states: [...states].map(([state, ranks]) => ({ state, ranks })),
    stacks: stacksOf(calls.map(({ rank, list }) => ({ rank, frames: list[0]?.frames ?? [] }))),
    ...(timeout !== undefined ? { timeoutMs: timeout } : {}),
  };
}

function groupAnalysis(g: JobGroup, failedRanks: ReadonlySet<number>, dumpRanks: ReadonlySet<number>): FrGroupAnalysis {
  const members = [...g.members.values()].sort((a, b) => a.rank - b.rank);
  const missing = (g.ranks ?? []).filter((r) => !dumpRanks.has(r));
  const behind = behindOf(members);
  const wait = waitOf(members, behind);
  return {
    name: g.name,
    ...(g.desc !== undefined ? { desc: g.desc } : {}),
    ...(g.ranks !== undefined ? { size: g.ranks.length, ranks: g.ranks } : {}),
    status: members.map((m) => ({
      rank: m.rank,
      source: m.source,
      ...(m.lastEnqueued !== undefined ? { lastEnqueued: m.lastEnqueued } : {}),
      ...(m.lastStarted !== undefined ? { lastStarted: m.lastStarted } : {}),
      ...(m.lastCompleted !== undefined ? { lastCompleted: m.lastCompleted } : {}),
    })),
    missing,
    unreadable: missing.filter((r) => failedRanks.has(r)),
    ...(behind ? { behind } : {}),
    ...(wait ? { wait } : {}),
    mismatches: mismatchesOf(members, g.ranks?.length, wait?.seq),
  };
}

/**
 * The dumps of one job (any number of ranks, read by read.ts, unreadable ones included): per process
 * group, who is behind, what the others wait in, who left no dump, and where the ranks disagree.
 */
export function analyzeFrDumps(reads: readonly FrRead[]): FrAnalysis {
  const dumps = new Map<number, FrDump>();
  const duplicates: FrAnalysis["duplicates"] = [];
  const unplaced: string[] = [];
  const failed: FrAnalysis["failed"] = [];
  for (const r of reads) {
    if (!r.ok) {
      failed.push({ source: r.source, ...(r.rank !== undefined ? { rank: r.rank } : {}), error: r.error });
      continue;
    }
    const rank = r.dump.rank;
    if (rank === undefined) unplaced.push(r.dump.source);
    else if (dumps.has(rank)) duplicates.push({ rank, source: r.dump.source, used: dumps.get(rank)?.source ?? "" });
    else dumps.set(rank, r.dump);
  }
  const failedRanks = new Set(failed.flatMap((f) => (f.rank !== undefined && !dumps.has(f.rank) ? [f.rank] : [])));
  const { groups, truncated } = jobGroups(dumps);
  const dumpRanks = new Set(dumps.keys());
  return { groups: groups.map((g) => groupAnalysis(g, failedRanks, dumpRanks)), dumps: dumps.size, duplicates, unplaced, failed, truncated };
}
