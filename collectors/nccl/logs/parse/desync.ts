/**
 * Lines that carry no `NCCL` at all but still matter:
 *
 * - TORCH_NCCL_DESYNC_DEBUG report lines (PyTorch TraceUtils.h retrieveDesyncReport), printed as one
 *   multi-line message, so only its first line has a log header:
 *       - [0] Timeout at collective: ALLREDUCE, #315
 *       - To our best knowledge, ranks [47] are the lagging ranks that caused this timeout. They never joined any collectives
 *         - [47] joined but didn't finish collective #41207 (count from 1)
 *           [7] finished collective #182, but didn't join collective #183 (count from 1)
 *         #315 started ranks:            [0, 1, 2] started ALLREDUCE
 *   A snapshot line `[ranks] started OP` does not repeat its `#seq`; the caller pairs it with the
 *   preceding `snapshot_seq` event of the same stream.
 * - Flight Recorder analyzer (fr_trace) text: `Not all ranks joining collective: sequence number: 31117`,
 *   `missing ranks: {3, 4, 5, 6, 7}`.
 * - Continuation lines of PyTorch errors: `socketProgressOpt: Call to recv from 1.2.3.4<5> failed : Connection reset by peer`,
 *   `[rank3]: NET/OFI Request 0x.. completed with error. RC: 113. ...` (quoted-net.ts).
 * - A COLL line that lost its header in a torn write: `Broadcast: opCount 1 sendbuff ...`.
 */
import type { NcclEvent, PtDesyncEvent, PtFlightRecorderEvent, WarnEvent } from "./types.js";
import { parseColl } from "./coll.js";
import { quotedNetError } from "./quoted-net.js";
import { parsePrefix } from "./prefix.js";
import { classifyWarn } from "./warn.js";
import { UNIQUE_ID, uniqueIdFetch } from "./unique-id.js";
import { find, isAlpha, isSpace, pos, readInt, readRankList, skipSpaces, tokenEnd, trimEnd } from "./scan.js";

/** Rank list in the brackets that close just before index `close` (`[0, 1, 2]`); undefined if none. */
function ranksBefore(s: string, close: number, min: number): [number[], number] | undefined {
  if (s.charCodeAt(close) !== 93) return undefined;
  const open = s.lastIndexOf("[", close);
  if (open < min) return undefined;
  const ranks = readRankList(s, open + 1, close);
  return ranks === undefined ? undefined : [ranks, open];
}

function base<T extends PtDesyncEvent | PtFlightRecorderEvent>(s: string, contentStart: number, ev: T): T {
  const pre = parsePrefix(s, 0, contentStart, true);
  if (pre.launcher !== undefined) {
    ev.launcher = pre.launcher;
    if (pre.launcher.rank !== undefined) ev.launcherRank = pre.launcher.rank;
    if (pre.launcher.pid !== undefined) ev.pid = pre.launcher.pid;
  }
  ev.headerless = true;
  return ev;
}

function seqAfterHash(s: string, from: number, end: number): number | undefined {
  const h = s.indexOf("#", from);
  return h < 0 || h >= end ? undefined : readInt(s, h + 1, end);
}

function desync(s: string, end: number): PtDesyncEvent | PtFlightRecorderEvent | undefined {
  let k: number;
  if ((k = find(s, "] Timeout at collective: ", 0, end)) >= 0) {
    const r = ranksBefore(s, k, 0);
    if (r === undefined) return undefined;
    const cs = k + 25;
    let ce = cs;
    while (ce < end && s.charCodeAt(ce) !== 44 && !isSpace(s.charCodeAt(ce))) ce++;
    const ev: PtDesyncEvent = { kind: "pt_desync", what: "timeout_at", ranks: r[0], collective: s.slice(cs, ce) };
    const seq = seqAfterHash(s, ce, end);
    if (seq !== undefined) ev.seq = seq;
    return base(s, dashStart(s, r[1]), ev);
  }
  if ((k = find(s, "] are the lagging ranks", 0, end)) >= 0) {
    const r = ranksBefore(s, k, 0);
    if (r === undefined) return undefined;
    return base(s, dashStart(s, r[1]), { kind: "pt_desync", what: "never_joined", ranks: r[0] });
  }
  if ((k = find(s, "] joined but didn't finish collective #", 0, end)) >= 0) {
    const r = ranksBefore(s, k, 0);
    const seq = readInt(s, k + 39, end);
    if (r === undefined || seq === undefined) return undefined;
    return base(s, dashStart(s, r[1]), { kind: "pt_desync", what: "joined_not_finished", ranks: r[0], seq });
  }
  if ((k = find(s, "] finished collective #", 0, end)) >= 0) {
    const r = ranksBefore(s, k, 0);
    const seq = readInt(s, k + 23, end);
    if (r === undefined || seq === undefined) return undefined;
    const ev: PtDesyncEvent = { kind: "pt_desync", what: "finished_not_joined", ranks: r[0], seq };
    const nk = find(s, "didn't join collective #", k, end);
    const next = nk >= 0 ? readInt(s, nk + 24, end) : undefined;
    if (next !== undefined) ev.nextSeq = next;
    return base(s, r[1], ev);
  }
  for (const state of ["started", "finished"] as const) {
    if ((k = find(s, ` ${state} ranks:`, 0, end)) >= 0) {
      const h = s.lastIndexOf("#", k);
      const seq = h < 0 ? undefined : readInt(s, h + 1, k);
      if (seq === undefined || pos !== k) return undefined;
      return base(s, h, { kind: "pt_desync", what: "snapshot_seq", seq, state });
    }
    if ((k = find(s, `] ${state} `, 0, end)) >= 0) {
      const r = ranksBefore(s, k, 0);
      if (r === undefined) return undefined;
      const cs = k + state.length + 3;
      const collective = s.slice(cs, tokenEnd(s, cs, end));
      if (collective.length === 0) return undefined;
      return base(s, r[1], { kind: "pt_desync", what: "snapshot_ranks", ranks: r[0], state, collective });
    }
  }
  if ((k = find(s, "Not all ranks joining collective", 0, end)) >= 0) {
    const ev: PtFlightRecorderEvent = { kind: "pt_flight_recorder", what: "not_all_joined" };
    const sk = find(s, "sequence number:", k, end);
    const seq = sk >= 0 ? readInt(s, skipSpaces(s, sk + 16, end), end) : undefined;
    if (seq !== undefined) ev.seq = seq;
    return base(s, k, ev);
  }
  if ((k = find(s, "missing ranks: {", 0, end)) >= 0) {
    const close = s.indexOf("}", k);
    const ranks = close > k && close < end ? readRankList(s, k + 16, close) : undefined;
    if (ranks === undefined) return undefined;
    return base(s, k, { kind: "pt_flight_recorder", what: "missing_ranks", ranks });
  }
  return undefined;
}

/** Start of a `- [r] ...` item: the dash before the bracket when there is one. */
function dashStart(s: string, open: number): number {
  let i = open;
  while (i > 0 && isSpace(s.charCodeAt(i - 1))) i--;
  return i > 0 && s.charCodeAt(i - 1) === 45 ? i - 1 : open;
}

/** The ranks of PyTorch's failed ncclUniqueId fetch from the store (nccl-pasted 295, unique-id.ts), into ev. */
function uniqueIdRanks(s: string, i: number, end: number, ev: WarnEvent): void {
  const f = uniqueIdFetch(s, i, end);
  if (f?.self !== undefined) ev.selfRank = f.self;
  if (f?.peer !== undefined) ev.peerRank = f.peer;
}

const RPC_AGENT = "RPC agent for ";
const RPC_ERROR = " encountered error when ";

/**
 * The workers of PyTorch RPC's TensorPipe agent that lost a connection, into ev (nccl-pasted 699):
 * `[W tensorpipe_agent.cpp:916] RPC agent for 3 encountered error when sending outgoing request #0
 * to 0: async error on socket: Connection reset by peer`, also `... reading incoming response from
 * 0: ...`. Read only where the workers' names are ranks (numbers; a name such as `trainer1` is none).
 */
function rpcAgentRanks(s: string, i: number, end: number, ev: WarnEvent): void {
  const a = find(s, RPC_AGENT, i, end);
  if (a < 0) return;
  const self = readInt(s, a + RPC_AGENT.length, end);
  if (self === undefined || !s.startsWith(RPC_ERROR, pos)) return;
  const colon = s.indexOf(": ", pos);
  if (colon < 0 || colon > end) return;
  const sp = s.lastIndexOf(" ", colon);
  const peer = readInt(s, sp + 1, colon);
  ev.selfRank = self;
  if (peer !== undefined && pos === colon && (s.startsWith(" to", sp - 3) || s.startsWith(" from", sp - 5))) ev.peerRank = peer;
}

/** Parses a line without NCCL header and without `NCCL`; undefined for ordinary output. */
export function parseHeaderless(s: string, end: number): NcclEvent | undefined {
  end = trimEnd(s, 0, end);
  let k = s.indexOf(": opCount ");
  if (k > 0 && k < end) {
    let st = k;
    while (st > 0 && isAlpha(s.charCodeAt(st - 1))) st--;
    const ev = st < k && (st === 0 || isSpace(s.charCodeAt(st - 1))) ? parseColl(s, st, end) : undefined;
    if (ev !== undefined) {
      ev.headerless = true;
      return ev;
    }
  }
  // A peer's connection reset; or the ncclUniqueId fetch's broken pipe (nccl-pasted 411), not any BrokenPipeError.
  if (((k = s.indexOf(" peer")) >= 0 && k < end) || (s.indexOf("Broken pipe") >= 0 && s.indexOf(UNIQUE_ID) >= 0)) {
    const i = skipSpaces(s, 0, end);
    const ev: WarnEvent = { kind: "warn", warnKind: "other", message: s.slice(i, end), headerless: true };
    classifyWarn(s, i, end, ev);
    if (ev.warnKind === "other") return undefined;
    uniqueIdRanks(s, i, end, ev);
    rpcAgentRanks(s, i, end, ev);
    // The launcher's rank before it (`[rank6]:[W729 ... TCPStore.cpp:125] [c10d] recvValue failed ...: Connection reset by peer`, nccl-pasted 697).
    const pre = parsePrefix(s, 0, end, true);
    if (pre.launcher !== undefined) {
      ev.launcher = pre.launcher;
      if (pre.launcher.rank !== undefined) ev.launcherRank = pre.launcher.rank;
    }
    return ev;
  }
  if (s.indexOf("NET/") >= 0) {
    const ev = quotedNetError(s, end);
    if (ev !== undefined) return ev;
  }
  if (s.indexOf("ollective") >= 0 || s.indexOf("ranks") >= 0 || s.indexOf("] started ") >= 0 || s.indexOf("] finished ") >= 0) {
    return desync(s, end);
  }
  return undefined;
}
