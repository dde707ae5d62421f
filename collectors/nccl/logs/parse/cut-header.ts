/**
 * The process an NCCL line comes from, where the line says nothing ringwatch reads: an INFO line of
 * no known form (`Could not enable P2P between dev 2 and dev 0`), or a line cut right after its
 * header (`host:pid:tid`, as a paste often ends: nccl-pasted 40's second host shows only there).
 * Such a line is no event of the process, but the process and its host run the job (analyze's
 * judgement of one host: findings/transport.ts). analyze asks headerProcess of lines that gave no
 * event, and cutHeader of each log's last line only (mid-log, `train.py:120:5` or `eta: 5m:30:10`
 * would read as one).
 */
import { parseHeaderAt } from "./header.js";
import { parsePrefix } from "./prefix.js";
import { isDigit, trimEnd } from "./scan.js";

/** The most characters of a host name (header.ts's bound). */
const MAX_HOST = 255;

/** `host:pid` and its thread `host:pid:tid` of an NCCL line's header, whatever its message. */
export function headerProcess(text: string): { process: string; thread: string } | undefined {
  const n = text.indexOf(" NCCL ");
  const h = n > 0 ? parseHeaderAt(text, n, 0, text.length) : undefined;
  return h === undefined ? undefined : { process: `${h.host}:${h.pid}`, thread: `${h.host}:${h.pid}:${h.tid}` };
}

/**
 * `host:pid` of a header-only line, or undefined. A host name holds a letter (`12:30:45` is a time)
 * and is no date (`2024-05-01T12:30:45`); pid and tid are a process's and its thread's (no leading
 * zero, pid above 1, the thread's id at least the pid's and not under 60: `Elapsed: 00h:01:23`,
 * `ETA: 1h:30:45`, `train.py:120:5` and `epoch:1:100` are none).
 */
export function cutHeader(text: string): string | undefined {
  let end = trimEnd(text, 0, text.length);
  // Cheap checks first: the line ends in `:digits:digits`, or that and ` [dev]`.
  const last = text.charCodeAt(end - 1);
  if (!isDigit(last) && last !== 93 /* ] */) return undefined;
  const start = parsePrefix(text, 0, end).end;
  // An optional ` [dev]` after the tid.
  if (text.charCodeAt(end - 1) === 93 /* ] */) {
    const open = text.lastIndexOf(" [", end - 1);
    if (open <= start || !allDigits(text, open + 2, end - 1)) return undefined;
    end = trimEnd(text, start, open);
  }
  const c2 = text.lastIndexOf(":", end - 1);
  const c1 = c2 > start ? text.lastIndexOf(":", c2 - 1) : -1;
  if (c1 <= start || !allDigits(text, c1 + 1, c2) || !allDigits(text, c2 + 1, end)) return undefined;
  if (text.charCodeAt(c1 + 1) === 48 || text.charCodeAt(c2 + 1) === 48 || c2 - c1 > 11 || end - c2 > 11) return undefined;
  const pid = Number(text.slice(c1 + 1, c2));
  const tid = Number(text.slice(c2 + 1, end));
  // Both under 60: a time (`ETA: 1h:30:45`, `epoch3:10:20`), as likely as a process's main thread.
  if (pid < 2 || tid < pid || tid < 60) return undefined;
  const host = text.slice(start, c1);
  if (host.length > MAX_HOST || isoDate(host)) return undefined;
  let letter = false;
  for (let k = 0; k < host.length; k++) {
    const c = host.charCodeAt(k);
    const l = c | 32;
    if (l >= 97 && l <= 122) letter = true;
    else if (!isDigit(c) && c !== 45 && c !== 46 && c !== 95) return undefined;
  }
  return letter ? `${host}:${text.slice(c1 + 1, c2)}` : undefined;
}

function allDigits(s: string, a: number, b: number): boolean {
  if (b <= a) return false;
  for (let k = a; k < b; k++) if (!isDigit(s.charCodeAt(k))) return false;
  return true;
}

/** `2024-05-01T12` (an ISO 8601 date and hour before `:30:45`). */
function isoDate(h: string): boolean {
  return h.length === 13 && h.charCodeAt(4) === 45 && h.charCodeAt(7) === 45 && h.charCodeAt(10) === 84 && allDigits(h, 0, 4) && allDigits(h, 11, 13);
}
