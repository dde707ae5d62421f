/**
 * faulthandler's lines (CPython Python/traceback.c: write_thread_id, dump_frame), as the text after
 * any launcher prefix. Every function reads `s` in [i, end) by index, forward only: nothing
 * backtracks, whatever the line.
 *
 * - `Thread 0x00007f4ebf9d3740 (most recent call first):` and `Current thread 0x... (...)` (3.x);
 *   3.14+ may put the thread's name after the id (` [name]`); before 3.3 (the faulthandler module)
 *   `Thread 0x...:`; `Stack (most recent call first):` for dump_traceback(all_threads=False).
 * - `  File "/x/train.py", line 88 in next_batch` (innermost first; `line ???` when unknown),
 *   `  <no Python frame>`, `  ...` (more than 100 frames).
 * - Before a dump: `Fatal Python error: Segmentation fault`, or dump_traceback_later's `Timeout (0:10:00)!`.
 */
import type { StackFrame } from "./types.js";

const MOST_RECENT = " (most recent call first):";

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

export interface FaultThreadHeader {
  id: string;
  current: boolean;
  name?: string;
}

/** `Thread 0x7f4e... (most recent call first):` → its id; `Current thread 0x...`, `Stack (...)` are the current thread. */
export function faultThreadHeader(s: string, i: number, end: number): FaultThreadHeader | undefined {
  if (s.startsWith("Stack (most recent call first):", i) && end === i + 31) return { id: "", current: true };
  let k: number;
  let current = false;
  if (s.startsWith("Thread 0x", i)) k = i + 9;
  else if (s.startsWith("Current thread 0x", i)) {
    k = i + 17;
    current = true;
  } else return undefined;
  let j = k;
  while (j < end && j - k < 16 && isHex(s.charCodeAt(j))) j++;
  if (j === k) return undefined;
  const id = s.slice(k - 2, j);
  // Before 3.3: `Thread 0x...:`.
  if (j + 1 === end && s.charCodeAt(j) === 58) return { id, current };
  const tail = end - MOST_RECENT.length;
  if (tail < j || !s.startsWith(MOST_RECENT, tail)) return undefined;
  if (tail === j) return { id, current };
  // ` [name]` (3.14+) or ` <name>` between the id and the tail.
  const open = s.charCodeAt(j + 1);
  const close = s.charCodeAt(tail - 1);
  if (s.charCodeAt(j) !== 32 || !((open === 91 && close === 93) || (open === 60 && close === 62)) || tail - j < 3) return undefined;
  return { id, current, name: s.slice(j + 2, tail - 1) };
}

/** What a line inside a faulthandler thread is. */
export type FaultLine = { frame: StackFrame } | "no_frame" | "truncated" | "marker" | undefined;

/**
 * `File "/x/train.py", line 88 in next_batch` → the frame (the two blanks before it are the
 * caller's to skip); `<no Python frame>`, `...`, and the other `<...>` markers CPython prints
 * (`<freed frame>`), and `Garbage-collecting`. A traceback's `File "x", line 5, in f` (with a
 * comma: Python's exception form, outermost first) is not a faulthandler frame.
 */
export function faultLine(s: string, i: number, end: number, maxName: number): FaultLine {
  const c = s.charCodeAt(i);
  if (c === 70 /* F */ && s.startsWith('File "', i)) {
    const q = i + 6;
    const close = s.indexOf('", line ', q);
    if (close < 0 || close + 8 >= end) return undefined;
    let k = close + 8;
    let line: number | undefined;
    if (s.startsWith("???", k)) k += 3;
    else {
      let v = 0;
      const start = k;
      while (k < end && k - start < 10 && s.charCodeAt(k) >= 48 && s.charCodeAt(k) <= 57) v = v * 10 + (s.charCodeAt(k++) - 48);
      if (k === start) return undefined;
      line = v;
    }
    if (!s.startsWith(" in ", k) || k + 4 >= end) return undefined;
    const frame: StackFrame = { function: cut(s, k + 4, end, maxName), file: cut(s, q, close, maxName) };
    if (line !== undefined) frame.line = line;
    return { frame };
  }
  if (c === 60 /* < */) {
    if (s.startsWith("<no Python frame>", i) && end === i + 17) return "no_frame";
    return s.charCodeAt(end - 1) === 62 && end - i < 64 ? "marker" : undefined;
  }
  if (c === 46 && end === i + 3 && s.startsWith("...", i)) return "truncated";
  if (s.startsWith("Garbage-collecting", i) && end === i + 18) return "marker";
  return undefined;
}

/**
 * `Fatal Python error: Segmentation fault` anywhere in the line (a progress bar may stand before
 * it), or Windows' `Windows fatal exception: access violation` → that text.
 */
export function fatalError(s: string, i: number, end: number): string | undefined {
  let k = s.indexOf("Fatal Python error: ", i);
  if (k < 0 || k >= end) k = s.indexOf("Windows fatal exception: ", i);
  return k >= 0 && k < end ? s.slice(k, Math.min(end, k + 200)).trimEnd() : undefined;
}

/** dump_traceback_later's `Timeout (0:10:00)!` → the line. */
export function timeoutLine(s: string, i: number, end: number): string | undefined {
  return s.startsWith("Timeout (", i) && end - i < 40 && s.charCodeAt(end - 1) === 33 && s.charCodeAt(end - 2) === 41 ? s.slice(i, end) : undefined;
}

/** s[i, end), at most max characters. */
export function cut(s: string, i: number, end: number, max: number): string {
  return end - i > max ? s.slice(i, i + max) : s.slice(i, end);
}
