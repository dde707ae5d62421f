/**
 * The process groups of a job, gathered from every rank's dump: one group is one name with one rank
 * list (torchfrtrace keys groups the same way, since split_group can reuse a name), and for each
 * member rank how far it got and its entries in that group by collective_seq_id.
 */
import { groupNameOf } from "./trim.js";
import type { FrDump, FrEntry, FrGroup } from "./types.js";

/** Groups analysed per job, and ranks per group; more are left out (and said so). */
export const MAX_JOB_GROUPS = 1_024;
export const MAX_JOB_RANKS = 65_536;
/**
 * Ranks in the rank lists of all the job's groups together (the analysis goes through each group's
 * list: its missing ranks); groups past it are left out (and said so). 32 groups of 131,072 ranks.
 */
export const MAX_JOB_LISTED_RANKS = 32 * 131_072;

export interface RankInGroup {
  rank: number;
  source: string;
  /** Undefined: the dump does not say. A dump with pg_status but no entry for the group: 0 (it never issued a collective there). */
  lastEnqueued?: number;
  lastStarted?: number;
  lastCompleted?: number;
  /** This rank's collectives (not point-to-point) in the group, by collective_seq_id, oldest first. */
  bySeq: Map<number, FrEntry[]>;
}

export interface JobGroup {
  key: string;
  name: string;
  desc?: string;
  /** From pg_config. */
  ranks?: number[];
  members: Map<number, RankInGroup>;
}

/** A group's key; `joined` holds each rank list of the dump at hand joined once (a dump hands one array to every group that shares a list). */
function keyOf(name: string, ranks: readonly number[] | undefined, joined: Map<readonly number[], string>): string {
  if (ranks === undefined) return name;
  let j = joined.get(ranks);
  if (j === undefined) {
    j = ranks.join(",");
    joined.set(ranks, j);
  }
  return `${name}|${j}`;
}

/** Every group any dump names, with the member ranks whose dumps record it. `dumps` holds one dump per rank. */
export function jobGroups(dumps: ReadonlyMap<number, FrDump>): { groups: JobGroup[]; truncated: boolean } {
  const groups = new Map<string, JobGroup>();
  let truncated = false;
  let listed = 0;
  const joined = new Map<readonly number[], string>();
  const groupFor = (g: FrGroup): JobGroup | undefined => {
    const key = keyOf(g.name, g.ranks, joined);
    let jg = groups.get(key);
    if (jg === undefined) {
      if (groups.size >= MAX_JOB_GROUPS || listed + (g.ranks?.length ?? 0) > MAX_JOB_LISTED_RANKS) {
        truncated = true;
        return undefined;
      }
      listed += g.ranks?.length ?? 0;
      jg = { key, name: g.name, ...(g.desc !== undefined ? { desc: g.desc } : {}), ...(g.ranks ? { ranks: g.ranks } : {}), members: new Map() };
      groups.set(key, jg);
    }
    return jg;
  };
  // Per dump: does it have pg_status at all (2.3+), and which group names it records.
  const hasStatus = new Map<number, boolean>();
  const names = new Map<number, Set<string>>();
  for (const [rank, dump] of dumps) {
    hasStatus.set(rank, dump.hasPgStatus);
    names.set(rank, new Set(dump.groups.map((x) => x.name)));
  }
  for (const [rank, dump] of dumps) {
    joined.clear(); // lists are shared within a dump, not across dumps: keep no dump's joins past it
    const mine = new Map<string, RankInGroup>(); // by group name, for the entries below
    for (const g of dump.groups) {
      const jg = groupFor(g);
      if (jg === undefined) continue;
      if (jg.members.size >= MAX_JOB_RANKS) {
        truncated = true;
        continue;
      }
      const m: RankInGroup = { rank, source: dump.source, bySeq: new Map() };
      if (g.lastEnqueued !== undefined) m.lastEnqueued = g.lastEnqueued;
      if (g.lastStarted !== undefined) m.lastStarted = g.lastStarted;
      if (g.lastCompleted !== undefined) m.lastCompleted = g.lastCompleted;
      // In pg_config but not in pg_status: the rank made the group's communicator and never issued a collective on it.
      if (g.statusFrom === undefined && hasStatus.get(rank) === true) {
        m.lastEnqueued = 0;
        m.lastCompleted = 0;
      }
      jg.members.set(rank, m);
      mine.set(g.name, m);
    }
    for (const e of dump.entries) {
      const name = groupNameOf(e);
      const m = name !== undefined ? mine.get(name) : undefined;
      if (m === undefined || e.isP2p || e.seq === undefined) continue;
      const list = m.bySeq.get(e.seq);
      if (list) list.push(e);
      else m.bySeq.set(e.seq, [e]);
    }
  }
  foldNameOnly(groups);
  // A member rank whose dump has pg_status but does not name the group never made its communicator.
  for (const g of groups.values()) {
    if (g.ranks === undefined) continue;
    const candidates = g.ranks.length <= dumps.size ? g.ranks : [...dumps.keys()].filter((r) => inSorted(g.ranks as number[], r));
    for (const r of candidates) {
      const dump = dumps.get(r);
      if (dump === undefined || g.members.has(r) || hasStatus.get(r) !== true || names.get(r)?.has(g.name) === true) continue;
      if (g.members.size >= MAX_JOB_RANKS) break;
      g.members.set(r, { rank: r, source: dump.source, lastEnqueued: 0, lastCompleted: 0, bySeq: new Map() });
    }
  }
  return { groups: [...groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.key < b.key ? -1 : 1)), truncated };
}

/** A group seen without a rank list (no pg_config) joins the one group of that name that has a list. */
function foldNameOnly(groups: Map<string, JobGroup>): void {
  for (const [key, g] of groups) {
    if (g.ranks !== undefined) continue;
    const ranked = [...groups.values()].filter((x) => x.name === g.name && x.ranks !== undefined);
    const into = ranked[0];
    if (ranked.length !== 1 || into === undefined) continue;
    for (const [r, m] of g.members) if (!into.members.has(r)) into.members.set(r, m);
    if (into.desc === undefined && g.desc !== undefined) into.desc = g.desc;
    groups.delete(key);
  }
}

function inSorted(xs: readonly number[], x: number): boolean {
  let lo = 0;
  let hi = xs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = xs[mid] as number;
    if (v === x) return true;
    if (v < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
