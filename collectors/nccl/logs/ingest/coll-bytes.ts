/**
 * The hot path of live ingestion, on bytes. With NCCL_DEBUG_SUBSYS=COLL nearly every line is a
 * COLL line of the process that writes the file, `host:pid:tid [dev] NCCL INFO Op: opCount ..
 * comm 0x.. ..`. Such a line is matched in the read buffer, before it is ever decoded: a byte
 * compare for the writer's `host:pid:` and short loops over bytes that validate every field up to
 * the comm pointer as strictly as the full parser (parse/header.ts, parse/coll.ts), with no native
 * call and no allocation per line (a native call costs 20-450 ns here, the whole budget).
 * matchLine() also finds the line's newline on the way, so the splitter's indexOf is skipped.
 * The opCount is parsed to a number; the op name is found by an exact numeric key read with its
 * letters, and the comm pointer is given as a numeric key (its hex value and length), so a caller
 * needs its text only the first time. Every other line, and any line not of exactly this shape
 * (a torn line holding a second writer's header, a WARN, odd bytes), is declined and goes to
 * parseLine, which gives the same fields for every line this accepts (tested on every capture,
 * and fuzzed: test/fuzz/coll-bytes.test.ts).
 */

import { decode } from "../../../follow/line-splitter.js";

const SPACE = 0x20;

/** Fixed text, compared 4 bytes at a time (little-endian words), then its last length % 4 bytes. */
interface Fixed {
  bytes: Buffer;
  words: number[];
}

function fixed(text: string, encoding: "latin1" | "utf8" = "latin1"): Fixed {
  const bytes = Buffer.from(text, encoding);
  const words: number[] = [];
  for (let k = 0; k + 4 <= bytes.length; k += 4) words.push(bytes.readUInt32LE(k));
  return { bytes, words };
}

/**
 * A DataView of the buffer being scanned, so that fixed text is compared 4 bytes at a time (the
 * matcher is about 7 % faster). One for all matchers: consecutive lines share their read buffer,
 * and no matcher keeps an old buffer (a long line's pending buffer) alive.
 */
let lastBuf: Buffer | undefined;
let lastView: DataView | undefined;
function viewOf(buf: Buffer): DataView {
  if (buf !== lastBuf || lastView === undefined) {
    lastView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    lastBuf = buf;
  }
  return lastView;
}

/** Whether b[i, i + f.bytes.length) is f; the caller has checked that these bytes are before `end`. */
function fixedAt(dv: DataView, b: Buffer, i: number, f: Fixed): boolean {
  const w = f.words;
  let k = 0;
  for (let x = 0; x < w.length; x++, k += 4) if (dv.getUint32(i + k, true) !== w[x]) return false;
  const bytes = f.bytes;
  for (; k < bytes.length; k++) if (b[i + k] !== bytes[k]) return false;
  return true;
}

const OPCOUNT = fixed(": opCount ");
const INFO = fixed(" NCCL INFO ");
const NRANKS = fixed(" [nranks=");
const STREAM = fixed(" stream ");
/** Longest op name the full parser reads (parse/coll.ts collStart). */
const MAX_OP = 24;
/** Recent op names and comm pointers remembered per file (a rank has a handful of each). */
const MAX_OPS = 8;
const MAX_PTRS = 16;
/** opCounts up to this many hex digits are exact doubles; longer ones go to the full parser. */
const MAX_OPCOUNT_DIGITS = 13;

export interface CollFields {
  op: string;
  /** NCCL's opCount, parsed from its hex. */
  opCount: number;
  comm: string;
}

/** Byte → hex digit value, -1 for other bytes. Every read below is bounds-checked first: a typed
 * array read past its end makes V8 handle out-of-bounds at that site, which slows every read there. */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c++) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c++) {
  HEX[0x61 + c] = 10 + c;
  HEX[0x41 + c] = 10 + c;
}

function hexValue(b: number): number {
  return HEX[b] as number;
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
  if (i + 2 >= end) return -1;
  if (b[i] === 0x28) return i + 5 <= end && b[i + 1] === 0x6e && b[i + 2] === 0x69 && b[i + 3] === 0x6c && b[i + 4] === 0x29 ? i + 5 : -1;
  if (b[i] !== 0x30 || b[i + 1] !== 0x78) return -1;
  let k = i + 2;
  while (k < end && (HEX[b[k] as number] as number) >= 0) k++;
  return k === i + 2 ? -1 : k;
}

/**
 * Index after a decimal value at i, or -1: digits (a count may exceed 15 digits), with a '-' only
 * where the field may be negative (root); `-1` as a count, datatype or op is malformed, as parse/coll.ts reads it.
 */
function decimalEnd(b: Buffer, i: number, end: number, kind: number): number {
  if (kind === DEC && i < end && b[i] === 0x2d) i++;
  return digits(b, i, end, kind === COUNT ? end : 15);
}

/**
 * The header after the writer's `host:pid:` must be exactly `tid [dev] NCCL INFO ` (what
 * parse/header.ts reads as an INFO header). Returns the index after it, or -1.
 */
function infoHeaderEnd(dv: DataView, b: Buffer, i: number, end: number): number {
  i = digits(b, i, end, 10);
  if (i < 0 || i + 2 >= end || b[i] !== SPACE || b[i + 1] !== 0x5b) return -1;
  i = digits(b, i + 2, end, 6);
  if (i < 0 || i + 12 > end || b[i] !== 0x5d) return -1;
  if (!fixedAt(dv, b, i + 1, INFO)) return -1;
  return i + 1 + INFO.bytes.length;
}

/** NCCL's fixed field order before `comm`: first letter, key length, and value kind of each. */
const PTR = 0,
  DEC = 1,
  COUNT = 2,
  NAT = 3;
// prettier-ignore
const BEFORE_COMM = Uint8Array.from([
  0x73, 8, PTR, /* sendbuff */ 0x72, 8, PTR, /* recvbuff */ 0x63, 5, COUNT, /* count */
  0x64, 8, NAT, /* datatype */ 0x6f, 2, NAT, /* op */ 0x72, 4, DEC, /* root */
]);

/**
 * From the blank after the opCount, reads ` sendbuff P recvbuff P count N datatype N op N root N
 * comm `, keys as parse/coll.ts's fixed-order reader recognises them (the blank before, the first
 * letter, the blank after) and values validated as strictly. Returns the index of the comm
 * pointer, or -1 when the line is not exactly in this order (the full parser decides).
 */
function commValueAt(b: Buffer, i: number, end: number): number {
  for (let f = 0; f < BEFORE_COMM.length; f += 3) {
    const len = BEFORE_COMM[f + 1] as number;
    if (i + len + 2 >= end || b[i] !== SPACE || b[i + 1] !== BEFORE_COMM[f] || b[i + len + 1] !== SPACE) return -1;
    const kind = BEFORE_COMM[f + 2];
    i = kind === PTR ? pointerEnd(b, i + len + 2, end) : decimalEnd(b, i + len + 2, end, kind as number);
    if (i < 0) return -1;
  }
  if (i + 6 >= end || b[i] !== SPACE || b[i + 1] !== 0x63 || b[i + 2] !== 0x6f || b[i + 3] !== 0x6d || b[i + 4] !== 0x6d || b[i + 5] !== SPACE) return -1;
  return i + 6;
}

/**
 * The rest after the comm pointer must be ` [nranks=N] stream P` and blanks: no second `comm`.
 * Returns the index after the blanks (the line's end when nothing else follows), or -1.
 */
function tailEnd(dv: DataView, b: Buffer, i: number, end: number): number {
  if (i + NRANKS.bytes.length >= end || !fixedAt(dv, b, i, NRANKS)) return -1;
  i = digits(b, i + NRANKS.bytes.length, end, 15);
  if (i < 0 || i + 1 + STREAM.bytes.length >= end || b[i] !== 0x5d) return -1;
  i++;
  if (!fixedAt(dv, b, i, STREAM)) return -1;
  i = pointerEnd(b, i + STREAM.bytes.length, end);
  if (i < 0) return -1;
  while (i < end && b[i] === SPACE) i++;
  return i;
}

/** Letter → 1..58 (`A` 1 .. `z` 58), so 8 letters fit exactly in a double's 53 bits. */
const LETTER_BASE = 64;
/** Op names are kept by an exact numeric key: 3 × 8 letters = MAX_OP. */
const LETTERS_PER_KEY = 8;

/** Matches plain COLL lines of one writer. One per followed file. */
export class CollByteMatcher {
  private prefix: Fixed = fixed("");

  private readonly ops: string[] = [];
  /** Exact keys of `ops` (length and three 8-letter groups), in the same order. */
  private readonly opKeys: number[] = [];
  private readonly ptrs: string[] = [];
  /** The fields of the last line match() accepted; the object is reused. */
  readonly fields: CollFields = { op: "", opCount: 0, comm: "" };
  /**
   * The comm pointer of the last accepted line as a number: its hex value when it has at most 13
   * lower-case digits (exact in a double), else -1. With `ptrChars` (its length, `0x` included) it
   * names the text exactly, so a caller can look things up by it without the string.
   */
  ptrKey = -1;
  ptrChars = 0;
  private ptrStart = 0;
  private ptrEnd = 0;
  // Results of scan(), read by match()/matchLine().
  private opLen = 0;
  private k0 = 0;
  private k1 = 0;
  private k2 = 0;
  private opStart = 0;

  /** The `host:pid:` every line of this writer starts with (as decoded text; matched as UTF-8). */
  setWriter(prefix: string): void {
    this.prefix = fixed(prefix, "utf8");
  }

  /** Whether buf[s, e) is a plain COLL line of the writer; if so its fields are in `fields`. */
  match(buf: Buffer, s: number, e: number): boolean {
    if (this.scan(buf, s, e) !== e) return false;
    this.fields.comm = this.comm(buf);
    return true;
  }

  /**
   * The line that starts at s in a read buffer that ends at `end`: when it is a plain COLL line of
   * the writer, complete (its newline, after an optional CR, is before `end`) and at most `max`
   * bytes without the CR, returns the index of its newline, with op and opCount in `fields` and
   * the pointer in ptrKey/ptrChars (`fields.comm` is NOT set: comm(buf) gives it). Else -1, and
   * the caller finds the line's end itself. Finding the newline here saves a native indexOf per line.
   */
  matchLine(buf: Buffer, s: number, end: number, max: number): number {
    const q = this.scan(buf, s, end);
    if (q < 0 || q >= end) return -1;
    let nl = q;
    if (buf[nl] === 0x0d) nl++;
    if (nl >= end || buf[nl] !== 0x0a || q - s > max) return -1;
    return nl;
  }

  /** The comm pointer text of the last accepted line (buf is the buffer it was matched in). */
  comm(buf: Buffer): string {
    return recall(this.ptrs, buf, this.ptrStart, this.ptrEnd, MAX_PTRS);
  }

  /**
   * Validates a COLL line of the writer from s; `end` bounds the reads (the line's end, or the end
   * of the read buffer). Returns the index after the blanks that end the tail (the line's end when
   * nothing else follows), or -1. Sets op, opCount, the pointer's position and key.
   */
  private scan(buf: Buffer, s: number, end: number): number {
    const pl = this.prefix.bytes.length;
    if (end > buf.length) end = buf.length; // DataView reads past the end throw; byte reads would not
    if (pl === 0 || end - s <= pl + 16) return -1;
    const dv = viewOf(buf);
    if (!fixedAt(dv, buf, s, this.prefix)) return -1;
    const opStart = infoHeaderEnd(dv, buf, s + pl, end);
    if (opStart < 0) return -1;
    // An op name starts upper-case (parse/line.ts tries COLL only then), letters only after it.
    const first = buf[opStart] as number;
    if (first < 0x41 || first > 0x5a) return -1;
    let j = opStart;
    let k0 = 0;
    let k1 = 0;
    let k2 = 0;
    const opMax = Math.min(end, opStart + MAX_OP);
    while (j < opMax) {
      const c = buf[j] as number;
      const l = c | 0x20;
      if (l < 0x61 || l > 0x7a) break;
      const n = j - opStart;
      if (n < LETTERS_PER_KEY) k0 = k0 * LETTER_BASE + (c - 0x40);
      else if (n < 2 * LETTERS_PER_KEY) k1 = k1 * LETTER_BASE + (c - 0x40);
      else k2 = k2 * LETTER_BASE + (c - 0x40);
      j++;
    }
    if (j + OPCOUNT.bytes.length >= end || !fixedAt(dv, buf, j, OPCOUNT)) return -1;
    const ocStart = j + OPCOUNT.bytes.length;
    let ocEnd = ocStart;
    let opCount = 0;
    while (ocEnd < end) {
      const d = hexValue(buf[ocEnd] as number);
      if (d < 0) break;
      opCount = opCount * 16 + d;
      ocEnd++;
    }
    if (ocEnd === ocStart || ocEnd - ocStart > MAX_OPCOUNT_DIGITS || ocEnd >= end || buf[ocEnd] !== SPACE) return -1;
    const pStart = commValueAt(buf, ocEnd, end);
    if (pStart < 0 || pStart + 2 >= end || buf[pStart] !== 0x30 || buf[pStart + 1] !== 0x78) return -1;
    // The comm pointer: `0x` + hex digits, read into its key on the way.
    let pEnd = pStart + 2;
    let key = 0;
    while (pEnd < end) {
      const c = buf[pEnd] as number;
      const d = hexValue(c);
      if (d < 0) break;
      if (c >= 0x41 && c <= 0x46) key = -Infinity; // upper case: not keyed (the text differs)
      key = key * 16 + d;
      pEnd++;
    }
    if (pEnd === pStart + 2) return -1;
    const q = tailEnd(dv, buf, pEnd, end);
    if (q < 0) return -1;
    this.opStart = opStart;
    this.opLen = j - opStart;
    this.k0 = k0;
    this.k1 = k1;
    this.k2 = k2;
    this.fields.op = this.op(buf);
    this.fields.opCount = opCount;
    this.ptrStart = pStart;
    this.ptrEnd = pEnd;
    this.ptrChars = pEnd - pStart;
    this.ptrKey = key >= 0 && pEnd - pStart - 2 <= MAX_OPCOUNT_DIGITS ? key : -1;
    return q;
  }

  /** The op name of the last scanned line: a recent string found by its exact key, or a new one. */
  private op(buf: Buffer): string {
    const keys = this.opKeys;
    const n = this.opLen;
    for (let i = 0, k = 0; i < this.ops.length; i++, k += 4) {
      if (keys[k] === n && keys[k + 1] === this.k0 && keys[k + 2] === this.k1 && keys[k + 3] === this.k2) return this.ops[i] as string;
    }
    const text = decode(buf, this.opStart, this.opStart + n, true); // ASCII letters: checked by scan()
    if (this.ops.length >= MAX_OPS) {
      this.ops.pop();
      keys.length -= 4;
    }
    this.ops.unshift(text);
    keys.unshift(n, this.k0, this.k1, this.k2);
    return text;
  }
}

/**
 * The string in `recent` whose characters are the bytes buf[s, e) (ASCII), or a new one, kept in
 * front. A linear look at a few short strings is cheaper than hashing the bytes for a Map.
 */
function recall(recent: string[], buf: Buffer, s: number, e: number, max: number): string {
  const n = e - s;
  for (let i = 0; i < recent.length; i++) {
    const t = recent[i] as string;
    if (t.length === n && sameText(t, buf, s)) {
      if (i > 0) {
        recent[i] = recent[i - 1] as string; // move one step to the front: hot strings stay first
        recent[i - 1] = t;
      }
      return t;
    }
  }
  const text = decode(buf, s, e, true); // ASCII: checked by match()
  if (recent.length >= max) recent.pop();
  recent.unshift(text);
  return text;
}

function sameText(text: string, buf: Buffer, s: number): boolean {
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) !== buf[s + k]) return false;
  return true;
}
