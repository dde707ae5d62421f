/**
 * The NCCL line header `host:pid:tid [cudaDev] [file:line [(func)]] NCCL LEVEL`, found by walking
 * BACKWARDS from the ` NCCL ` marker (see debug.cc: INFO is `%s:%d:%d [%d] NCCL INFO`, WARN is
 * `%s:%d:%d [%d] %s:%d NCCL WARN`, 2.29+ adds ` (%s)` with the function). Whatever precedes the
 * host name (launcher prefixes, timestamps, unknown text) is left to parse-prefix.ts.
 *
 * HOT PATH: runs on every NCCL line. Character tests are inline (imported helpers are not inlined
 * by V8) and startsWith() is avoided.
 */

const MAX_HOST = 255;

/** The NCCL header found before a ` NCCL ` marker. */
export interface NcclHeader {
  host: string;
  pid: number;
  tid: number;
  cudaDev: number | undefined;
  /** Index where the host name starts (end of the prefix region). */
  hostStart: number;
  level: "INFO" | "WARN" | "TRACE" | "OTHER";
  /** Index of the first message character. */
  msgStart: number;
  file?: string;
  line?: number;
  func?: string;
}

let lastHost = "";

/** Reads digits backwards ending just before `j` (exclusive); returns start index or -1. */
function digitsBack(s: string, j: number, min: number, maxLen: number): number {
  let k = j;
  while (k > min && j - k < maxLen) {
    const d = s.charCodeAt(k - 1) - 48;
    if (d < 0 || d > 9) break;
    k--;
  }
  return k === j ? -1 : k;
}

function intBetween(s: string, a: number, b: number): number {
  let v = 0;
  for (let k = a; k < b; k++) v = v * 10 + (s.charCodeAt(k) - 48);
  return v;
}

/** Host name chars NCCL leaves (it cuts the name at '.', replaces '%' and '/'): [A-Za-z0-9._-]. */
function hostChar(c: number): boolean {
  const l = c | 32;
  return (l >= 97 && l <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46;
}

/** Same host text as the previous line? (saves one string per line for per-process files) */
function sameAsLastHost(s: string, k: number, len: number): boolean {
  if (len !== lastHost.length) return false;
  for (let x = 0; x < len; x++) if (s.charCodeAt(k + x) !== lastHost.charCodeAt(x)) return false;
  return true;
}

function codeChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 59; // digits and ';'
}

/**
 * A colour code glued to the host name (`ESC[0;32mhost`, or its ESC-less remnant `[0mhost`) is not
 * part of the name: returns the index just after its 'm' when there is one, else k.
 */
function skipColourCode(s: string, k: number, hostEnd: number, min: number): number {
  let b = k - 1;
  while (b > min && codeChar(s.charCodeAt(b))) b--;
  if (s.charCodeAt(b) !== 91 /* [ */) return k;
  let a = b + 1;
  while (a < hostEnd && codeChar(s.charCodeAt(a))) a++;
  return a > b + 1 && a + 1 < hostEnd && s.charCodeAt(a) === 109 /* m */ ? a + 1 : k;
}

/**
 * Parses `host:pid:tid ` ending at index `j` (the blank after tid is at j). Fills the header's
 * host/pid/tid/hostStart and returns true on success.
 */
function hostPidTidBack(s: string, j: number, min: number, h: NcclHeader): boolean {
  const tidStart = digitsBack(s, j, min, 10);
  if (tidStart < 0 || tidStart - 1 <= min || s.charCodeAt(tidStart - 1) !== 58) return false;
  const pidEnd = tidStart - 1;
  const pidStart = digitsBack(s, pidEnd, min, 10);
  if (pidStart < 0 || pidStart - 1 < min || s.charCodeAt(pidStart - 1) !== 58) return false;
  const hostEnd = pidStart - 1;
  let k = hostEnd;
  while (k > min && hostEnd - k < MAX_HOST && hostChar(s.charCodeAt(k - 1))) k--;
  if (k === hostEnd && s.charCodeAt(hostEnd - 1) === 62 /* > */) {
    // A host name a poster redacted: `<cluster_name>:919:1150 [0] NCCL INFO ...`, words too (`<2nd node server>`, nccl-pasted 482).
    let b = hostEnd - 2;
    while (b > min && hostEnd - b < MAX_HOST && (hostChar(s.charCodeAt(b)) || s.charCodeAt(b) === 32)) b--;
    if (b >= min && b < hostEnd - 2 && s.charCodeAt(b) === 60 /* < */) k = b;
  }
  // A host name printed as `:` (`::16674:17023 [0] NCCL INFO ...`, Azure's HPC image, nccl-pasted 368).
  if (k === hostEnd && hostEnd - 1 >= min && s.charCodeAt(hostEnd - 1) === 58 && (hostEnd - 1 === min || blank(s.charCodeAt(hostEnd - 2)))) k = hostEnd - 1;
  // An empty host name, the colon at the line's start or after a blank: TensorFlow's bundled NCCL
  // 2.4 (`:5202:5683 [0] NCCL INFO ...`, blind set 3, file 210).
  else if (k === hostEnd && hostEnd !== min && !blank(s.charCodeAt(hostEnd - 1))) return false;
  k = skipColourCode(s, k, hostEnd, min);
  const len = hostEnd - k;
  h.host = sameAsLastHost(s, k, len) ? lastHost : (lastHost = s.slice(k, hostEnd));
  h.pid = intBetween(s, pidStart, pidEnd);
  h.tid = intBetween(s, tidStart, j);
  h.hostStart = k;
  return true;
}

/** `[dev] ` ending at j (j is the blank after ']'); returns index of '[' or -1. */
function devBack(s: string, j: number, min: number, h: NcclHeader): number {
  if (j - 1 <= min || s.charCodeAt(j - 1) !== 93) return -1;
  const ds = digitsBack(s, j - 1, min, 6);
  if (ds < 0 || ds - 1 < min || s.charCodeAt(ds - 1) !== 91) return -1;
  h.cudaDev = intBetween(s, ds, j - 1);
  return ds - 1;
}

function blank(c: number): boolean {
  return c === 32 || c === 9;
}

/** Level word after ` NCCL ` at i (INFO/WARN/TRACE), checked on three characters. */
function levelAt(s: string, i: number): NcclHeader["level"] {
  const c = s.charCodeAt(i);
  if (c === 73 && s.charCodeAt(i + 1) === 78 && s.charCodeAt(i + 3) === 79) return "INFO";
  if (c === 87 && s.charCodeAt(i + 1) === 65 && s.charCodeAt(i + 3) === 78) return "WARN";
  if (c === 84 && s.charCodeAt(i + 1) === 82 && s.charCodeAt(i + 4) === 69) return "TRACE";
  return "OTHER";
}

/**
 * Parses the NCCL header whose ` NCCL ` marker starts at index n (the blank). `min` is the
 * lowest index the header may start at. Returns undefined when the text before the marker is
 * not a header (e.g. "Some NCCL operations"). NCCL 2.1/2.2 wrote no `NCCL` before the level
 * (`host:pid:tid [1] INFO ...`, `host:pid:tid [1] misc/enqueue.cu:150 WARN ...`): for those, n is
 * the blank before the level and `marker` is 1.
 */
export function parseHeaderAt(s: string, n: number, min: number, end: number, marker = 6): NcclHeader | undefined {
  const h: NcclHeader = { host: "", pid: 0, tid: 0, cudaDev: undefined, hostStart: 0, level: "OTHER", msgStart: 0 };
  const after = n + marker;
  h.level = levelAt(s, after);
  let m = h.level === "OTHER" ? after : after + h.level.length;
  while (m < end && blank(s.charCodeAt(m))) m++;
  h.msgStart = m;
  const c = s.charCodeAt(n - 1);
  if (c === 93 /* ] */) {
    // INFO: host:pid:tid [dev] NCCL INFO
    const lb = devBack(s, n, min, h);
    if (lb < 0 || lb - 1 <= min || !blank(s.charCodeAt(lb - 1))) return undefined;
    return hostPidTidBack(s, lb - 1, min, h) ? h : undefined;
  }
  // WARN: host:pid:tid [dev] file.cc:123 [(func)] NCCL WARN
  let j = n;
  if (c === 41 /* ) */) {
    let k = j - 1;
    while (k > min && j - k < 128 && s.charCodeAt(k) !== 40) k--;
    if (s.charCodeAt(k) !== 40 || k - 1 <= min || !blank(s.charCodeAt(k - 1))) return undefined;
    h.func = s.slice(k + 1, j - 1);
    j = k - 1;
  }
  const ls = digitsBack(s, j, min, 7);
  if (ls < 0 || s.charCodeAt(ls - 1) !== 58) return undefined;
  let fs = ls - 1;
  while (fs > min && ls - fs < 256 && !blank(s.charCodeAt(fs - 1))) fs--;
  if (fs === ls - 1 || fs - 1 <= min) return undefined;
  h.file = s.slice(fs, ls - 1);
  h.line = intBetween(s, ls, j);
  const lb = devBack(s, fs - 1, min, h);
  if (lb < 0 || lb - 1 <= min || !blank(s.charCodeAt(lb - 1))) return undefined;
  return hostPidTidBack(s, lb - 1, min, h) ? h : undefined;
}
