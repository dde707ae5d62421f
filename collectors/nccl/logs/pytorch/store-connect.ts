/**
 * PyTorch's c10d store client that gave up reaching the store (the rendezvous every rank joins
 * before NCCL starts): `[E socket.cpp:922] [c10d] The client socket has timed out after 1800s while
 * trying to connect to (172.17.0.2, 44737).` (nccl-pasted 635, a Ray worker dialing a Docker bridge
 * address another node cannot reach). The rank never reached the store's host and port
 * (MASTER_ADDR/MASTER_PORT or the address a framework handed over): a network error. The warning
 * it prints while it retries (`The client socket has failed to connect to [...]:29500 (errno: 99
 * ...)`, common on a healthy start) is not read. Cut at fixed words; bounded.
 */
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = "The client socket has timed out after ";
const MAX_FAILURES = 1024;

export interface StoreConnectTimeout {
  seconds: number;
  /** `172.17.0.2:44737`, or the host alone where the line was cut before the port. */
  peer: string;
  where: string;
}

/** `... The client socket has timed out after 1800s while trying to connect to (host, port).` → the timeout. */
export function storeConnectTimeout(s: string, where: string): StoreConnectTimeout | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  let i = k + MARK.length;
  let seconds = 0;
  const start = i;
  while (i < s.length && i - start < 9 && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) seconds = seconds * 10 + (s.charCodeAt(i++) - 48);
  if (i === start || s.charCodeAt(i) !== 115 /* s */) return undefined;
  const to = s.indexOf("connect to ", i);
  if (to < 0 || to - i > 40) return undefined;
  let a = to + 11;
  if (s.charCodeAt(a) === 40 /* ( */ || s.charCodeAt(a) === 91 /* [ */) a++;
  const close = s.indexOf(")", a);
  const inner = s.slice(a, close < 0 ? s.length : close).trim();
  const comma = inner.lastIndexOf(",");
  const peer = (comma > 0 ? `${inner.slice(0, comma).trim()}:${inner.slice(comma + 1).trim()}` : inner).slice(0, 120);
  return { seconds, peer, where };
}

export class StoreConnectReader {
  readonly timeouts: StoreConnectTimeout[] = [];

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (text.indexOf(MARK) < 0 || this.timeouts.length >= MAX_FAILURES) return;
    const t = storeConnectTimeout(text, `${this.source}:${lineNo}`);
    if (t !== undefined) this.timeouts.push(t);
  }
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
