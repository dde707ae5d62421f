/**
 * Entry point of the NCCL / PyTorch log line parser: `parseLine(line)` turns one physical log line
 * into at most one typed event, `parseText(text)` does a whole capture. Event kinds (types.ts):
 * version, init, comm_info, coll, net, gdr, channel, ring, tree, connected, warn, retcode, teardown,
 * and the PyTorch ones pt_watchdog_timeout, pt_work_status, pt_heartbeat, pt_dump, pt_desync,
 * pt_flight_recorder, pt_error.
 *
 * Hot path (NCCL_DEBUG_SUBSYS=COLL lines): one indexOf for ` NCCL `, a backward walk over the
 * `host:pid:tid [dev]` header (header.ts), a 10-character test for `Op: opCount `, and one
 * forward walk over the COLL fields (coll.ts). No regular expressions; per line only a small
 * header record, the event and its field strings are allocated. Lines without `NCCL` cost a few
 * indexOf calls and return undefined; other NCCL INFO lines are dispatched on their first letter.
 *
 * Torn lines (two processes appending to one file): when the message of a header contains a
 * second complete `host:pid:tid [n] NCCL ...` header, the event is taken from the second one and
 * marked `torn`; the first writer's partial message is dropped (its fields cannot be trusted; a
 * COLL line validated up to the tear is kept when the second writer's text yields nothing), and
 * the physical line's launcher prefix and timestamp are not given to the second writer.
 * parseLine never throws: any unexpected input yields undefined.
 */
import type { ChannelEvent, GdrEvent, NcclEvent, WarnEvent } from "./types.js";
import { anomaly, parseColl } from "./coll.js";
import { parseHeaderless } from "./desync.js";
import { parseCommLine, parseDestroyed, parseVersion } from "./init.js";
import { parseBootstrap, parseGdr, parseLibibverbs, parseNetMsg, parseNicDistance, parseUsingNetwork } from "./net.js";
import { type NcclHeader, parseHeaderAt } from "./header.js";
import { parsePrefix } from "./prefix.js";
import { PG_DESTROYED, parsePyTorch } from "../pytorch/parse.js";
import { parsePyTorchDebug } from "../pytorch/parse-debug.js";
import { parseChannelMsg, parseConnected, parseTrees } from "./topo.js";
import { classifyWarn, parseRetcode } from "./warn.js";
import { find, trimEnd } from "./scan.js";

/** Lines longer than this are cut before parsing (NCCL's own lines are at most 1 KiB). */
export const MAX_LINE = 16384;
/** How many ` NCCL ` markers are tried as a header before giving up on a line. */
const MAX_HEADER_TRIES = 4;
/** How many writers' headers one torn line may hold before it is given up as garbage. */
const MAX_TORN_DEPTH = 8;

/** Parses one log line (with or without its trailing newline / CR). */
export function parseLine(line: string): NcclEvent | undefined {
  try {
    return parseUnsafe(line);
  } catch {
    return undefined;
  }
}

/** Parses every line of a text (for tests and offline use). */
export function parseText(text: string): NcclEvent[] {
  const out: NcclEvent[] = [];
  let i = 0;
  while (i < text.length) {
    let nl = text.indexOf("\n", i);
    if (nl < 0) nl = text.length;
    const ev = parseLine(text.slice(i, nl));
    if (ev !== undefined) out.push(ev);
    i = nl + 1;
  }
  return out;
}

function parseUnsafe(line: string): NcclEvent | undefined {
  if (typeof line !== "string") return undefined;
  const s = line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line;
  let end = s.length;
  while (end > 0 && (s.charCodeAt(end - 1) === 13 || s.charCodeAt(end - 1) === 10)) end--;
  if (end < 4) return undefined;
  let n = s.indexOf(" NCCL ");
  for (let tries = 0; n > 0 && n < end && tries < MAX_HEADER_TRIES; tries++) {
    const h = parseHeaderAt(s, n, 0, end);
    if (h !== undefined) return fromHeader(s, h, end, 0);
    n = s.indexOf(" NCCL ", n + 6);
  }
  return noHeader(s, end);
}

/** Event for the header h; recovers a second header found inside the message (torn line). */
function fromHeader(s: string, h: NcclHeader, end: number, depth: number): NcclEvent | undefined {
  const torn = depth > 0;
  const m = h.msgStart;
  let ev: NcclEvent | undefined;
  if (h.level === "INFO") {
    const c = s.charCodeAt(m);
    if (c >= 65 && c <= 90) {
      ev = parseColl(s, m, end);
      if (ev !== undefined && !anomaly) return withHeader(s, ev, h, torn);
    }
  } else if (h.level !== "WARN") {
    return undefined;
  }
  // Rare lines from here on: look for a second writer's header inside the message.
  const k = find(s, " NCCL ", m, end);
  if (k >= 0 && depth < MAX_TORN_DEPTH) {
    const h2 = parseHeaderAt(s, k, m, end);
    if (h2 !== undefined) {
      const ev2 = fromHeader(s, h2, end, depth + 1);
      if (ev2 !== undefined) return ev2;
      // The first writer's text was cut by the second one: only a COLL event, whose fields were
      // validated one by one up to the tear, is kept; any other partial message is dropped.
      return ev === undefined ? undefined : withHeader(s, ev, h, torn);
    }
  }
  if (ev === undefined) ev = h.level === "INFO" ? info(s, m, trimEnd(s, m, end)) : warn(s, h, end);
  return ev === undefined ? undefined : withHeader(s, ev, h, torn);
}

function withHeader(s: string, ev: NcclEvent, h: NcclHeader, torn: boolean): NcclEvent {
  ev.host = h.host;
  ev.pid = h.pid;
  ev.tid = h.tid;
  ev.cudaDev = h.cudaDev;
  if (torn) {
    ev.torn = true;
  } else if (h.hostStart > 0) {
    const p = parsePrefix(s, 0, h.hostStart);
    if (p.ts !== undefined) ev.ts = p.ts;
    if (p.launcher !== undefined) {
      ev.launcher = p.launcher;
      if (p.launcher.rank !== undefined) ev.launcherRank = p.launcher.rank;
    }
  }
  return ev;
}

function warn(s: string, h: NcclHeader, end: number): WarnEvent {
  const ev = warnMessage(s, h.msgStart, end);
  if (h.file !== undefined) ev.file = h.file;
  if (h.line !== undefined) ev.line = h.line;
  if (h.func !== undefined) ev.func = h.func;
  return ev;
}

/** The WARN message in [start, end), classified. */
function warnMessage(s: string, start: number, end: number): WarnEvent {
  const e = trimEnd(s, start, end);
  const ev: WarnEvent = { kind: "warn", warnKind: "other", message: s.slice(start, e) };
  classifyWarn(s, start, e, ev);
  return ev;
}

/** Dispatches an INFO message (not a COLL line) on its first characters. */
function info(s: string, m: number, end: number): NcclEvent | undefined {
  switch (s.charCodeAt(m)) {
    case 67: // C
      if (s.startsWith("Channel ", m) || s.startsWith("CollNet ", m)) return parseChannelMsg(s, m, end);
      if (s.startsWith("Connected all ", m)) return parseConnected(s, m, end);
      return s.startsWith("CUDA Dev ", m) ? parseNicDistance(s, m, end) : undefined;
    case 82: // R
      return s.startsWith("Ring ", m) ? parseChannelMsg(s, m, end) : undefined;
    case 84: // T
      return s.startsWith("Trees ", m) ? parseTrees(s, m, end) : undefined;
    case 78: // N
      if (s.startsWith("NCCL version ", m)) return parseVersion(s, m, end);
      // `NCCL_IB_DISABLE set by environment to 1.`: no IB, whatever else the log shows.
      if (s.startsWith("NCCL_IB_DISABLE set by environment to ", m)) {
        const v = s.charCodeAt(m + 38);
        return v >= 49 && v <= 57 ? { kind: "net", net: "IB", what: "no_device", disabled: true } : undefined;
      }
      return s.startsWith("NET", m) ? parseNetMsg(s, m, end) : undefined;
    case 71: // G
      return s.startsWith("GPU Direct RDMA ", m) ? parseGdr(s, m, end) : undefined;
    case 85: // U
      return parseUsingNetwork(s, m, end);
    case 66: // B
      return s.startsWith("Bootstrap", m) ? parseBootstrap(s, m, end) : undefined;
    case 70: // F
      return parseLibibverbs(s, m);
    case 68: // D: NCCL 2.3-2.6's `Destroyed comm 0x7f24c4001af0 rank 4`
      return s.startsWith("Destroyed comm ", m) ? parseDestroyed(s, m + 10, end) : undefined;
    case 99: // c
    case 110: // n
    case 114: // r
    case 91: // [
      return parseCommLine(s, m, end) ?? parseRetcode(s, m, end);
    default:
      return parseRetcode(s, m, end);
  }
}

/** Lines without a NCCL header: NCCL 2.1/2.2's header, bare version line, PyTorch, then the headerless forms. */
function noHeader(s: string, end: number): NcclEvent | undefined {
  const old = oldHeader(s, end);
  if (old !== undefined) return old;
  const v = s.indexOf("NCCL version ");
  if (v >= 0 && v < end) {
    const p = parsePrefix(s, 0, v, true);
    if (p.end === v) {
      const ev = parseVersion(s, v, end);
      if (ev !== undefined) {
        if (p.launcher !== undefined) {
          ev.launcher = p.launcher;
          if (p.launcher.rank !== undefined) ev.launcherRank = p.launcher.rank;
        }
        return ev;
      }
    }
  }
  if (s.indexOf("NCCL") >= 0 || s.indexOf("nccl") >= 0 || s.indexOf("Last error:") >= 0 || s.indexOf(PG_DESTROYED) >= 0) {
    const ev = parsePyTorch(s, end);
    if (ev !== undefined) return ev;
    const w = headerlessWarn(s, end);
    if (w !== undefined) return w;
    const g = headerlessGdr(s, end);
    if (g !== undefined) return g;
    const l = headerlessNetLink(s, end);
    if (l !== undefined) return l;
  }
  if (s.indexOf("CollectiveFingerPrint(") >= 0 || s.indexOf("mismatch between collectives") >= 0 || s.indexOf("monitoredBarrier") >= 0) {
    const ev = parsePyTorchDebug(s, end);
    if (ev !== undefined) return ev;
  }
  return parseHeaderless(s, end);
}

/**
 * `NCCL WARN <message>` with no `host:pid:tid [dev]` before it: a line quoted alone, or a prefix
 * NCCL did not write (`host [dev]`, a wrapper's). A warning all the same, of no known process.
 */
function headerlessWarn(s: string, end: number): WarnEvent | undefined {
  const k = s.indexOf("NCCL WARN ");
  if (k < 0 || k >= end || !levelPlace(s, k)) return undefined;
  if (trimEnd(s, k + 10, end) <= k + 10) return undefined;
  return warnMessage(s, k + 10, end);
}

/**
 * `NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)` quoted alone, or
 * `[0] NCCL INFO NET/OFI ... disabling GDR` pasted with the device tag only: GPUDirect RDMA off, of
 * no known process. Only GDR lines are taken; `[n]` right before is the device.
 */
function headerlessGdr(s: string, end: number): GdrEvent | undefined {
  const k = s.indexOf("NCCL INFO ");
  if (k < 0 || k >= end || !levelPlace(s, k)) return undefined;
  const m = k + 10;
  const ev = s.startsWith("GPU Direct RDMA ", m) ? parseGdr(s, m, end) : s.startsWith("NET", m) ? parseNetMsg(s, m, trimEnd(s, m, end)) : undefined;
  if (ev === undefined || ev.kind !== "gdr") return undefined;
  ev.headerless = true;
  let b = k - 1;
  while (b > 0 && s.charCodeAt(b) === 32) b--;
  if (s.charCodeAt(b) === 93 /* ] */) {
    const lb = s.lastIndexOf("[", b);
    const dev = lb >= 0 && b - lb <= 4 ? Number(s.slice(lb + 1, b)) : NaN;
    if (Number.isInteger(dev) && dev >= 0 && b > lb + 1) ev.cudaDev = dev;
  }
  return ev;
}

/**
 * `[0] NCCL INFO Ring 00 : 15[41000] -> 0[1b000] [receive] via NET/IB/0`, pasted with its host:pid
 * cut away (nccl-pasted 322): a channel through the network, of no known process. Only NET links
 * are taken (whether they carry GPUDirect RDMA).
 */
function headerlessNetLink(s: string, end: number): ChannelEvent | undefined {
  const k = s.indexOf("NCCL INFO ");
  if (k < 0 || k >= end || !levelPlace(s, k)) return undefined;
  const m = k + 10;
  if (!(s.startsWith("Ring ", m) || s.startsWith("Channel ", m)) || find(s, " via NET/", m, end) < 0) return undefined;
  const ev = parseChannelMsg(s, m, trimEnd(s, m, end));
  if (ev?.kind !== "channel" || ev.transport !== "NET") return undefined;
  ev.headerless = true;
  return ev;
}

/** `NCCL WARN|INFO` at k where NCCL's level word stands: the line's start (after blanks), or after a tag or NCCL's own file:line. */
function levelPlace(s: string, k: number): boolean {
  // At the line's start (after blanks), or after a tag: `[0] NCCL WARN`, `<stderr>: NCCL WARN`; not in prose.
  let b = k - 1;
  while (b >= 0 && s.charCodeAt(b) === 32) b--;
  if (b >= 0) {
    const c = s.charCodeAt(b);
    // ] : > |, or NCCL's own `init.cc:1247` left from a header cut before it.
    const token = s.slice(s.lastIndexOf(" ", b) + 1, b + 1);
    // `.c:` too: net plugins built from NCCL's sources (`ibvwrap.c:262`, `ib_plugin.c:1615`).
    const sourceRef = token.includes(".cc:") || token.includes(".h:") || token.includes(".cu:") || token.includes(".c:");
    if (c !== 93 && c !== 58 && c !== 62 && c !== 124 && !sourceRef) return false;
  }
  return true;
}

/**
 * NCCL 2.1/2.2 wrote the level without `NCCL`: `host:pid:tid [1] INFO NET : Using interface ...`,
 * `host:pid:tid [1] misc/enqueue.cu:150 WARN Cuda failure 'invalid device function'`. Two indexOf
 * calls on lines that have no NCCL header; the header itself is checked as strictly as the new one.
 */
function oldHeader(s: string, end: number): NcclEvent | undefined {
  let n = s.indexOf("] INFO ");
  if (n < 0 || n >= end) n = s.indexOf(" WARN ");
  else n++;
  if (n <= 0 || n >= end) return undefined;
  const h = parseHeaderAt(s, n, 0, end, 1);
  return h === undefined ? quotedOldWarn(s, n, end) : fromHeader(s, h, end, 0);
}

/**
 * `include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol`:
 * a 2.0-2.4 WARN quoted from its source reference on, its host:pid left out (nccl-pasted 428). Only
 * where the reference, one of NCCL's own sources of those releases, is all that stands before
 * ` WARN ` (after blanks or a launcher's tag), and the words are a WARN kind NCCL wrote: any other
 * C program's `server.c:120 WARN low disk space` is not NCCL's.
 */
function quotedOldWarn(s: string, w: number, end: number): WarnEvent | undefined {
  if (!s.startsWith(" WARN ", w) || trimEnd(s, w + 6, end) <= w + 6) return undefined;
  const t = s.lastIndexOf(" ", w - 1) + 1;
  const colon = s.lastIndexOf(":", w - 1);
  if (colon <= t || !isOldNcclSource(s.slice(t, colon)) || !allDigits(s, colon + 1, w)) return undefined;
  if (t > 0 && parsePrefix(s, 0, t, true).end < skipBlanksBack(s, t)) return undefined;
  const ev = warnMessage(s, w + 6, end);
  if (ev.warnKind === "other") return undefined;
  ev.headerless = true;
  return ev;
}

/** NCCL 2.0-2.4's source tree: `include/*.h`, `transport/*.cu`, `misc/*.cu`, `graph/*.cu`, `collectives/...`, and the top-level `.cu` files. */
const OLD_DIRS = ["include/", "transport/", "misc/", "graph/", "collectives/"];
const OLD_TOP = new Set(["init.cu", "bootstrap.cu", "enqueue.cu", "channel.cu", "transport.cu", "group.cu"]);

function isOldNcclSource(path: string): boolean {
  if (OLD_TOP.has(path)) return true;
  if (!(path.endsWith(".h") || path.endsWith(".cu"))) return false;
  for (const d of OLD_DIRS) if (path.startsWith(d) && path.indexOf(" ") < 0) return true;
  return false;
}

function allDigits(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (s.charCodeAt(i) < 48 || s.charCodeAt(i) > 57) return false;
  return true;
}

/** The index after the last non-blank before t (0 when only blanks stand there). */
function skipBlanksBack(s: string, t: number): number {
  let b = t;
  while (b > 0 && (s.charCodeAt(b - 1) === 32 || s.charCodeAt(b - 1) === 9)) b--;
  return b;
}
