/**
 * AssemblyScript source of the COLL line scanner (built into ../coll-scan-wasm.ts by
 * `npm run build:wasm`; not compiled by tsc). It accepts exactly the lines that
 * CollByteMatcher.matchLine (../coll-bytes.ts) accepts, with the same fields, but classifies the
 * runs of digits, hex digits and letters 16 bytes at a time (WebAssembly SIMD), checks the
 * stretches a line repeats from the line before only once (see CACHE_MAX), and scans a whole run
 * of lines per call: on this project's 2-vCPU VMs about 100 ns per line against 330-410 ns for the
 * JavaScript matcher, which pays about 1 ns per byte for any byte loop. Tested against it line for
 * line (test/fuzz/coll-scan.test.ts).
 *
 * Memory: the caller copies the writer's `host:pid:` to PREFIX_START and a chunk of a read buffer
 * to DATA_START, followed by at least PADDING zero bytes (a zero byte ends every run, so no loop
 * needs a bound: 16-byte loads past the data read the zeros). Each accepted line writes one record
 * of RECORD_FIELDS f64 values at RECORDS_START (see the F_ offsets). The kept stretches live at
 * HEADER_CACHE..TAIL_CACHE + CACHE_MAX, between the records' end and DATA_START.
 */

export const PREFIX_START: usize = 64;
export const PREFIX_MAX: usize = 448;
export const RECORDS_START: usize = 512;
export const RECORD_FIELDS: usize = 10;
export const MAX_RECORDS: i32 = 256;
export const DATA_START: usize = 32768;
export const PADDING: usize = 128;

// Record fields (f64 index within a record).
export const F_NEWLINE: i32 = 0; // index of the line's '\n'
export const F_OP_COUNT: i32 = 1; // opCount's value (at most 13 hex digits: exact)
export const F_OP_KEY0: i32 = 2; // op name letters 1-8, 9-16, 17-24 as base-64 numbers (letter - 0x40)
export const F_OP_KEY1: i32 = 3;
export const F_OP_KEY2: i32 = 4;
export const F_OP_LEN: i32 = 5;
export const F_PTR_KEY: i32 = 6; // comm pointer's hex value when lower-case and <= 13 digits, else -1
export const F_PTR_CHARS: i32 = 7; // comm pointer's length, 0x included
export const F_OP_START: i32 = 8;
export const F_PTR_START: i32 = 9;

const SPACE: u32 = 0x20;

/** Index after the run of hex digits (either case) at p. */
@inline function hexRun(p: usize): usize {
  let q = p;
  while (true) {
    const v = v128.load(q);
    const digit = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x30)), i8x16.splat(10));
    const letter = i8x16.lt_u(i8x16.sub(v128.or(v, i8x16.splat(0x20)), i8x16.splat(0x61)), i8x16.splat(6));
    const n = ctz<u32>(~i8x16.bitmask(v128.or(digit, letter)));
    q += n;
    if (n < 16) return q;
  }
}

/** Index after the run of decimal digits at p. */
@inline function digitRun(p: usize): usize {
  let q = p;
  while (true) {
    const v = v128.load(q);
    const n = ctz<u32>(~i8x16.bitmask(i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x30)), i8x16.splat(10))));
    q += n;
    if (n < 16) return q;
  }
}

/** Index after 1..max decimal digits at p, or 0. */
@inline function digits(p: usize, max: usize): usize {
  const q = digitRun(p);
  return q == p || q - p > max ? 0 : q;
}

/** Index after a %p value at p (`0x` + hex digits, or `(nil)`), or 0. */
@inline function pointerEnd(p: usize): usize {
  if (load<u8>(p) == 0x28) return load<u32>(p + 1) == 0x296c696e ? p + 5 : 0; // "nil)"
  if (load<u16>(p) != 0x7830) return 0; // "0x"
  const q = hexRun(p + 2);
  return q == p + 2 ? 0 : q;
}

/** Index after an optional '-' and 1..max decimal digits at p, or 0. */
@inline function decimalEnd(p: usize, max: usize): usize {
  if (load<u8>(p) == 0x2d) p++;
  return digits(p, max);
}

/** Whether the bytes at p equal `pattern` in the lanes `mask` selects. */
@inline function fixedAt(p: usize, pattern: v128, mask: v128): bool {
  return i8x16.all_true(i8x16.eq(v128.and(v128.load(p), mask), pattern));
}

const INFO = i8x16(0x20, 0x4e, 0x43, 0x43, 0x4c, 0x20, 0x49, 0x4e, 0x46, 0x4f, 0x20, 0, 0, 0, 0, 0); // " NCCL INFO "
const MASK_11 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0);
const OPCOUNT = i8x16(0x3a, 0x20, 0x6f, 0x70, 0x43, 0x6f, 0x75, 0x6e, 0x74, 0x20, 0, 0, 0, 0, 0, 0); // ": opCount "
const MASK_10 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0);
const NRANKS = i8x16(0x20, 0x5b, 0x6e, 0x72, 0x61, 0x6e, 0x6b, 0x73, 0x3d, 0, 0, 0, 0, 0, 0, 0); // " [nranks="
const MASK_9 = i8x16(-1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0);
const STREAM: u64 = 0x206d616572747320; // " stream "
const COMM: u32 = 0x6d6d6f63; // "comm"
const MAX_OP: usize = 24;
const MAX_OPCOUNT_DIGITS: usize = 13;

/** Length of the run of ASCII letters at p, at most 16. */
@inline function letterRun(p: usize): usize {
  const v = v128.load(p);
  return ctz<u32>(~i8x16.bitmask(i8x16.lt_u(i8x16.sub(v128.or(v, i8x16.splat(0x20)), i8x16.splat(0x61)), i8x16.splat(26))));
}

const LANES = i8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

/** Whether the n bytes at p are the first n lanes of v (false for n > 16). */
@inline function sameLanes(p: usize, v: v128, n: usize): bool {
  if (n > 16) return false;
  const lanes = i8x16.lt_u(LANES, i8x16.splat(<i8>n));
  return i8x16.all_true(v128.or(i8x16.eq(v128.load(p), v), v128.not(lanes)));
}

/** Letters [p, p + n) (n <= 8) as a base-64 number, letter - 0x40 each: exact in a double. */
@inline function letterKey(p: usize, n: usize): f64 {
  let k: u64 = 0;
  for (let i: usize = 0; i < n; i++) k = (k << 6) | <u64>(<u32>load<u8>(p + i) - 0x40);
  return <f64>k;
}

/*
 * Most lines of a writer repeat three stretches of the line before: its header, the fields from
 * datatype to comm, and the comm pointer with the rest of the line. A stretch is checked once, kept
 * (up to CACHE_MAX bytes), and a line with the same bytes there skips the check: every check of a
 * stretch depends only on its own bytes (the runs before it end at its first byte, a blank).
 */
const CACHE_MAX: usize = 64;
const HEADER_CACHE: usize = 24576;
const MID_CACHE: usize = HEADER_CACHE + CACHE_MAX;
const TAIL_CACHE: usize = MID_CACHE + CACHE_MAX;
let headerLen: usize = 0;
let headerGen: i32 = -1;
let midLen: usize = 0;
let tailLen: usize = 0;
let tailBlankEnd: usize = 0;
let tailPtrChars: usize = 0;
let tailPtrKey: f64 = -1;
let lastOp: v128 = i8x16.splat(0);
let lastOpLen: usize = 0;
let opKey0: f64 = 0;
let opKey1: f64 = 0;
let opKey2: f64 = 0;

/** Whether the n bytes at p (0 < n <= CACHE_MAX) equal the n bytes kept at c. */
@inline function sameAs(p: usize, c: usize, n: usize): bool {
  let k: usize = 0;
  for (; k + 16 <= n; k += 16) if (!i8x16.all_true(i8x16.eq(v128.load(p + k), v128.load(c + k)))) return false;
  return k == n || sameLanes(p + k, v128.load(c + k), n - k);
}

/** Keeps [p, e) at c and returns its length, or 0 (nothing kept) when it is longer than CACHE_MAX. */
@inline function remember(p: usize, e: usize, c: usize): usize {
  const n = e - p;
  if (n > CACHE_MAX) return 0;
  memory.copy(c, p, n);
  return n;
}

function prefixAt(p: usize, len: usize): bool {
  let k: usize = 0;
  for (; k + 8 <= len; k += 8) if (load<u64>(p + k) != load<u64>(PREFIX_START + k)) return false;
  for (; k < len; k++) if (load<u8>(p + k) != load<u8>(PREFIX_START + k)) return false;
  return true;
}

/** A key as parse/coll.ts recognises it: blank, first letter, len - 1 more bytes, blank. Index of the value, or 0. */
@inline function keyAt(p: usize, first: u32, len: usize): usize {
  if (<u32>load<u8>(p) != SPACE || <u32>load<u8>(p + 1) != first || <u32>load<u8>(p + len + 1) != SPACE) return 0;
  return p + len + 2;
}

/** Value of the hex digits [p, q) (either case; at most 13 of them: exact in a double). */
@inline function hexValue(p: usize, q: usize): u64 {
  let v: u64 = 0;
  for (let k = p; k < q; k++) {
    const c = <u32>load<u8>(k);
    v = (v << 4) | <u64>(c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
  }
  return v;
}

/**
 * Matches the line at s, in data that ends at `end`: see CollByteMatcher.matchLine. Returns the
 * index after its newline and writes its record at rec, or returns 0.
 */
function matchLine(s: usize, end: usize, prefixLen: usize, max: usize, rec: usize): usize {
  // `host:pid:tid [dev] NCCL INFO `: the last line's header, or checked field by field.
  let opStart: usize;
  if (headerLen != 0 && sameAs(s, HEADER_CACHE, headerLen)) {
    opStart = s + headerLen;
  } else {
    if (end - s <= prefixLen + 16 || !prefixAt(s, prefixLen)) return 0;
    let i = digits(s + prefixLen, 10);
    if (i == 0 || load<u16>(i) != 0x5b20) return 0; // " ["
    i = digits(i + 2, 6);
    if (i == 0 || load<u8>(i) != 0x5d || !fixedAt(i + 1, INFO, MASK_11)) return 0;
    opStart = i + 12;
    headerLen = remember(s, opStart, HEADER_CACHE);
  }
  // Op: upper-case first, then letters, a run of up to MAX_OP found 16 bytes at a time.
  if (<u32>load<u8>(opStart) - 0x41 >= 26) return 0;
  let run = letterRun(opStart);
  if (run == 16) run += letterRun(opStart + 16);
  const j = opStart + (run < MAX_OP ? run : MAX_OP);
  const opLen = j - opStart;
  if (opLen != lastOpLen || !sameLanes(opStart, lastOp, opLen)) {
    lastOp = v128.load(opStart);
    lastOpLen = opLen;
    opKey0 = letterKey(opStart, opLen < 8 ? opLen : 8);
    opKey1 = opLen > 8 ? letterKey(opStart + 8, opLen < 16 ? opLen - 8 : 8) : 0;
    opKey2 = opLen > 16 ? letterKey(opStart + 16, opLen - 16) : 0;
  }
  if (!fixedAt(j, OPCOUNT, MASK_10)) return 0;
  const ocStart = j + 10;
  const ocEnd = hexRun(ocStart);
  if (ocEnd == ocStart || ocEnd - ocStart > MAX_OPCOUNT_DIGITS || <u32>load<u8>(ocEnd) != SPACE) return 0;
  // sendbuff P recvbuff P count N
  let i = keyAt(ocEnd, 0x73, 8);
  if (i == 0 || (i = pointerEnd(i)) == 0) return 0;
  i = keyAt(i, 0x72, 8);
  if (i == 0 || (i = pointerEnd(i)) == 0) return 0;
  i = keyAt(i, 0x63, 5);
  if (i == 0 || (i = decimalEnd(i, <usize>0x7fffffff)) == 0) return 0;
  // ` datatype N op N root N comm `: the last line's, or checked field by field.
  let pStart: usize;
  if (midLen != 0 && sameAs(i, MID_CACHE, midLen)) {
    pStart = i + midLen;
  } else {
    const midStart = i;
    i = keyAt(i, 0x64, 8);
    if (i == 0 || (i = decimalEnd(i, 15)) == 0) return 0;
    i = keyAt(i, 0x6f, 2);
    if (i == 0 || (i = decimalEnd(i, 15)) == 0) return 0;
    i = keyAt(i, 0x72, 4);
    if (i == 0 || (i = decimalEnd(i, 15)) == 0) return 0;
    if (<u32>load<u8>(i) != SPACE || load<u32>(i + 1) != COMM || <u32>load<u8>(i + 5) != SPACE) return 0;
    pStart = i + 6;
    midLen = remember(midStart, pStart, MID_CACHE);
  }
  // The comm pointer, ` [nranks=N] stream P`, blanks, CR, newline: the last line's, or checked.
  let nl: usize;
  let q: usize;
  if (tailLen != 0 && sameAs(pStart, TAIL_CACHE, tailLen)) {
    nl = pStart + tailLen - 1;
    q = pStart + tailBlankEnd;
  } else {
    if (load<u16>(pStart) != 0x7830) return 0;
    const pEnd = hexRun(pStart + 2);
    if (pEnd == pStart + 2) return 0;
    if (!fixedAt(pEnd, NRANKS, MASK_9)) return 0;
    i = digits(pEnd + 9, 15);
    if (i == 0 || load<u8>(i) != 0x5d || load<u64>(i + 1) != STREAM) return 0;
    i = pointerEnd(i + 9);
    if (i == 0) return 0;
    while (<u32>load<u8>(i) == SPACE) i++;
    q = i;
    if (load<u8>(i) == 0x0d) i++;
    if (load<u8>(i) != 0x0a) return 0;
    nl = i;
    // The pointer's key: exact when lower-case and short enough.
    tailPtrChars = pEnd - pStart;
    tailPtrKey = -1;
    if (tailPtrChars - 2 <= MAX_OPCOUNT_DIGITS) {
      let upper = false;
      for (let k = pStart + 2; k < pEnd; k++) upper = upper || <u32>load<u8>(k) - 0x41 < 6;
      if (!upper) tailPtrKey = <f64>hexValue(pStart + 2, pEnd);
    }
    tailBlankEnd = q - pStart;
    tailLen = remember(pStart, nl + 1, TAIL_CACHE);
  }
  if (nl >= end || q - s > max) return 0;
  store<f64>(rec, <f64>nl, F_NEWLINE * 8);
  store<f64>(rec, <f64>hexValue(ocStart, ocEnd), F_OP_COUNT * 8);
  store<f64>(rec, opKey0, F_OP_KEY0 * 8);
  store<f64>(rec, opKey1, F_OP_KEY1 * 8);
  store<f64>(rec, opKey2, F_OP_KEY2 * 8);
  store<f64>(rec, <f64>opLen, F_OP_LEN * 8);
  store<f64>(rec, tailPtrKey, F_PTR_KEY * 8);
  store<f64>(rec, <f64>tailPtrChars, F_PTR_CHARS * 8);
  store<f64>(rec, <f64>opStart, F_OP_START * 8);
  store<f64>(rec, <f64>pStart, F_PTR_START * 8);
  return nl + 1;
}

/**
 * Matches lines from `start` until one is declined, `end` is reached, or `maxRecords` were
 * accepted (at most MAX_RECORDS). Returns how many were accepted: their records are in order.
 */
export function scan(start: usize, end: usize, prefixLen: usize, max: usize, maxRecords: i32, prefixGen: i32): i32 {
  if (prefixGen != headerGen) {
    headerGen = prefixGen;
    headerLen = 0; // the header was checked against another writer
  }
  let s = start;
  let n = 0;
  while (n < maxRecords && s < end) {
    const next = matchLine(s, end, prefixLen, max, RECORDS_START + <usize>n * RECORD_FIELDS * 8);
    if (next == 0) break;
    n++;
    s = next;
  }
  return n;
}
