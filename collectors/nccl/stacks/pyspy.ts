/**
 * `py-spy dump --pid P` lines (py-spy src/dump.rs), as the text after any launcher prefix. Every
 * function reads `s` in [i, end) by index, forward or with one lastIndexOf: nothing backtracks.
 *
 *     Process 88693: python train.py --cfg x.yaml
 *     Python v3.12.3 (/usr/bin/python3.12)
 *
 *     Thread 88693 (idle): "MainThread"          (or `Thread 0x7FA6E7C01740 (active+gil)`, no name)
 *         wait (threading.py:324)                 innermost first
 *         pthread_cond_timedwait (libc.so.6)      --native: a native frame, no line
 *         0x7f9ba3169d71 (libc.so.6)              --native: an address py-spy could not name
 *             Arguments:                           --locals
 *                 self: <Condition at 0x7f..>
 *
 * `--subprocesses` adds `Parent Process N: ...` and a line of dashes between processes.
 */
import { cut } from "./faulthandler.js";
import type { StackFrame } from "./types.js";

/** `Process 88693: python train.py` → the pid and command line (not `Parent Process`). */
export function pyspyProcess(s: string, i: number, end: number): { pid: number; command: string } | undefined {
  if (!s.startsWith("Process ", i)) return undefined;
  let k = i + 8;
  let pid = 0;
  const start = k;
  while (k < end && k - start < 10 && s.charCodeAt(k) >= 48 && s.charCodeAt(k) <= 57) pid = pid * 10 + (s.charCodeAt(k++) - 48);
  if (k === start || s.charCodeAt(k) !== 58) return undefined;
  return { pid, command: cut(s, Math.min(end, k + 2), end, 256) };
}

export interface PyspyThreadHeader {
  id: string;
  status?: string;
  name?: string;
}

function isIdChar(c: number, hex: boolean): boolean {
  return (c >= 48 && c <= 57) || (hex && ((c >= 97 && c <= 102) || (c >= 65 && c <= 70)));
}

/** `Thread 88693 (idle): "MainThread"`, `Thread 0x7FA6E7C01740 (active+gil)`, `Thread 4076 (idle)`, `Thread 12 (gil)`, `Thread 12`. */
export function pyspyThreadHeader(s: string, i: number, end: number): PyspyThreadHeader | undefined {
  if (!s.startsWith("Thread ", i)) return undefined;
  const k = i + 7;
  const hex = s.startsWith("0x", k) || s.startsWith("0X", k);
  let j = hex ? k + 2 : k;
  const digits = j;
  while (j < end && j - digits < 20 && isIdChar(s.charCodeAt(j), hex)) j++;
  if (j === digits) return undefined;
  const out: PyspyThreadHeader = { id: s.slice(k, j) };
  if (j < end && s.startsWith(" (", j)) {
    const st = j + 2;
    let e = st;
    // idle, active, active+gil, gil: lower-case letters and '+'
    while (e < end && e - st < 16 && ((s.charCodeAt(e) >= 97 && s.charCodeAt(e) <= 122) || s.charCodeAt(e) === 43)) e++;
    if (e === st || s.charCodeAt(e) !== 41) return undefined;
    out.status = s.slice(st, e);
    j = e + 1;
  }
  if (j === end) return out;
  // `: "name"`
  if (!s.startsWith(': "', j) || s.charCodeAt(end - 1) !== 34 || end - 1 < j + 3) return undefined;
  out.name = cut(s, j + 3, end - 1, 128);
  return out;
}

/**
 * `wait (threading.py:324)` → function `wait`, file `threading.py`, line 324;
 * `pthread_cond_timedwait (libc.so.6)` → a native frame without a line. The file is in the last
 * ` (` of the line: native C++ names hold parentheses of their own.
 */
export function pyspyFrame(s: string, i: number, end: number, maxName: number): StackFrame | undefined {
  if (end - i < 4 || s.charCodeAt(end - 1) !== 41) return undefined;
  const open = s.lastIndexOf(" (", end - 2);
  if (open <= i || open + 2 >= end - 1 || s.charCodeAt(open + 2) === 32) return undefined;
  const first = s.charCodeAt(i);
  if (first === 32 || first === 40 /* ( */) return undefined;
  let colon = end - 2;
  let line = 0;
  let scale = 1;
  while (colon > open + 2 && s.charCodeAt(colon) >= 48 && s.charCodeAt(colon) <= 57 && end - 2 - colon < 9) {
    line += (s.charCodeAt(colon) - 48) * scale;
    scale *= 10;
    colon--;
  }
  const frame: StackFrame = { function: cut(s, i, open, maxName), file: "" };
  if (colon < end - 2 && s.charCodeAt(colon) === 58) {
    frame.file = cut(s, open + 2, colon, maxName);
    frame.line = line;
  } else frame.file = cut(s, open + 2, end - 1, maxName);
  return frame;
}
