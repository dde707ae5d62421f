/**
 * Character scanners shared by the (cold) NCCL line parsers. No regular expressions: every
 * function is a bounded forward or backward walk over char codes, so the cost is linear in the
 * characters looked at and nothing backtracks. The hot path (header, COLL) keeps its own inline
 * tests, because V8 does not inline functions imported from another module.
 *
 * Convention: `s` is the line, `i` a start index, `end` an exclusive bound. readInt() returns the
 * value and leaves the position after it in the module-level cursor `pos` (no result objects).
 */

/** Position after the last successful readInt() call. */
export let pos = 0;

/** Longest run of digits accepted as a safe integer (< 2^53). */
const MAX_SAFE_DIGITS = 15;

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

export function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/** Index of the first non-blank at or after i. */
export function skipSpaces(s: string, i: number, end: number): number {
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** Index just past the last non-blank before end (trims blanks and a log-viewer box edge '│'). */
export function trimEnd(s: string, start: number, end: number): number {
  while (end > start) {
    const c = s.charCodeAt(end - 1);
    if (isSpace(c) || c === 0x2502 || c === 13 || c === 10) end--;
    else break;
  }
  return end;
}

/** Index of the first blank at or after i (or end). */
export function tokenEnd(s: string, i: number, end: number): number {
  while (i < end && !isSpace(s.charCodeAt(i))) i++;
  return i;
}

/**
 * Reads an optionally negative decimal integer at i (at most 15 digits, so always exact).
 * On failure returns undefined and leaves pos = i; never returns NaN.
 */
export function readInt(s: string, i: number, end: number): number | undefined {
  let j = i;
  let neg = false;
  if (j < end && s.charCodeAt(j) === 45) {
    neg = true;
    j++;
  }
  const start = j;
  let v = 0;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
    j++;
  }
  const n = j - start;
  if (n === 0 || n > MAX_SAFE_DIGITS) {
    pos = i;
    return undefined;
  }
  pos = j;
  return neg ? -v : v;
}

/** Finds `needle` in [from, end) or returns -1. */
export function find(s: string, needle: string, from: number, end: number): number {
  const k = s.indexOf(needle, from);
  return k < 0 || k + needle.length > end ? -1 : k;
}

/** Reads the integer right after `label` somewhere in [from, end); undefined when absent. */
export function intAfter(s: string, label: string, from: number, end: number): number | undefined {
  const k = find(s, label, from, end);
  if (k < 0) return undefined;
  const v = readInt(s, skipSpaces(s, k + label.length, end), end);
  return v;
}

/**
 * Parses a rank list such as `0, 1, 2` or `3 4 5` between i and end (inside brackets or braces).
 * Returns undefined when anything other than integers, commas and blanks is found.
 */
export function readRankList(s: string, i: number, end: number): number[] | undefined {
  const out: number[] = [];
  let j = i;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (c === 44 || isSpace(c)) {
      j++;
      continue;
    }
    const v = readInt(s, j, end);
    if (v === undefined) return undefined;
    out.push(v);
    j = pos;
  }
  return out;
}
