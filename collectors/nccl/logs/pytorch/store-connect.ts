/**
 * PyTorch's c10d store client that gave up reaching the store (the rendezvous every rank joins
 * before NCCL starts): `[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while
 * trying to connect to (172.17.0.2, 44737).` (nccl-pasted 635, a Ray worker dialing a Docker bridge
 * address another node cannot reach). The rank never reached the store's host and port
 * (MASTER_ADDR/MASTER_PORT or the address a framework handed over): a network error. The warning
 * it prints while it retries (`The client socket has failed to connect to [...]:29500 (errno: 99
 * ...)`, common on a healthy start) is not read, nor is prose that quotes the words: the line must
 * carry c10d's own context before them (`[c10d]`, `socket.cpp`, `DistNetworkError`, `TimeoutError`).
 * The address is `(host, port)` (PyTorch 2.2+) or `host:port` (2.0, nccl-pasted 693). The time is in s, ms or min (newer PyTorch prints ms). Cut at
 * fixed words; bounded.
 */
import { readInt, pos } from "../parse/scan.js";
import { MarkedLines } from "../marked-lines.js";
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = "The client socket has timed out after ";
/** A line without this is none of the client's (evidence.ts gates the readers on it). */
export const STORE_CONNECT_MARKS: readonly string[] = [MARK];
const MAX_FAILURES = 1024;
/** c10d's own context, one of which comes before the words on its line. */
const CONTEXT = ["[c10d]", "socket.cpp", "DistNetworkError", "TimeoutError"];
/** Seconds per unit of the time it gave up after. */
const UNITS: readonly [string, number][] = [
  ["ms ", 0.001],
  ["s ", 1],
  ["min ", 60],
];

export interface StoreConnectTimeout {
  seconds: number;
  /** `172.17.0.2:44737`, or the host alone where the line was cut before the port. */
  peer: string;
  where: string;
}

/** `... The client socket has timed out after 1800s while trying to connect to (host, port).` → the timeout. */
export function storeConnectTimeout(s: string, where: string): StoreConnectTimeout | undefined {
  const k = s.indexOf(MARK);
  if (k < 0 || !CONTEXT.some((c) => s.lastIndexOf(c, k) >= 0)) return undefined;
  const n = readInt(s, k + MARK.length, Math.min(s.length, k + MARK.length + 12));
  if (n === undefined) return undefined;
  const unit = UNITS.find(([u]) => s.startsWith(u, pos));
  if (unit === undefined) return undefined;
  const seconds = Math.round(n * unit[1]);
  const to = s.indexOf("connect to ", pos);
  if (to < 0 || to - pos > 40) return undefined;
  const a = to + 11;
  // 2.2+: `(172.17.0.2, 44737)`; 2.0: `192.0.0.1:1234.` or `[::1]:29500`.
  const paren = s.charCodeAt(a) === 40; /* ( */
  const close = paren ? s.indexOf(")", a) : s.indexOf(" ", a);
  let inner = s.slice(paren ? a + 1 : a, close < 0 ? s.length : close).trim();
  if (!paren && inner.endsWith(".")) inner = inner.slice(0, -1);
  // Without parentheses only an address: `host:port` or `[v6]:port` (`... to the server.` is words).
  if (inner === "" || (!paren && inner.indexOf(":") < 0)) return undefined;
  const comma = inner.lastIndexOf(",");
  const peer = (paren && comma > 0 ? `${inner.slice(0, comma).trim()}:${inner.slice(comma + 1).trim()}` : inner).slice(0, 120);
  return { seconds, peer, where };
}

/** Each store client's timeout, in a log named `source`. */
export function storeConnectReader(source: string): MarkedLines<StoreConnectTimeout> {
  return new MarkedLines(source, STORE_CONNECT_MARKS, storeConnectTimeout, MAX_FAILURES);
}

/** One critical network_error for all of them: the store addresses no rank reached, and how long they tried. */
export function storeConnectFindings(all: readonly StoreConnectTimeout[]): Finding[] {
  if (all.length === 0) return [];
  const peers = [...new Set(all.map((t) => t.peer))];
  return [
    networkError({
      summary: networkErrorWords.storeConnect({ peers, seconds: Math.max(...all.map((t) => t.seconds)), count: all.length }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence: all.slice(0, 5).map((t) => t.where),
      ...(all.length > 1 ? { count: all.length } : {}),
    }),
  ];
}
