/**
 * PyTorch's ncclUniqueId fetch that timed out: `RuntimeError: [1] is setting up NCCL communicator and
 * retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got
 * error: Socket Timeout` (PyTorch 1.x, nccl-pasted 721; 2.x: `... got error: wait timeout after
 * 600000ms, keys: ...`). Rank 1 created the communicator and waited the store's timeout for the id
 * rank 0 publishes when it creates the same one: rank 0 never got there (still in an earlier step,
 * stuck, or gone). Rank 0 is behind; rank 1 waits. The store itself answered: no network error. The
 * ranks are global only for key '0' (parse/unique-id.ts). A reset or a broken pipe on the same fetch
 * is a network error (parse/desync.ts). Each rank's first line is kept (first-per-rank.ts).
 */
import { knownRanks } from "../marked-lines.js";
import { UNIQUE_ID, uniqueIdFetch } from "../parse/unique-id.js";
import { find } from "../parse/scan.js";
import { FirstPerRank } from "./first-per-rank.js";
import { rankBehind } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { rankBehindWords } from "../../verdict/words.js";

/** A line without this is no fetch (evidence.ts gates the readers on it). */
export const UNIQUE_ID_MARKS: readonly string[] = [UNIQUE_ID];

export interface UniqueIdWait {
  /** Global ranks (key '0'): the rank that waited, and the rank whose id never came. */
  rank?: number;
  peer?: number;
  where: string;
}

/** `... ncclUniqueId from [0] ... got error: Socket Timeout` → the wait; undefined for any other line or error. */
export function uniqueIdWait(s: string, where: string): UniqueIdWait | undefined {
  const f = uniqueIdFetch(s, 0, s.length);
  if (f === undefined) return undefined;
  const e = find(s, " got error: ", f.end, s.length);
  if (e < 0) return undefined;
  const error = s.slice(e + 12, e + 60);
  if (!error.startsWith("Socket Timeout") && !error.startsWith("wait timeout")) return undefined;
  const out: UniqueIdWait = { where };
  if (f.self !== undefined) out.rank = f.self;
  if (f.peer !== undefined) out.peer = f.peer;
  return out;
}

/** Each rank's first timed-out fetch, in a log named `source`. */
export function uniqueIdWaitReader(source: string): FirstPerRank<UniqueIdWait> {
  return new FirstPerRank(source, UNIQUE_ID, uniqueIdWait);
}

/** One critical rank_behind per rank whose id never came, the ranks that waited for it held up. */
export function uniqueIdWaitFindings(all: readonly UniqueIdWait[]): Finding[] {
  const byPeer = new Map<number | undefined, UniqueIdWait[]>();
  for (const w of all) byPeer.set(w.peer, [...(byPeer.get(w.peer) ?? []), w]);
  return [...byPeer].map(([peer, ws]) => {
    const waiting = knownRanks(ws);
    return rankBehind({
      severity: "critical",
      summary: rankBehindWords.uniqueIdWait({ behind: peer, waiting }),
      ranks: peer !== undefined ? [peer] : [],
      ...(waiting.length > 0 ? { waiting_ranks: waiting } : {}),
      processes: [],
      comm_id: null,
      evidence: ws.slice(0, 5).map((w) => w.where),
    });
  });
}
