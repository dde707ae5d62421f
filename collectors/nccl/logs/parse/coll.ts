/**
 * NCCL_DEBUG_SUBSYS=COLL lines, by far the most frequent lines of a debug log:
 *
 *   AllReduce: opCount 1a sendbuff 0x.. recvbuff 0x.. count 64 datatype 7 op 0 root 0 comm 0x.. [nranks=2] stream 0x..
 *
 * (NCCL 2.2 to 2.29 print the same INFO format from ncclEnqueueCheck; RCCL appends
 * `task N globalrank N`; NCCL 2.0/2.1 had no op name and a `size` field.) The parser walks the
 * key/value pairs once; every value is validated, so a line torn by another writer fails here
 * instead of yielding a wrong field.
 *
 * HOT PATH. Character tests are written inline on purpose: calls to functions imported from
 * another module are not inlined by V8 and cost more than the test itself.
 */
import type { CollEvent } from "./types.js";

/** True when the last parseColl() stopped on a token it could not read (possible torn line). */
export let anomaly = false;

/** ncclDataType_t numbering (nccl.h, 2.4+). */
export const NCCL_DATATYPES: readonly string[] = [
  "int8",
  "uint8",
  "int32",
  "uint32",
  "int64",
  "uint64",
  "float16",
  "float32",
  "float64",
  "bfloat16",
  "float8e4m3",
  "float8e5m2",
];

/** ncclRedOp_t numbering; larger values are user-defined (ncclRedOpCreatePreMulSum). */
export const NCCL_REDOPS: readonly string[] = ["sum", "prod", "max", "min", "avg"];

/** Whether s[i, i + name.length) is name (a loop: startsWith() is not inlined by V8). */
function sameAs(s: string, i: number, name: string): boolean {
  for (let k = 0; k < name.length; k++) if (s.charCodeAt(i + k) !== name.charCodeAt(k)) return false;
  return true;
}

/**
 * Op name at i..j, interned for the usual names (one allocation less per line). The candidate is
 * picked on the length and two or three characters, then compared in full: a line torn or garbled
 * inside the name (`AllReduge`) keeps its own text instead of becoming `AllReduce`.
 */
function opName(s: string, i: number, j: number): string {
  const c0 = s.charCodeAt(i);
  const c3 = s.charCodeAt(i + 3);
  const cl = s.charCodeAt(j - 1);
  let known: string | undefined;
  switch (j - i) {
    case 9:
      if (c0 === 65 && c3 === 82 && cl === 101) known = "AllReduce";
      else if (c0 === 65 && c3 === 71 && cl === 114) known = "AllGather";
      else if (c0 === 66 && c3 === 97 && cl === 116) known = "Broadcast";
      break;
    case 13:
      if (c0 === 82 && c3 === 117 && cl === 114) known = "ReduceScatter";
      break;
    case 4:
      if (c0 === 83 && c3 === 100) known = "Send";
      else if (c0 === 82 && c3 === 118) known = "Recv";
      break;
    case 6:
      if (c0 === 82 && c3 === 117 && cl === 101) known = "Reduce";
      else if (c0 === 71 && c3 === 104 && cl === 114) known = "Gather";
      break;
    default:
      break;
  }
  return known !== undefined && sameAs(s, i, known) ? known : s.slice(i, j);
}

/**
 * Index of the ':' of `Name: opCount ` when the message at m is a COLL line, else -1.
 * Cheap: looks at most 24 characters.
 */
export function collStart(s: string, m: number, end: number): number {
  let j = m;
  while (j < end && j - m < 24) {
    const c = s.charCodeAt(j) | 32;
    if (c < 97 || c > 122) break;
    j++;
  }
  // ": opCount ": a few characters first (most non-COLL lines fail there), then all of them
  // (startsWith is not inlined by V8). `Send: o\u0000Count 12` is not a COLL line.
  if (j === m || s.charCodeAt(j) !== 58 || s.charCodeAt(j + 1) !== 32 || s.charCodeAt(j + 2) !== 111) return -1;
  if (s.charCodeAt(j + 4) !== 67 || s.charCodeAt(j + 8) !== 116 || s.charCodeAt(j + 9) !== 32) return -1;
  if (s.charCodeAt(j + 3) !== 112 || s.charCodeAt(j + 5) !== 111 || s.charCodeAt(j + 6) !== 117 || s.charCodeAt(j + 7) !== 110) return -1;
  return j;
}

/** Index just past the last value read by ptrAt/decAt. */
let vEnd = 0;

function isBlankOrEnd(s: string, k: number, end: number): boolean {
  return k >= end || s.charCodeAt(k) === 32 || s.charCodeAt(k) === 9;
}

/**
 * %p value at i: `0x` + hex → its text, `(nil)` → null; undefined when the token is anything
 * else or does not end at a blank (a torn line glued to it). Sets vEnd.
 */
function ptrAt(s: string, i: number, end: number): string | null | undefined {
  if (s.charCodeAt(i) === 40 /* ( */) {
    if (s.charCodeAt(i + 1) !== 110 || s.charCodeAt(i + 4) !== 41 || !isBlankOrEnd(s, i + 5, end)) return undefined;
    vEnd = i + 5;
    return null;
  }
  if (s.charCodeAt(i) !== 48 || s.charCodeAt(i + 1) !== 120) return undefined;
  let k = i + 2;
  while (k < end) {
    const c = s.charCodeAt(k);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) break;
    k++;
  }
  if (k === i + 2 || !isBlankOrEnd(s, k, end)) return undefined;
  vEnd = k;
  return s.slice(i, k);
}

/**
 * Decimal at i (optional '-', 1..15 digits, so always exact and never NaN) that ends at a blank,
 * the end, or `stop`. Sets vEnd.
 */
function decAt(s: string, i: number, end: number, stop = 32): number | undefined {
  let k = i;
  let neg = false;
  if (k < end && s.charCodeAt(k) === 45) {
    neg = true;
    k++;
  }
  const first = k;
  let v = 0;
  while (k < end) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
    k++;
  }
  const n = k - first;
  if (n === 0 || n > 15) return undefined;
  if (k < end) {
    const c = s.charCodeAt(k);
    if (c !== 32 && c !== 9 && c !== stop) return undefined;
  }
  vEnd = k;
  return neg ? -v : v;
}

/** decAt for a field that cannot be negative (count, datatype, op, nranks): `-1` there is malformed. */
function natAt(s: string, i: number, end: number, stop = 32): number | undefined {
  const n = decAt(s, i, end, stop);
  return n !== undefined && n >= 0 ? n : undefined;
}

/** NCCL's fixed field order after the opCount: (first letter, key length, field) per key. */
const F_SEND = 0,
  F_RECV = 1,
  F_COUNT = 2,
  F_DTYPE = 3,
  F_OP = 4,
  F_ROOT = 5,
  F_COMM = 6,
  F_NRANKS = 7,
  F_STREAM = 8;
// prettier-ignore
const ORDER = Int32Array.from([
  115, 8, F_SEND, /* sendbuff */ 114, 8, F_RECV, /* recvbuff */ 99, 5, F_COUNT, /* count */
  100, 8, F_DTYPE, /* datatype */ 111, 2, F_OP, /* op */ 114, 4, F_ROOT, /* root */
  99, 4, F_COMM, /* comm */ 91, 7, F_NRANKS, /* [nranks= */ 115, 6, F_STREAM, /* stream */
]);

/**
 * Reads ` sendbuff P recvbuff P count N datatype N op N root N comm P [nranks=N] stream P` from i,
 * in NCCL's order. A key is recognised by the blank before it, its first letter and the blank
 * (or '=') after it; the value is validated strictly. Returns the index where it stopped.
 */
function fixedOrder(s: string, i: number, end: number, ev: CollEvent): number {
  for (let f = 0; f < ORDER.length; f += 3) {
    const len = ORDER[f + 1] as number;
    const after = s.charCodeAt(i + len + 1);
    if (s.charCodeAt(i) !== 32 || s.charCodeAt(i + 1) !== ORDER[f] || (after !== 32 && after !== 61)) return i;
    const v = i + len + 2;
    let p: string | null | undefined;
    let n: number | undefined;
    switch (ORDER[f + 2]) {
      case F_SEND:
        if ((p = ptrAt(s, v, end)) === undefined) return i;
        ev.sendbuff = p;
        break;
      case F_RECV:
        if ((p = ptrAt(s, v, end)) === undefined) return i;
        ev.recvbuff = p;
        break;
      case F_COUNT:
        if ((n = natAt(s, v, end)) !== undefined) ev.count = n;
        else if (!countTooLong(s, v, end)) return i;
        break;
      case F_DTYPE:
        if ((n = natAt(s, v, end)) === undefined) return i;
        ev.datatype = n;
        break;
      case F_OP:
        if ((n = natAt(s, v, end)) === undefined) return i;
        ev.redOp = n;
        break;
      case F_ROOT:
        if ((n = decAt(s, v, end)) === undefined) return i;
        ev.root = n;
        break;
      case F_COMM:
        if (typeof (p = ptrAt(s, v, end)) !== "string") return i;
        ev.comm = p;
        break;
      case F_NRANKS:
        if ((n = natAt(s, v, end, 93)) === undefined || s.charCodeAt(vEnd) !== 93) return i;
        ev.nranks = n;
        vEnd++;
        break;
      default:
        if ((p = ptrAt(s, v, end)) === undefined) return i;
        if (p !== null) ev.stream = p;
    }
    i = vEnd;
  }
  return i;
}

/** A count of more than 15 digits: left out rather than rounded. Sets vEnd. */
function countTooLong(s: string, i: number, end: number): boolean {
  let k = i;
  while (k < end && s.charCodeAt(k) >= 48 && s.charCodeAt(k) <= 57) k++;
  if (k - i <= 15 || !isBlankOrEnd(s, k, end)) return false;
  vEnd = k;
  return true;
}

/** One `key value` pair of the generic loop (any order, unknown keys); returns false on a bad token. */
function genericField(s: string, i: number, end: number, ev: CollEvent): boolean {
  if (s.startsWith("[nranks=", i)) {
    const n = natAt(s, i + 8, end, 93);
    if (n === undefined || s.charCodeAt(vEnd) !== 93) return false;
    ev.nranks = n;
    vEnd++;
    return true;
  }
  let ke = i;
  while (ke < end) {
    const c = s.charCodeAt(ke) | 32;
    if (c < 97 || c > 122) break;
    ke++;
  }
  if (ke === i || ke >= end || s.charCodeAt(ke) !== 32) return false;
  const key = s.slice(i, ke);
  const vs = ke + 1;
  let p: string | null | undefined;
  let n: number | undefined;
  switch (key) {
    case "sendbuff":
      return (p = ptrAt(s, vs, end)) !== undefined && ((ev.sendbuff = p), true);
    case "recvbuff":
      return (p = ptrAt(s, vs, end)) !== undefined && ((ev.recvbuff = p), true);
    case "comm":
      return typeof (p = ptrAt(s, vs, end)) === "string" && ((ev.comm = p), true);
    case "stream":
      return (p = ptrAt(s, vs, end)) !== undefined && (p !== null && (ev.stream = p), true);
    case "count":
      if ((n = natAt(s, vs, end)) !== undefined) return ((ev.count = n), true);
      return countTooLong(s, vs, end);
    case "datatype":
      return (n = natAt(s, vs, end)) !== undefined && ((ev.datatype = n), true);
    case "op":
      return (n = natAt(s, vs, end)) !== undefined && ((ev.redOp = n), true);
    case "root":
      return (n = decAt(s, vs, end)) !== undefined && ((ev.root = n), true);
    default:
      return decAt(s, vs, end) !== undefined; // RCCL task/globalrank, NCCL 2.0 size
  }
}

/**
 * Parses the COLL message starting at m (op name) up to end. Returns undefined when the line is
 * malformed before the comm pointer was read (op, opCount and comm are required); fields after
 * a malformed token are dropped and `anomaly` is set so the caller can look for a torn line.
 */
export function parseColl(s: string, m: number, end: number): CollEvent | undefined {
  anomaly = false;
  const colon = collStart(s, m, end);
  if (colon < 0) return undefined;
  const i0 = colon + 10;
  let j = i0;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) break;
    j++;
  }
  if (j === i0 || (j < end && s.charCodeAt(j) !== 32)) return undefined;
  const ev: CollEvent = {
    kind: "coll",
    host: undefined,
    pid: undefined,
    tid: undefined,
    cudaDev: undefined,
    op: opName(s, m, colon),
    opCount: s.slice(i0, j),
    sendbuff: undefined,
    recvbuff: undefined,
    count: undefined,
    datatype: undefined,
    redOp: undefined,
    root: undefined,
    comm: "",
    nranks: undefined,
    stream: undefined,
  };
  let i = fixedOrder(s, j, end, ev);
  let bad = false;
  while (i < end) {
    while (i < end && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
    if (i >= end) break;
    if (!genericField(s, i, end, ev)) {
      bad = true;
      break;
    }
    i = vEnd;
  }
  anomaly = bad;
  return ev.comm === "" ? undefined : ev;
}
