/**
 * Version, communicator init, comm summary and teardown lines.
 *
 *   NCCL version 2.21.5+cuda12.4                       (bare on stdout from rank 0 before 2.8-ish)
 *   comm 0x.. rank 15 nranks 64 cudaDev 0 nvmlDev 0 - Init COMPLETE                          (2.4)
 *   comm 0x.. rank 0 nranks 2 cudaDev 0 busId 81000 commId 0x.. - Init COMPLETE                (2.16)
 *   ncclCommInitRank comm 0x.. rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId c8000 commId 0x.. - Init COMPLETE
 *   ncclCommSplit comm 0x.. rank 0 nranks 4 ... parent 0x.. splitCount 1 color 0 key 0 - Init COMPLETE
 *   [Rank 0] ncclCommInitRank comm 0x.. ... - Init START                                      (2.29)
 *   comm 0x.. rank 0 nRanks 8 nNodes 4 localRanks 2 localRank 0 MNNVL 0                       (summary)
 *   comm 0x.. rank 0 nranks 16 cudaDev 0 busId 4000 - Abort COMPLETE / Destroy COMPLETE / Abort START
 */
import type { CommInfoEvent, InitEvent, TeardownEvent, VersionEvent } from "./types.js";
import { isAlpha, isDigit, pos, readInt, skipSpaces, tokenEnd } from "./scan.js";

/** Parses `NCCL version X.Y.Z[+cudaA.B| compiled with CUDA A.B]` starting at i (at "NCCL"). */
export function parseVersion(s: string, i: number, end: number): VersionEvent | undefined {
  if (!s.startsWith("NCCL version ", i)) return undefined;
  const vs = i + 13;
  if (!isDigit(s.charCodeAt(vs))) return undefined; // `NCCL version -2.3.4` is not a version
  const major = readInt(s, vs, end);
  if (major === undefined || s.charCodeAt(pos) !== 46) return undefined;
  if (!isDigit(s.charCodeAt(pos + 1))) return undefined;
  const minor = readInt(s, pos + 1, end);
  if (minor === undefined || s.charCodeAt(pos) !== 46) return undefined;
  if (!isDigit(s.charCodeAt(pos + 1))) return undefined;
  const patch = readInt(s, pos + 1, end);
  if (patch === undefined) return undefined;
  const ve = pos;
  const ev: VersionEvent = { kind: "version", version: s.slice(vs, ve), major, minor, patch };
  let c0 = -1;
  if (s.startsWith("+cuda", ve)) c0 = ve + 5;
  else if (s.startsWith(" compiled with CUDA ", ve)) c0 = ve + 20;
  if (c0 > 0) {
    let j = c0;
    while (j < end && (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 46)) j++;
    if (j > c0) ev.cuda = s.slice(c0, j);
  }
  return ev;
}

interface CommFields {
  comm?: string;
  rank?: number;
  nranks?: number;
  cudaDev?: number;
  nvmlDev?: number;
  busId?: string;
  commId?: string;
  parent?: string;
  splitCount?: number;
  color?: number;
  key?: number;
  nNodes?: number;
  localRanks?: number;
  localRank?: number;
}

/** Reads `key value` pairs in [i, end). Unknown keys are skipped; a value may end in '-' (`key 0- Init`). */
function readCommFields(s: string, i: number, end: number): CommFields {
  const f: CommFields = {};
  while (i < end) {
    i = skipSpaces(s, i, end);
    const ke = tokenEnd(s, i, end);
    const vs = skipSpaces(s, ke, end);
    const ve = tokenEnd(s, vs, end);
    if (ke === i || vs >= end) break;
    const key = s.slice(i, ke);
    const str = s.slice(vs, ve);
    const num = readInt(s, vs, ve);
    const numOk = num !== undefined && (pos === ve || s.charCodeAt(pos) === 45);
    // Ranks, counts and device numbers are never negative (`nRanks -1` is a damaged line); only
    // color and key are signed ints in NCCL's API.
    const natOk = numOk && num >= 0;
    switch (key) {
      case "comm":
        f.comm = str;
        break;
      case "parent":
        f.parent = str;
        break;
      case "commId":
        f.commId = str;
        break;
      case "busId":
        f.busId = str;
        break;
      case "rank":
        if (natOk) f.rank = num;
        break;
      case "nranks":
      case "nRanks":
        if (natOk) f.nranks = num;
        break;
      case "cudaDev":
        if (natOk) f.cudaDev = num;
        break;
      case "nvmlDev":
        if (natOk) f.nvmlDev = num;
        break;
      case "splitCount":
      case "childCount":
        if (natOk) f.splitCount = num;
        break;
      case "color":
        if (numOk) f.color = num;
        break;
      case "key":
        if (numOk) f.key = num;
        break;
      case "nNodes":
        if (natOk) f.nNodes = num;
        break;
      case "localRanks":
        if (natOk) f.localRanks = num;
        break;
      case "localRank":
        if (natOk) f.localRank = num;
        break;
      default:
        break;
    }
    i = ve;
  }
  return f;
}

const SUFFIXES: ReadonlyArray<[string, "init" | "abort" | "destroy", "start" | "complete"]> = [
  ["Init COMPLETE", "init", "complete"],
  ["Init START", "init", "start"],
  ["Abort COMPLETE", "abort", "complete"],
  ["Abort START", "abort", "start"],
  ["Destroy COMPLETE", "destroy", "complete"],
  ["Destroy START", "destroy", "start"],
];

/**
 * Parses a message that starts with `comm `, `rank `, `nranks `, `[Rank N] ` or a `ncclComm*`
 * function name. Returns undefined for other `comm ...` messages (e.g. `Connection to proxy`).
 */
export function parseCommLine(s: string, m: number, end: number): InitEvent | CommInfoEvent | TeardownEvent | undefined {
  let i = m;
  if (s.startsWith("[Rank ", i)) {
    const close = s.indexOf("] ", i);
    if (close < 0 || close > i + 20) return undefined;
    i = close + 2;
  }
  let func: string | undefined;
  if (s.startsWith("nccl", i)) {
    const fe = tokenEnd(s, i, end);
    for (let k = i; k < fe; k++) if (!isAlpha(s.charCodeAt(k))) return undefined;
    func = s.slice(i, fe);
    i = skipSpaces(s, fe, end);
  }
  if (!(s.startsWith("comm ", i) || s.startsWith("rank ", i) || s.startsWith("nranks ", i))) return undefined;
  let kvEnd = end;
  let which: (typeof SUFFIXES)[number] | undefined;
  const dash = s.lastIndexOf("- ", end - 2);
  if (dash > i) {
    for (const sfx of SUFFIXES) {
      if (s.startsWith(sfx[0], dash + 2)) {
        which = sfx;
        kvEnd = dash;
        break;
      }
    }
  }
  const f = readCommFields(s, i, kvEnd);
  if (which === undefined) {
    // A summary line; an init/teardown line cut before its suffix (it has cudaDev/busId/commId) is not.
    if (func !== undefined || (f.rank === undefined && f.nranks === undefined)) return undefined;
    if (f.cudaDev !== undefined || f.busId !== undefined || f.commId !== undefined) return undefined;
    const info: CommInfoEvent = { kind: "comm_info" };
    copy(info, f, ["comm", "rank", "nranks", "nNodes", "localRanks", "localRank"]);
    return info;
  }
  if (which[1] === "init") {
    const ev: InitEvent = { kind: "init", phase: which[2] };
    if (func !== undefined) ev.func = func;
    copy(ev, f, ["comm", "rank", "nranks", "nvmlDev", "busId", "commId", "parent", "splitCount", "color", "key"]);
    if (f.cudaDev !== undefined) ev.commCudaDev = f.cudaDev;
    return ev;
  }
  const td: TeardownEvent = { kind: "teardown", what: which[1], phase: which[2] };
  copy(td, f, ["comm", "rank", "nranks", "busId"]);
  if (f.cudaDev !== undefined) td.commCudaDev = f.cudaDev;
  return td;
}

/** `comm 0x7f24c4001af0 rank 4` after NCCL 2.3-2.6's `Destroyed ` (at m): a Destroy COMPLETE with its rank. */
export function parseDestroyed(s: string, m: number, end: number): TeardownEvent | undefined {
  if (!s.startsWith("comm ", m)) return undefined;
  const f = readCommFields(s, m, end);
  if (f.comm === undefined || f.rank === undefined) return undefined;
  const td: TeardownEvent = { kind: "teardown", what: "destroy", phase: "complete" };
  copy(td, f, ["comm", "rank"]);
  return td;
}

function copy<T extends object>(dst: T, src: CommFields, keys: ReadonlyArray<keyof CommFields>): void {
  const d = dst as Record<string, unknown>;
  for (const k of keys) if (src[k] !== undefined) d[k] = src[k];
}

/**
 * Documented grouping key for a communicator made by ncclCommSplit (which prints no commId).
 * NCCL itself derives the child's hash from (parent hash, split count, color), so ranks that
 * agree on these three are in the same child communicator. Pass the PARENT's commId once a
 * later stage has resolved it from the process-local parent pointer.
 */
export function splitCommKey(parentCommId: string, splitCount: number, color: number): string {
  return `${parentCommId}/split${splitCount}/color${color}`;
}
