/**
 * NCCL WARN messages, classified by the table of warn-kinds.ts (each kind's forms, its words and the
 * real captures it classifies), the readers that fill their fields, and NCCL's error-return chain
 * (`file.cc:123 -> 2`).
 */
import type { RetcodeEvent, WarnDetail, WarnKind } from "./types.js";
import { pluginGdrOff } from "./net.js";
import { netCompletion } from "./net-plugin.js";
import { sizeMismatch } from "./size-mismatch.js";
import { WARN_KINDS, type WarnFields, type WarnParser } from "./warn-kinds.js";
import { find, isDigit, pos, readInt, skipSpaces, tokenEnd, trimEnd } from "./scan.js";

/** NCCL 2.1-2.2's net_ib.cu WARN when the GPUDirect RDMA kernel module (nv_peer_mem) is not loaded. */
const GDR_NO_MODULE = "No module present for GPU Direct RDMA";
/** `host<port>` at i: fills peer/peerPort. The peer may be an IPv4/IPv6 address or a host name. */
/**
 * `[10.0.0.7](http://10.0.0.7)<1234>`: an address a Markdown renderer made a link of, pasted back
 * as its markup: the link text, and where the rest (the `<port>`) starts.
 */
function unlinked(s: string, i: number, end: number): { text: string; next: number } | undefined {
  if (s.charCodeAt(i) !== 91 /* [ */) return undefined;
  const te = tokenEnd(s, i, end);
  const close = s.indexOf("](", i);
  if (close < 0 || close > te) return undefined;
  const paren = s.indexOf(")", close + 2);
  if (paren < 0 || paren > te) return undefined;
  return { text: s.slice(i + 1, close), next: paren + 1 };
}

function peerAt(s: string, i: number, end: number, d: WarnDetail): void {
  const link = unlinked(s, i, end);
  if (link !== undefined) {
    d.peer = link.text;
    if (s.charCodeAt(link.next) === 60 /* < */) {
      const port = readInt(s, link.next + 1, end);
      if (port !== undefined && s.charCodeAt(pos) === 62 /* > */) d.peerPort = port;
    }
    return;
  }
  const te = tokenEnd(s, i, end);
  const lt = s.indexOf("<", i);
  if (lt > i && lt < te) {
    d.peer = s.slice(i, lt);
    const port = readInt(s, lt + 1, te);
    if (port !== undefined && s.charCodeAt(pos) === 62 /* > */) d.peerPort = port;
  } else if (te > i) {
    let e = te;
    while (e > i && (s.charCodeAt(e - 1) === 44 || s.charCodeAt(e - 1) === 46)) e--;
    if (e > i) d.peer = s.slice(i, e);
  }
}

/** Integer after `label`, accepting `NAME(12)` as 12. */
function numAfter(s: string, label: string, from: number, end: number): number | undefined {
  const k = find(s, label, from, end);
  if (k < 0) return undefined;
  let i = k + label.length;
  if (!isDigit(s.charCodeAt(i)) && s.charCodeAt(i) !== 45) {
    const lp = s.indexOf("(", i);
    const te = tokenEnd(s, i, end);
    if (lp < 0 || lp > te) return undefined;
    i = lp + 1;
  }
  return readInt(s, i, end);
}

function wordAfter(s: string, label: string, from: number, end: number): string | undefined {
  const k = find(s, label, from, end);
  if (k < 0) return undefined;
  const ws = skipSpaces(s, k + label.length, end);
  const we = tokenEnd(s, ws, end);
  return we > ws ? s.slice(ws, we) : undefined;
}

function ibCompletion(s: string, i: number, end: number, d: WarnDetail): void {
  const pk = find(s, "from peer ", i, end);
  if (pk >= 0) peerAt(s, pk + 10, end, d);
  const set = (k: "ibStatus" | "ibOpcode" | "ibLen" | "vendorErr", v: number | undefined): void => {
    if (v !== undefined) d[k] = v;
  };
  set("ibStatus", numAfter(s, "status=", i, end) ?? numAfter(s, "with error ", i, end));
  set("ibOpcode", numAfter(s, "opcode=", i, end) ?? numAfter(s, "opcode ", i, end));
  set("ibLen", numAfter(s, "len=", i, end) ?? numAfter(s, "len ", i, end));
  const vk = find(s, "vendor err ", i, end);
  const vk2 = vk < 0 ? find(s, "vendor_err=", i, end) : -1;
  if (vk >= 0 || vk2 >= 0) {
    const v = readInt(s, vk >= 0 ? vk + 11 : vk2 + 11, end);
    if (v !== undefined) {
      d.vendorErr = v;
      const p = skipSpaces(s, pos, end);
      if (s.charCodeAt(p) === 40 /* ( */) {
        const rp = s.indexOf(")", p);
        if (rp > p && rp < end && rp - p < 16) d.ibDir = s.slice(p + 1, rp);
      }
    }
  }
  const lg = wordAfter(s, "localGid ", i, end);
  if (lg !== undefined) d.localGid = lg;
  const rk = find(s, "remoteGids", i, end);
  if (rk >= 0) {
    const ws = skipSpaces(s, rk + 10, end);
    const we = tokenEnd(s, ws, end);
    if (we > ws) d.remoteGid = s.slice(ws, we);
  }
  const hca = wordAfter(s, " hca ", i, end);
  if (hca !== undefined) d.hca = hca;
}

/**
 * Gloo's pair names its peer `[10.128.0.5]:19855` (`Connection closed by peer [...]:port`, `Read
 * error [...]:port: Connection reset by peer`): the address between the brackets at i, the port after.
 */
function bracketedPeerAt(s: string, i: number, end: number, d: WarnDetail): void {
  const close = s.indexOf("]", i);
  // An address and its port: `[10.128.0.5]:19855`, not Python's `[Errno 104]`.
  if (close <= i || close >= end || close - i > 64 || s.charCodeAt(close + 1) !== 58 /* : */) return;
  const port = readInt(s, close + 2, end);
  const host = s.slice(i, close);
  if (port === undefined || host.indexOf(" ") >= 0) return;
  d.peer = host;
  d.peerPort = port;
}

/** Gloo's pair's socket failures before the system's words: `Read error [` / `Write error [`. */
const GLOO_PAIR_IO = ["Read error [", "Write error ["];

/** `Call to recv from X<p> failed : ...` / `Connect to X<p> failed : ...` (and Gloo's `Read error [X]:p: ...`): fills call/peer/error. */
function socketFailure(s: string, i: number, end: number, d: WarnDetail): void {
  for (const w of GLOO_PAIR_IO) {
    const gk = find(s, w, i, end);
    if (gk >= 0) {
      d.call = w.startsWith("Read") ? "recv" : "send";
      bracketedPeerAt(s, gk + w.length, end, d);
    }
  }
  const ck = find(s, "Call to ", i, end);
  if (ck >= 0) {
    const ce = tokenEnd(s, ck + 8, end);
    d.call = s.slice(ck + 8, ce);
    const fk = find(s, " from ", ce, end);
    if (fk >= 0 && fk - ce < 4) peerAt(s, fk + 6, end, d);
  }
  const tk = find(s, "Connect to ", i, end);
  if (tk >= 0) {
    d.call = "connect";
    peerAt(s, tk + 11, end, d);
  }
  const ek = find(s, "failed : ", i, end);
  if (ek >= 0) d.error = s.slice(ek + 9, end);
  else {
    const wk = find(s, "failed with error ", i, end);
    if (wk >= 0) d.error = s.slice(wk + 18, end);
  }
}

/** `mlx5_0:1` at i (to its end, or a comma): fills hca and hcaPort; false when the token is no `name:port`. */
function hcaPortAt(s: string, i: number, end: number, d: WarnDetail): boolean {
  let te = tokenEnd(s, i, end);
  if (te > i && s.charCodeAt(te - 1) === 44 /* , */) te--;
  const colon = s.lastIndexOf(":", te - 1);
  if (colon <= i || colon >= te - 1) return false;
  const port = readInt(s, colon + 1, te);
  if (port === undefined || pos !== te) return false;
  const name = s.slice(i, colon);
  // `N/A:-1`: NCCL could not tell the device of the QP.
  if (name !== "N/A") d.hca = name;
  // NCCL prints -1 where it could not query the QP's port.
  if (port >= 0) d.hcaPort = port;
  return true;
}

/**
 * NCCL's IB async event thread (net_ib.cc / net_ib/common.cc ncclIbAsyncThreadMain), every form
 * 2.3-2.30: `NET/IB : Got async event : %s` (to 2.19); `NET/IB : %s:%d Got async event : %s`
 * (2.20-2.22, device and port); from 2.23 `NET/IB : %s:%d async fatal event: %s`, `... async
 * fatal event on CQ (%p): %s`, `... on QP (%p): %s` (2.29+ with `qpn=.. state=.. rq_psn=..` before
 * the colon), `... on SRQ, unused for now (%p): %s`, `... Got async error event: %s` (2.23-2.28),
 * `... Got non-fatal async event: %s(%d)` (2.29+), `... GID table changed`, `... unknown event
 * type (%d)`. The %s is libibverbs' ibv_event_type_str (`port error`, `local catastrophic error`).
 * Also 2.4-2.5's `Call to ibv_get_async_event failed`: the thread's read failed (after a fatal event).
 */
function ibAsync(s: string, i: number, end: number, d: WarnDetail): void {
  if (find(s, "ibv_get_async_event", i, end) >= 0) {
    d.call = "ibv_get_async_event";
    return;
  }
  // The device: the token after `NET/IB : ` when it is `name:port` (2.20+).
  const c = s.indexOf(":", i);
  const event = find(s, "event", i, end);
  if (c > 0 && c < end && (event < 0 || c < event)) hcaPortAt(s, skipSpaces(s, c + 1, end), end, d);
  if (event < 0) {
    if (find(s, "GID table changed", i, end) >= 0) d.ibEvent = "GID table changed";
    return;
  }
  const sep = s.lastIndexOf(": ", end - 1);
  if (sep > event) {
    let we = end;
    // 2.29+ `port error(10)`: the number after the words.
    if (s.charCodeAt(we - 1) === 41 /* ) */) {
      const lp = s.lastIndexOf("(", we - 1);
      const code = lp > sep ? readInt(s, lp + 1, we - 1) : undefined;
      if (code !== undefined && code >= 0 && pos === we - 1) {
        d.ibEventCode = code;
        we = lp;
      }
    }
    const words = s.slice(skipSpaces(s, sep + 2, we), we).trim();
    if (words !== "") d.ibEvent = words;
    return;
  }
  const u = find(s, "unknown event type (", event - 8, end);
  if (u >= 0) {
    d.ibEvent = "unknown event type";
    const code = readInt(s, u + 20, end);
    if (code !== undefined && code >= 0) d.ibEventCode = code;
  }
}

/**
 * `Call to ibv_modify_qp failed with error Network is unreachable` (to 2.23) and 2.24+'s `Call to
 * ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state
 * RTR, local GID index 3, local GID ::ffff:.., remote GID ::ffff:..` (misc/ibvwrap.cc): error is
 * everything NCCL said after `failed with `, errno its number, hca/hcaPort the `on dev` device.
 */
function ibQp(s: string, i: number, end: number, d: WarnDetail): void {
  d.call = "ibv_modify_qp";
  const k = find(s, "failed with ", i, end);
  if (k < 0) return;
  let e = k + 12;
  if (s.startsWith("error ", e)) e += 6;
  else if (isDigit(s.charCodeAt(e))) {
    const n = readInt(s, e, end);
    if (n !== undefined) d.errno = n;
  }
  const text = s.slice(e, end).trim();
  if (text !== "") d.error = text;
  const dev = find(s, "on dev ", e, end);
  if (dev >= 0) hcaPortAt(s, dev + 7, end, d);
}

/** The HCA, port and event of an ib_async_event WARN's message (as a WarningRecord keeps it). */
export function ibAsyncFacts(message: string): Pick<WarnDetail, "hca" | "hcaPort" | "ibEvent" | "ibEventCode" | "call"> {
  const d: WarnDetail = { warnKind: "ib_async_event" };
  ibAsync(message, 0, trimEnd(message, 0, message.length), d);
  return { hca: d.hca, hcaPort: d.hcaPort, ibEvent: d.ibEvent, ibEventCode: d.ibEventCode, call: d.call };
}

/** The HCA and port of an ib_qp_error WARN's message (2.24+ `on dev mlx5_0:1`), if it names them. */
export function ibQpDevice(message: string): { hca?: string; hcaPort?: number } {
  const d: WarnDetail = { warnKind: "ib_qp_error" };
  ibQp(message, 0, trimEnd(message, 0, message.length), d);
  return { hca: d.hca, hcaPort: d.hcaPort };
}

/** Fills the fields of a literal form; `after` is where its first `any` substring found ends. May name another kind than the row's. */
type Reader = (s: string, i: number, end: number, d: WarnDetail, after: number) => WarnKind | undefined;

const FIELDS: Record<WarnFields, Reader> = {
  ibCompletion: (s, i, end, d) => void ibCompletion(s, i, end, d),
  ibAsync: (s, i, end, d) => void ibAsync(s, i, end, d),
  ibQp: (s, i, end, d) => void ibQp(s, i, end, d),
  libibverbs: (_s, _i, _end, d) => {
    d.call = "dlopen";
    d.error = "libibverbs missing";
    return undefined;
  },
  socketFailure: (s, i, end, d) => void socketFailure(s, i, end, d),
  glooClosedPeer: (s, _i, end, d, after) => void bracketedPeerAt(s, after, end, d),
  // `connect to X<p> returned E, exceeded ...` / `connect returned E, exceeded ...`: the peer where named, the error.
  retriedConnect: (s, i, end, d) => {
    d.call = "connect";
    const tk = find(s, "connect to ", i, end);
    if (tk >= 0) peerAt(s, tk + 11, end, d);
    const rk = find(s, "returned ", i, end);
    const ek = rk >= 0 ? find(s, ", exceeded", rk, end) : -1;
    if (ek > rk) d.error = s.slice(rk + 9, ek);
    return undefined;
  },
  socketCreation: (s, i, end, d) => {
    d.call = "socket";
    socketFailure(s, i, end, d);
    return undefined;
  },
  closedPeer: (s, _i, end, d, after) => void peerAt(s, skipSpaces(s, after, end), end, d),
  // `Bootstrap Root : rank 1 of 8 ranks has already checked in`: the rank two processes were given.
  duplicateRank: (s, i, end, d) => {
    const rk = find(s, "rank ", i, end);
    const r = rk >= 0 ? readInt(s, rk + 5, end) : undefined;
    if (r !== undefined) d.duplicateRank = r;
    return undefined;
  },
  // `Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000`: NCCL's own rank first, then the other one on its GPU.
  sharedGpu: (s, i, end, d) => {
    const rk = find(s, ": rank ", i, end);
    const own = rk >= 0 ? readInt(s, rk + 7, end) : undefined;
    if (own !== undefined) d.selfRank = own;
    const ak = find(s, " and rank ", i, end);
    const r = ak >= 0 ? readInt(s, ak + 10, end) : undefined;
    if (r !== undefined) d.sharedGpuRank = r;
    return undefined;
  },
  // `Invalid rank requested : 2/2`: the rank this process asked for, out of the communicator's size.
  requestedRank: (s, _i, end, d, after) => {
    let k = skipSpaces(s, after, end);
    if (s.charCodeAt(k) === 58 /* : */) k = skipSpaces(s, k + 1, end);
    const r = readInt(s, k, end);
    if (r !== undefined && s.charCodeAt(pos) === 47 /* / */) d.selfRank = r;
    return undefined;
  },
  mismatchRank: (s, _i, end, d, after) => {
    const rk = find(s, "around rank ", after, end);
    const r = rk >= 0 ? readInt(s, rk + 12, end) : undefined;
    if (r !== undefined) d.mismatchRank = r;
    return undefined;
  },
  // `Cuda failure 'out of memory'`, `Cuda failure 700 'an illegal memory access was encountered'`
  cudaError: (s, _i, end, d, after) => {
    const q = s.indexOf("'", after);
    const q2 = q >= 0 && q < end ? s.indexOf("'", q + 1) : -1;
    if (q2 > q && q2 <= end) d.error = s.slice(q + 1, q2);
    return undefined;
  },
  proxyRetcode: (s, _i, end, _d, after) => {
    const code = readInt(s, after, end);
    return code === 2 ? "system_error" : code === 3 ? "internal_error" : "other";
  },
};

/** The sub-parsers of parser forms: true when they told the message (they fill d and name its kind). */
const PARSERS: Record<WarnParser, (s: string, i: number, end: number, d: WarnDetail) => boolean> = {
  netCompletion,
  sizeMismatch: (s, i, end, d) => {
    if (!sizeMismatch(s, i, end, d)) return false;
    const pk = find(s, " peer ", i, end);
    if (pk >= 0) peerAt(s, pk + 6, end, d);
    return true;
  },
};

interface Form {
  readonly start?: string;
  readonly any?: readonly string[];
  readonly all?: readonly string[];
  readonly none?: readonly string[];
  readonly fields?: WarnFields;
  readonly parser?: WarnParser;
}

const ROWS: readonly { readonly kind: WarnKind; readonly forms: readonly Form[] }[] = WARN_KINDS;

/** Where the first `any` substring of a literal form found ends (i where it has none), or -1 when the form does not tell the text. */
function told(f: Form, s: string, i: number, end: number): number {
  if (f.start !== undefined && !s.startsWith(f.start, i)) return -1;
  if (f.all !== undefined && !f.all.every((w) => find(s, w, i, end) >= 0)) return -1;
  if (f.none !== undefined && f.none.some((w) => find(s, w, i, end) >= 0)) return -1;
  if (f.any === undefined) return i;
  for (const w of f.any) {
    const k = find(s, w, i, end);
    if (k >= 0) return k + w.length;
  }
  return -1;
}

/** Classifies the WARN text in [i, end) into d (d.warnKind is always set): the first form of the table that tells it. */
export function classifyWarn(s: string, i: number, end: number, d: WarnDetail): void {
  const kind = kindOf(s, i, end, d);
  if (kind === undefined) return;
  d.warnKind = kind;
  // Not a kind: a net plugin's `GDR disabled` WARN (warn-kinds.ts GDR_OFF_CAPTURE), or NCCL 2.1's
  // `No module present for GPU Direct RDMA.` (nv_peer_mem not loaded; GDR_MODULE_CAPTURE).
  if (kind === "other" && (pluginGdrOff(s, i, end) || s.startsWith(GDR_NO_MODULE, i))) d.gdrDisabled = true;
}

/** The kind of the first form that tells [i, end), with its fields filled; `other` when none does; undefined when a sub-parser told it (and set d.warnKind). */
function kindOf(s: string, i: number, end: number, d: WarnDetail): WarnKind | undefined {
  for (const row of ROWS) {
    for (const f of row.forms) {
      if (f.parser !== undefined) {
        if (PARSERS[f.parser](s, i, end, d)) return undefined;
        continue;
      }
      const after = told(f, s, i, end);
      if (after >= 0) return (f.fields === undefined ? undefined : FIELDS[f.fields](s, i, end, d, after)) ?? row.kind;
    }
  }
  return "other";
}

/** `misc/socket.cc:564 -> 2 [Async thread]` at m; undefined when the message is not a retcode line. */
export function parseRetcode(s: string, m: number, end: number): RetcodeEvent | undefined {
  const te = tokenEnd(s, m, end);
  if (te >= end || !s.startsWith(" -> ", te)) return undefined;
  let colon = te - 1;
  while (colon > m && isDigit(s.charCodeAt(colon))) colon--;
  if (colon === te - 1 || s.charCodeAt(colon) !== 58) return undefined;
  const line = readInt(s, colon + 1, te);
  const code = readInt(s, te + 4, end);
  // ncclResult_t is never negative: `-> -1` is not NCCL's error chain.
  if (line === undefined || code === undefined || code < 0) return undefined;
  const ev: RetcodeEvent = { kind: "retcode", file: s.slice(m, colon), line, code };
  const lb = skipSpaces(s, pos, end);
  if (s.charCodeAt(lb) === 91) {
    const rb = s.indexOf("]", lb);
    if (rb > lb && rb < end) ev.context = s.slice(lb + 1, rb);
  }
  return ev;
}
