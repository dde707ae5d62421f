/**
 * NCCL 2.19+'s INFO line for a connect it retries: `socketPollConnect: connect returned No route to
 * host, retrying (34/34) after sleep for 3400 msec` (2.27+: `connect to 10.0.0.2<36085> returned
 * ...`, also `ncclOsSocketPollConnect`). After the last retry (N = M) NCCL sleeps and connects once
 * more; if that fails too it gives up with the WARN `... exceeded error retry count` (warn-kinds.ts,
 * connect_failed). A paste that ends at the last retry (nccl-pasted 333) shows no WARN: analyze
 * reads the last retry as the failed connect where no later line of that thread follows (a later
 * line: the connect succeeded, or NCCL's own WARN says it failed; another thread's says nothing of it). The live agent reads the WARN
 * itself. An earlier retry (N < M) that a process's lines end in is read as NCCL's old retries are
 * (logs/socket/connect-retry.ts: nccl-pasted 642). Cold path: asked only of lines that gave no event.
 */
import { parseHeaderAt } from "./header.js";
import { find, readInt, pos, trimEnd } from "./scan.js";
import type { WarnEvent } from "./types.js";

/** A retry line: the connect it retries, as the WARN of its failure would say it, and `N/M`. */
export function connectRetryLine(text: string): { ev: WarnEvent; tries: number; of: number } | undefined {
  // Its words first (most lines have none); then the header just before them (a paste may glue another line ahead).
  const retrying = text.indexOf(", retrying (");
  if (retrying < 0) return undefined;
  const n = text.lastIndexOf(" NCCL ", retrying);
  const h = n > 0 ? parseHeaderAt(text, n, 0, text.length) : undefined;
  if (h === undefined || h.level !== "INFO") return undefined;
  const m = h.msgStart;
  const end = trimEnd(text, m, text.length);
  const r = find(text, " returned ", m, end);
  const k = r >= 0 ? find(text, ", retrying (", r, end) : -1;
  if (k < 0 || find(text, "onnect", m, r) < 0) return undefined;
  const tries = readInt(text, k + 12, end);
  if (tries === undefined || text.charCodeAt(pos) !== 47 /* / */) return undefined;
  const of = readInt(text, pos + 1, end);
  if (of === undefined || tries > of || text.charCodeAt(pos) !== 41 /* ) */) return undefined;
  const ev: WarnEvent = {
    kind: "warn",
    warnKind: "connect_failed",
    message: text.slice(m, end),
    call: "connect",
    error: text.slice(r + 10, k),
    host: h.host,
    pid: h.pid,
    tid: h.tid,
    cudaDev: h.cudaDev,
  };
  const to = find(text, "connect to ", m, r);
  if (to >= 0) {
    const lt = text.indexOf("<", to + 11);
    const peerEnd = lt > 0 && lt < r ? lt : r;
    ev.peer = text.slice(to + 11, peerEnd);
    if (lt > 0 && lt < r) {
      const port = readInt(text, lt + 1, r);
      if (port !== undefined) ev.peerPort = port;
    }
  }
  return { ev, tries, of };
}
