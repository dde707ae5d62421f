/**
 * PyTorch's TCPStore server that waited for its clients and gave up: `torch.distributed.DistStoreError:
 * Timed out after 601 seconds waiting for clients. 1/2 clients joined.` (TCPStore's waitForWorkers,
 * run by the rank that hosts the store, usually rank 0 at MASTER_ADDR:MASTER_PORT; nccl-pasted 733).
 * The other ranks never connected: they crashed or are stuck before init_process_group, started
 * late, or cannot reach the store's host and port. A hang at init (as the store-based barrier's,
 * store-barrier.ts), and the clients that never joined are behind, unnamed: the line counts them.
 * Cut at fixed words; bounded.
 */
import { readInt, pos } from "../parse/scan.js";
import { MarkedLines } from "../marked-lines.js";
import { hangSuspected, rankBehind } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { hangSuspectedWords, rankBehindWords } from "../../verdict/words.js";

const MARK = " seconds waiting for clients. ";
/** A line without this is none of the server's (evidence.ts gates the readers on it). */
export const STORE_CLIENTS_MARKS: readonly string[] = [MARK];
const MAX_TIMEOUTS = 1024;

export interface StoreClientsTimeout {
  seconds: number;
  joined: number;
  expected: number;
  where: string;
}

/** `Timed out after 601 seconds waiting for clients. 1/2 clients joined.` → the counts; undefined otherwise. */
export function storeClientsTimeout(s: string, where: string): StoreClientsTimeout | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  const after = s.lastIndexOf("Timed out after ", k);
  if (after < 0 || k - after > 40) return undefined;
  const seconds = readInt(s, after + 16, k);
  if (seconds === undefined || pos !== k) return undefined;
  const joined = readInt(s, k + MARK.length, s.length);
  if (joined === undefined || s.charCodeAt(pos) !== 47 /* / */) return undefined;
  const expected = readInt(s, pos + 1, s.length);
  if (expected === undefined || !s.startsWith(" clients joined", pos) || joined >= expected) return undefined;
  return { seconds, joined, expected, where };
}

/** Each store server's timeout, in a log named `source`. */
export function storeClientsReader(source: string): MarkedLines<StoreClientsTimeout> {
  return new MarkedLines(source, STORE_CLIENTS_MARKS, storeClientsTimeout, MAX_TIMEOUTS);
}

/** A critical hang at init, and the clients that never joined behind (a warning: the line names none of them). */
export function storeClientsFindings(all: readonly StoreClientsTimeout[]): Finding[] {
  const t = all.reduce<StoreClientsTimeout | undefined>((a, x) => (a === undefined || x.expected - x.joined > a.expected - a.joined ? x : a), undefined);
  if (t === undefined) return [];
  const evidence = all.slice(0, 5).map((x) => x.where);
  return [
    hangSuspected({ summary: hangSuspectedWords.storeClients(t), ranks: [], processes: [], comm_id: null, evidence }),
    rankBehind({
      severity: "warning",
      summary: rankBehindWords.storeClientsAbsent({ missing: t.expected - t.joined, expected: t.expected }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence,
    }),
  ];
}
