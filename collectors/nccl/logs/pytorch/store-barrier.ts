/**
 * PyTorch's store-based barrier at init (torch/distributed/distributed_c10d.py `_store_based_barrier`,
 * run by init_process_group and new_group): every rank adds itself to a counter in the rendezvous
 * store and waits until world_size ranks have; after the timeout it raises, in its two wordings:
 *
 *   Timed out initializing process group in store based barrier on rank: 7, for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)
 *   Timed out initializing process group in store based barrier on rank 7, for key: store_based_barrier_key:32 (world_size=8, num_workers_joined=4, timeout=0:00:30)
 *
 * (the second from PyTorch 2.0, as DistStoreError; some releases add ` error=...`). While it waits, a
 * rank logs every 10 s (every 10 s + world_size/1000 s from 2.0; with the seconds waited from 2.2,
 * at debug level):
 *
 *   Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:2 (world_size=8, worker_count=1, timeout=0:30:00)
 *   Waiting in store based barrier to initialize process group for 30.02 secondsrank: 0, key: ... (world_size=8, num_workers_joined=1, timeout=0:30:00 error=...)
 *
 * One line in, one fact out, cut at fixed words with indexOf; the reader keeps a log's facts
 * (bounded), the findings put the ranks of one key together: fewer ranks joined than the world has
 * is a hang at init (the others never reached the barrier); more is another job sharing the store.
 * A rank still waiting for WAIT_HANG_S, with nobody joining meanwhile, is one too, before the timeout
 * (with more ranks joined than the world has, too: `while worker_count != world_size` never ends).
 */
import { find, intAfter, readInt, pos } from "../parse/scan.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { hangSuspected, rankBehind } from "../../verdict/finding.js";
import { hangSuspectedWords, rankBehindWords } from "../../verdict/words.js";

const MARK = "Timed out initializing process group in store based barrier on rank";
const WAIT_MARK = "Waiting in store based barrier to initialize process";
/** A line without this is no barrier's (evidence.ts gates the readers on it). */
export const STORE_BARRIER_MARKS: readonly string[] = ["store based barrier"];
/** Facts kept per log: a job's ranks each print one per barrier. */
const MAX_FACTS = 4096;
/** Seconds between two waiting lines of one rank (PyTorch's logging interval, at least 10 s). */
const WAIT_LINE_S = 10;
/** Seconds of waiting, with no rank joining, that make a hang at init before PyTorch's timeout. */
export const WAIT_HANG_S = 30;

export interface StoreBarrierTimeout {
  rank: number;
  key: string;
  worldSize?: number;
  joined?: number;
  /** The count's word: `worker_count` (PyTorch 1.x, whose loop waits for the count to equal the world's), `num_workers_joined` (2.x). */
  counter?: "worker_count" | "num_workers_joined";
  timeout?: string;
  /** `file:line`. */
  where: string;
}

/** The fact of one line, or undefined when it is no store-barrier timeout. */
export function parseStoreBarrier(s: string, where: string): StoreBarrierTimeout | undefined {
  const end = s.length;
  const m = s.indexOf(MARK);
  if (m < 0) return undefined;
  let i = m + MARK.length;
  if (s.charCodeAt(i) === 58 /* : */) i++;
  while (s.charCodeAt(i) === 32) i++;
  const rank = readInt(s, i, end);
  if (rank === undefined) return undefined;
  const k = find(s, "for key: ", pos, end);
  if (k < 0) return undefined;
  return withBarrierFields({ rank, key: "", where }, s, k + 9);
}

/** The key from keyStart to ` (`, then the parenthesised counts and timeout, into fact. */
function withBarrierFields<T extends StoreBarrierTimeout>(fact: T, s: string, keyStart: number): T {
  const end = s.length;
  const open = s.indexOf(" (", keyStart);
  fact.key = s.slice(keyStart, open < 0 ? end : open).trim();
  if (open < 0) return fact;
  const world = intAfter(s, "world_size=", open, end);
  const old = intAfter(s, "worker_count=", open, end);
  const joined = old ?? intAfter(s, "num_workers_joined=", open, end);
  if (joined !== undefined) fact.counter = old !== undefined ? "worker_count" : "num_workers_joined";
  const t = find(s, "timeout=", open, end);
  if (world !== undefined) fact.worldSize = world;
  if (joined !== undefined) fact.joined = joined;
  if (t >= 0) {
    let e = t + 8;
    while (e < end && s.charCodeAt(e) !== 41 /* ) */ && s.charCodeAt(e) !== 32) e++;
    fact.timeout = s.slice(t + 8, e);
  }
  return fact;
}

/** One "Waiting in store based barrier" line: the rank still waits, `seconds` so far where the line says. */
export interface StoreBarrierWait extends StoreBarrierTimeout {
  seconds?: number;
}

/** The fact of a waiting line, or undefined when it is none. */
export function parseStoreBarrierWait(s: string, where: string): StoreBarrierWait | undefined {
  const end = s.length;
  const m = s.indexOf(WAIT_MARK);
  if (m < 0) return undefined;
  const r = find(s, "rank: ", m, end);
  if (r < 0) return undefined;
  const rank = readInt(s, r + 6, end);
  if (rank === undefined) return undefined;
  const k = find(s, "key: ", pos, end);
  if (k < 0) return undefined;
  const fact: StoreBarrierWait = withBarrierFields({ rank, key: "", where }, s, k + 5);
  const f = find(s, " for ", m, r);
  if (f >= 0) {
    const sec = Number.parseFloat(s.slice(f + 5, r));
    if (Number.isFinite(sec) && sec >= 0) fact.seconds = sec;
  }
  return fact;
}

/** The store-barrier timeouts of one log, in order (bounded). */
export class StoreBarrierReader {
  readonly timeouts: StoreBarrierTimeout[] = [];
  readonly waits: StoreBarrierWait[] = [];

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (text.indexOf("store based barrier") < 0) return;
    const where = `${this.source}:${lineNo}`;
    if (this.timeouts.length < MAX_FACTS) {
      const f = parseStoreBarrier(text, where);
      if (f !== undefined) return void this.timeouts.push(f);
    }
    if (this.waits.length < MAX_FACTS) {
      const w = parseStoreBarrierWait(text, where);
      if (w !== undefined) this.waits.push(w);
    }
  }
}

/**
 * Ranks still waiting in a barrier no timeout line reports: by key, those that waited WAIT_HANG_S
 * or more (the seconds a line gives, else 10 s per line) while the count of ranks joined stayed
 * below the world's. Fewer lines are a barrier that is still filling, not yet a hang.
 */
export function storeBarrierWaitFindings(waits: readonly StoreBarrierWait[], timeouts: readonly StoreBarrierTimeout[]): Finding[] {
  const timedOut = new Set(timeouts.map((t) => t.key));
  const byKey = new Map<string, StoreBarrierWait[]>();
  for (const w of waits) {
    if (timedOut.has(w.key)) continue;
    const list = byKey.get(w.key);
    if (list === undefined) byKey.set(w.key, [w]);
    else list.push(w);
  }
  const out: Finding[] = [];
  for (const [key, ws] of byKey) {
    const world = ws.find((w) => w.worldSize !== undefined)?.worldSize;
    const counts = ws.flatMap((w) => (w.joined !== undefined ? [w.joined] : []));
    if (world === undefined || counts.length === 0) continue;
    const joined = counts[counts.length - 1] as number;
    // Complete, or somebody joined meanwhile: the barrier is filling, slowly. More than the world
    // (another launch on the same store) never completes in 1.x, whose loop waits until the count
    // equals it; 2.x's ends when any rank's add saw the world's count, which it may have.
    if (joined === world || Math.max(...counts) !== Math.min(...counts)) continue;
    if (joined > world && ws.some((w) => w.counter !== "worker_count")) continue;
    const waited = new Map<number, number>();
    for (const w of ws) waited.set(w.rank, Math.max(waited.get(w.rank) ?? 0, w.seconds ?? 0) + (w.seconds === undefined ? WAIT_LINE_S : 0));
    // More than the world in 1.x: no wait ends, however short the lines show it (nccl-pasted 390: two lines per rank).
    const ranks = [...waited].filter(([, sec]) => joined > world || sec >= WAIT_HANG_S).map(([r]) => r);
    if (ranks.length === 0) continue;
    ranks.sort((a, b) => a - b);
    out.push(
      hangSuspected({
        severity: "warning",
        summary: hangSuspectedWords.storeBarrierWaiting({
          key,
          ranks,
          world,
          joined,
          seconds: Math.max(...ranks.map((r) => waited.get(r) ?? 0)),
          timeout: ws.find((w) => w.timeout)?.timeout,
        }),
        ranks,
        processes: [],
        comm_id: null,
        evidence: ws.map((w) => w.where).slice(0, 5),
      }),
      ...absentFinding(
        key,
        [...waited.keys()].sort((a, b) => a - b),
        world,
        joined,
        ws.map((w) => w.where),
      ),
    );
  }
  return out;
}

/**
 * The ranks that never joined a barrier, where they can be named: every rank that joined is seen
 * (named = joined), and they are few (at most 10 and a quarter of the world, as for RAS's lists).
 * The ranks are taken as 0..world-1; a subgroup synchronized locally
 * (new_group(use_local_synchronization=True)) prints global ranks, which the count check below rules
 * out unless they happen to be 1..world-1, where rank 0 would be named wrongly.
 */
function absentRanks(named: readonly number[], world: number | undefined, joined: number | undefined): number[] {
  if (world === undefined || joined === undefined || named.length !== joined || joined >= world) return [];
  const missing = world - joined;
  if (missing > 10 || missing * 4 > world) return [];
  const seen = new Set(named);
  const out: number[] = [];
  for (let r = 0; r < world; r++) if (!seen.has(r)) out.push(r);
  return out.length === missing ? out : [];
}

/** The rank_behind of the ranks absentRanks names (none: none). */
function absentFinding(key: string, named: readonly number[], world: number | undefined, joined: number | undefined, evidence: readonly string[]): Finding[] {
  const ranks = absentRanks(named, world, joined);
  if (ranks.length === 0) return [];
  return [
    rankBehind({
      severity: "warning",
      summary: rankBehindWords.storeBarrierAbsent({ ranks, key, waiting: named }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: evidence.slice(0, 5),
    }),
  ];
}

/** One finding per barrier key: the ranks that timed out waiting, how many of how many joined. */
export function storeBarrierFindings(timeouts: readonly StoreBarrierTimeout[]): Finding[] {
  const byKey = new Map<string, StoreBarrierTimeout[]>();
  for (const t of timeouts) {
    const list = byKey.get(t.key);
    if (list === undefined) byKey.set(t.key, [t]);
    else list.push(t);
  }
  const out: Finding[] = [];
  for (const [key, ts] of byKey) {
    const ranks = uniq(ts.map((t) => t.rank)).sort((a, b) => a - b);
    const world = ts.find((t) => t.worldSize !== undefined)?.worldSize;
    const joined = Math.max(-1, ...ts.map((t) => t.joined ?? -1));
    out.push(
      hangSuspected({
        summary: hangSuspectedWords.storeBarrier({ key, ranks, world, joined: joined >= 0 ? joined : undefined, timeout: ts.find((t) => t.timeout)?.timeout }),
        ranks,
        processes: [],
        comm_id: null,
        evidence: ts.map((t) => t.where).slice(0, 5),
      }),
      ...absentFinding(
        key,
        ranks,
        world,
        joined >= 0 ? joined : undefined,
        ts.map((t) => t.where),
      ),
    );
  }
  return out;
}
