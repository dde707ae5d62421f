/**
 * The hot path of live ingestion, on bytes. With NCCL_DEBUG_SUBSYS=COLL nearly every line is a
 * COLL line of the process that writes the file, `host:pid:tid [dev] NCCL INFO Op: opCount ..
 * comm 0x.. ..`. Such a line is matched in the read buffer, before it is ever decoded: a byte
 * compare for the writer's `host:pid:` and short loops over bytes that validate every field up to
 * the comm pointer as strictly as the full parser (parse-header.ts, parse-coll.ts), with no native call and no
 * allocation per line (each native call, even a 4-byte slice, costs ~100 ns, the whole budget).
 * The opCount is parsed to a number; the op and comm pointer strings come from small caches (a
 * job uses a handful of each). Every other line, and any line not of exactly this shape
 * (a torn line holding a second writer's header, a WARN, odd bytes), is declined and goes to
 * parseLine, which gives the same fields for every line this accepts (tested on every capture).
 */

const SPACE = 0x20;
const OPCOUNT = Buffer.from(": opCount ", "latin1");
const INFO = Buffer.from(" NCCL INFO ", "latin1");
const NRANKS = Buffer.from(" [nranks=", "latin1");
const STREAM = Buffer.from(" stream ", "latin1");
/** Longest op name the full parser reads (parse-coll.ts collStart). */
const MAX_OP = 24;
/** Cache entries per kind before a cache is cleared (a job has a handful of ops and pointers). */
const MAX_CACHED = 256;
/** Pointers up to this many hex digits are cached by value (the key stays an exact double). */
const MAX_KEY_DIGITS = 12;
/** opCounts up to this many hex digits are exact doubles; longer ones go to the full parser. */
const MAX_OPCOUNT_DIGITS = 13;

export interface CollFields {
  op: string;
  /** NCCL's opCount, parsed from its hex. */
  opCount: number;
  comm: string;
}

type Slicer = { latin1Slice?: (s: number, e: number) => string };
const FAST = typeof (Buffer.prototype as Slicer).latin1Slice === "function";

function latin1(buf: Buffer, s: number, e: number): string {
  return FAST ? (buf as unknown as Required<Slicer>).latin1Slice(s, e) : buf.toString("latin1", s, e);
}

function hexValue(b: number | undefined): number {
  if (b === undefined) return -1;
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}

/** Index after 1..max decimal digits at i, or -1. */
function digits(b: Buffer, i: number, end: number, max: number): number {
  const from = i;
  while (i < end) {
    const c = b[i] as number;
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  return i === from || i - from > max ? -1 : i;
}

/** Index after a %p value at i (`0x` + hex digits, or `(nil)`), or -1. */
function pointerEnd(b: Buffer, i: number, end: number): number {
  if (b[i] === 0x28) return i + 5 <= end && b[i + 1] === 0x6e && b[i + 2] === 0x69 && b[i + 3] === 0x6c && b[i + 4] === 0x29 ? i + 5 : -1;
  if (b[i] !== 0x30 || b[i + 1] !== 0x78) return -1;
  let k = i + 2;
  while (k < end && hexValue(b[k]) >= 0) k++;
  return k === i + 2 ? -1 : k;
}

/** Index after a decimal value at i (optional '-', digits; a count may exceed 15 digits), or -1. */
function decimalEnd(b: Buffer, i: number, end: number, isCount: boolean): number {
  if (b[i] === 0x2d) i++;
  return digits(b, i, end, isCount ? end : 15);
}

/**
 * The header after the writer's `host:pid:` must be exactly `tid [dev] NCCL INFO ` (what
 * parse-header.ts reads as an INFO header). Returns the index after it, or -1.
 */
function infoHeaderEnd(b: Buffer, i: number, end: number): number {
  i = digits(b, i, end, 10);
  if (i < 0 || b[i] !== SPACE || b[i + 1] !== 0x5b) return -1;
  i = digits(b, i + 2, end, 6);
  if (i < 0 || i + 12 > end || b[i] !== 0x5d) return -1;
  for (let k = 0; k < INFO.length; k++) if (b[i + 1 + k] !== INFO[k]) return -1;
  return i + 1 + INFO.length;
}

/** NCCL's fixed field order before `comm`: first letter, key length, and value kind of each. */
const PTR = 0, DEC = 1, COUNT = 2;
// prettier-ignore
const BEFORE_COMM = Uint8Array.from([
  0x73, 8, PTR, /* sendbuff */ 0x72, 8, PTR, /* recvbuff */ 0x63, 5, COUNT, /* count */
  0x64, 8, DEC, /* datatype */ 0x6f, 2, DEC, /* op */ 0x72, 4, DEC, /* root */
]);

/**
 * From the blank after the opCount, reads ` sendbuff P recvbuff P count N datatype N op N root N
 * comm `, keys as parse-coll.ts's fixed-order reader recognises them (the blank before, the first
 * letter, the blank after) and values validated as strictly. Returns the index of the comm
 * pointer, or -1 when the line is not exactly in this order (the full parser decides).
 */
function commValueAt(b: Buffer, i: number, end: number): number {
  for (let f = 0; f < BEFORE_COMM.length; f += 3) {
    const len = BEFORE_COMM[f + 1] as number;
    if (i + len + 2 >= end || b[i] !== SPACE || b[i + 1] !== BEFORE_COMM[f] || b[i + len + 1] !== SPACE) return -1;
    const kind = BEFORE_COMM[f + 2];
    i = kind === PTR ? pointerEnd(b, i + len + 2, end) : decimalEnd(b, i + len + 2, end, kind === COUNT);
    if (i < 0) return -1;
  }
  if (i + 6 >= end || b[i] !== SPACE || b[i + 1] !== 0x63 || b[i + 2] !== 0x6f || b[i + 3] !== 0x6d || b[i + 4] !== 0x6d || b[i + 5] !== SPACE) return -1;
  return i + 6;
}

/** The rest after the comm pointer must be ` [nranks=N] stream P` and blanks: no second `comm`. */
function tailOk(b: Buffer, i: number, end: number): boolean {
  for (let k = 0; k < NRANKS.length; k++) if (b[i + k] !== NRANKS[k]) return false;
  i = digits(b, i + NRANKS.length, end, 15);
  if (i < 0 || b[i] !== 0x5d) return false;
  i++;
  for (let k = 0; k < STREAM.length; k++) if (b[i + k] !== STREAM[k]) return false;
  i = pointerEnd(b, i + STREAM.length, end);
  if (i < 0) return false;
  while (i < end && b[i] === SPACE) i++;
  return i === end;
}

/** Matches plain COLL lines of one writer. One per followed file. */
export class CollByteMatcher {
  private prefix: Buffer = Buffer.alloc(0);
  private readonly ops = new Map<number, string>();
  private readonly ptrs = new Map<number, string>();
  /** The fields of the last line match() accepted; the object is reused. */
  readonly fields: CollFields = { op: "", opCount: 0, comm: "" };

  /** The `host:pid:` every line of this writer starts with (as decoded text; matched as UTF-8). */
  setWriter(prefix: string): void {
    this.prefix = Buffer.from(prefix, "utf8");
  }

  hasWriter(): boolean {
    return this.prefix.length > 0;
  }

  /** Whether buf[s, e) is a plain COLL line of the writer; if so its fields are in `fields`. */
  match(buf: Buffer, s: number, e: number): boolean {
    const p = this.prefix;
    const pl = p.length;
    if (pl === 0 || e - s <= pl + 16) return false;
    for (let k = 0; k < pl; k++) if (buf[s + k] !== p[k]) return false;
    const opStart = infoHeaderEnd(buf, s + pl, e);
    if (opStart < 0) return false;
    let j = opStart;
    while (j < e && j - opStart < MAX_OP) {
      const c = (buf[j] as number) | 0x20;
      if (c < 0x61 || c > 0x7a) break;
      j++;
    }
    if (j === opStart || j + OPCOUNT.length >= e) return false;
    for (let k = 0; k < OPCOUNT.length; k++) if (buf[j + k] !== OPCOUNT[k]) return false;
    const ocStart = j + OPCOUNT.length;
    let ocEnd = ocStart;
    let opCount = 0;
    for (let d = hexValue(buf[ocEnd]); d >= 0 && ocEnd < e; d = hexValue(buf[ocEnd])) {
      opCount = opCount * 16 + d;
      ocEnd++;
    }
    if (ocEnd === ocStart || ocEnd - ocStart > MAX_OPCOUNT_DIGITS || ocEnd >= e || buf[ocEnd] !== SPACE) return false;
    const pStart = commValueAt(buf, ocEnd, e);
    if (pStart < 0) return false;
    const pEnd = pointerEnd(buf, pStart, e);
    if (pEnd < 0 || buf[pStart] !== 0x30 || !tailOk(buf, pEnd, e)) return false;
    const op = this.op(buf, opStart, j);
    const comm = this.pointer(buf, pStart, pEnd);
    if (op === undefined || comm === undefined) return false;
    const f = this.fields;
    f.op = op;
    f.opCount = opCount;
    f.comm = comm;
    return true;
  }

  /** The op name in buf[s, e), from the cache when its bytes match an entry. ASCII only. */
  private op(buf: Buffer, s: number, e: number): string | undefined {
    let h = e - s;
    for (let k = s; k < e; k++) {
      const b = buf[k] as number;
      if (b >= 0x80) return undefined;
      h = (Math.imul(h, 31) + b) | 0;
    }
    const hit = this.ops.get(h);
    if (hit !== undefined && hit.length === e - s && sameText(hit, buf, s)) return hit;
    const text = latin1(buf, s, e);
    if (hit === undefined) this.remember(this.ops, h, text);
    return text;
  }

  /** The comm pointer text in buf[s, e): `0x` + hex digits, cached by value. */
  private pointer(buf: Buffer, s: number, e: number): string | undefined {
    if (buf[s] !== 0x30 || buf[s + 1] !== 0x78) return undefined;
    const n = e - s - 2;
    let v = 0;
    let upper = false;
    for (let k = s + 2; k < e; k++) {
      const c = buf[k] as number;
      const d = hexValue(c);
      if (d < 0) return undefined;
      if (c >= 0x41 && c <= 0x46) upper = true;
      v = v * 16 + d;
    }
    // Only lower-case texts (as %p prints) of up to 12 digits are cached: the key is then exact.
    if (n > MAX_KEY_DIGITS || upper) return latin1(buf, s, e);
    const key = v * 16 + n; // digits in the key: 0x0a and 0xa are different texts
    const hit = this.ptrs.get(key);
    if (hit !== undefined) return hit;
    const text = latin1(buf, s, e);
    this.remember(this.ptrs, key, text);
    return text;
  }

  private remember(cache: Map<number, string>, key: number, text: string): void {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, text);
  }
}

function sameText(text: string, buf: Buffer, s: number): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) !== buf[s + k]) return false;
  return true;
}
