/**
 * The process an NCCL line comes from, where the line says nothing ringwatch reads: an INFO line of
 * no known form (`Could not enable P2P between dev 2 and dev 0`), or a line cut right after its
 * header (`host:pid:tid`, as a paste often ends: nccl-pasted 40's second host shows only there).
 * Such a line is no event of the process, but the process and its host run the job (analyze's
 * judgement of one host: findings/transport.ts). Cold path: analyze asks it of lines that gave no
 * event, and of each log's last line.
 */
import { parseHeaderAt } from "./header.js";
import { parsePrefix } from "./prefix.js";
import { isDigit, trimEnd } from "./scan.js";

/** `host:pid` of an NCCL line's header, whatever its message. */
export function headerProcess(text: string): string | undefined {
  const n = text.indexOf(" NCCL ");
  const h = n > 0 ? parseHeaderAt(text, n, 0, text.length) : undefined;
  return h === undefined ? cutHeader(text) : `${h.host}:${h.pid}`;
}

/** `host:pid` of a header-only line, or undefined. A host name holds a letter (`12:30:45` is a time). */
function cutHeader(text: string): string | undefined {
  let end = trimEnd(text, 0, text.length);
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
  const host = text.slice(start, c1);
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
