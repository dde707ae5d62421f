/**
 * PyTorch's store-based barrier at init (torch/distributed/distributed_c10d.py `_store_based_barrier`,
 * run by init_process_group and new_group): every rank adds itself to a counter in the rendezvous
 * store and waits until world_size ranks have; after the timeout it raises, in its two wordings:
 *
 *   Timed out initializing process group in store based barrier on rank: 7, for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)
 *   Timed out initializing process group in store based barrier on rank 7, for key: store_based_barrier_key:32 (world_size=8, num_workers_joined=4, timeout=0:00:30)
 *
 * (the second from PyTorch 2.0, as DistStoreError; some releases add ` error=...`). One line in, one
 * fact out, cut at fixed words with indexOf; the reader keeps a log's facts (bounded), the findings
 * put the ranks of one key together: fewer ranks joined than the world has is a hang at init (the
 * others never reached the barrier); more is another job sharing the store.
 */
import { find, intAfter, readInt, pos } from "../parse/scan.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { hangSuspected } from "../../verdict/finding.js";
import { hangSuspectedWords } from "../../verdict/words.js";

const MARK = "Timed out initializing process group in store based barrier on rank";
/** Facts kept per log: a job's ranks each print one per barrier. */
const MAX_FACTS = 4096;

export interface StoreBarrierTimeout {
  rank: number;
  key: string;
  worldSize?: number;
  joined?: number;
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
  const keyStart = k + 9;
  const open = s.indexOf(" (", keyStart);
  const key = s.slice(keyStart, open < 0 ? end : open).trim();
  const fact: StoreBarrierTimeout = { rank, key, where };
  if (open < 0) return fact;
  const world = intAfter(s, "world_size=", open, end);
  const joined = intAfter(s, "worker_count=", open, end) ?? intAfter(s, "num_workers_joined=", open, end);
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

/** The store-barrier timeouts of one log, in order (bounded). */
export class StoreBarrierReader {
  readonly timeouts: StoreBarrierTimeout[] = [];

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (this.timeouts.length >= MAX_FACTS || text.indexOf("store based barrier") < 0) return;
    const f = parseStoreBarrier(text, `${this.source}:${lineNo}`);
    if (f !== undefined) this.timeouts.push(f);
  }
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
    );
  }
  return out;
}
