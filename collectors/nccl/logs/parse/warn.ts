/**
 * NCCL WARN messages, classified, and NCCL's error-return chain (`file.cc:123 -> 2`).
 *
 * Forms seen in the wild (misc/socket.cc, transport/net_ib.cc, plugins, enqueue.cc, bootstrap.cc):
 *   socketProgressOpt: Call to recv from 172.17.0.2<40537> failed : Connection reset by peer
 *   Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe
 *   socketProgress: Connection closed by remote peer node1<57557>
 *   socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort
 *   NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)
 *   NET/IB : Got completion from peer 10.1.1.1<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid .. remoteGids..
 *   NET/IB: Got completion from peer 10.1.1.1<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 ... hca mlx5_0
 *   NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129          (2.8, no peer)
 *   NET/OFI Request 0x.. completed with error. RC: 113. Error: 2 (UNDELIVERABLE). ...   (net plugins: net-plugin.ts)
 *   NET/OFI aws-ofi-nccl initialization failed / NET/OFI Initializing plugin failed   (a net plugin that cannot start)
 *   Mismatched collective detected, please check your collective calls at and around rank 39
 *   NET/IB : collective mismatch error local size 1 remote 2 ...   (and every other size mismatch: size-mismatch.ts)
 *   Net : Socket creation failed : Address family not supported by protocol
 *   Bootstrap Root : rank 1 of 8 ranks has already checked in
 *   Call to ibv_modify_qp failed with error Invalid argument
 */
import type { RetcodeEvent, WarnDetail, WarnKind } from "./types.js";
import { pluginGdrOff } from "./net.js";
import { netCompletion } from "./net-plugin.js";
import { sizeMismatch } from "./size-mismatch.js";
import { find, isDigit, pos, readInt, skipSpaces, tokenEnd } from "./scan.js";

/** `host<port>` at i: fills peer/peerPort. The peer may be an IPv4/IPv6 address or a host name. */
function peerAt(s: string, i: number, end: number, d: WarnDetail): void {
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

/** `Call to recv from X<p> failed : ...` / `Connect to X<p> failed : ...`: fills call/peer/error. */
function socketFailure(s: string, i: number, end: number, d: WarnDetail): void {
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

/** Classifies the WARN text in [i, end) into d (d.warnKind is always set). */
export function classifyWarn(s: string, i: number, end: number, d: WarnDetail): void {
  let kind: WarnKind = "other";
  let k: number;
  if (find(s, "Got completion ", i, end) >= 0) {
    kind = "ib_completion_error";
    ibCompletion(s, i, end, d);
  } else if (netCompletion(s, i, end, d)) {
    return;
  } else if (s.startsWith("NET/", i) && find(s, "nitializ", i, end) >= 0 && find(s, "failed", i, end) >= 0) {
    // aws-ofi-nccl `NET/OFI aws-ofi-nccl initialization failed`, `NET/OFI Initializing plugin failed`
    kind = "net_plugin_error";
  } else if (sizeMismatch(s, i, end, d)) {
    const pk = find(s, " peer ", i, end);
    if (pk >= 0) peerAt(s, pk + 6, end, d);
    return;
  } else if ((k = find(s, "Mismatched collective", i, end)) >= 0) {
    kind = "collective_mismatch";
    const rk = find(s, "around rank ", k, end);
    const r = rk >= 0 ? readInt(s, rk + 12, end) : undefined;
    if (r !== undefined) d.mismatchRank = r;
  } else if (find(s, "Connection reset by peer", i, end) >= 0 || find(s, "Broken pipe", i, end) >= 0) {
    kind = "connection_reset";
    socketFailure(s, i, end, d);
  } else if ((k = find(s, "closed by remote peer", i, end)) >= 0) {
    kind = "connection_closed";
    peerAt(s, skipSpaces(s, k + 21, end), end, d);
  } else if ((k = find(s, "Cuda failure ", i, end)) >= 0 || (k = find(s, "CUDA failure ", i, end)) >= 0) {
    // `Cuda failure 'out of memory'`, `Cuda failure 700 'an illegal memory access was encountered'`
    kind = "cuda_error";
    const q = s.indexOf("'", k + 13);
    const q2 = q >= 0 && q < end ? s.indexOf("'", q + 1) : -1;
    if (q2 > q && q2 <= end) d.error = s.slice(q + 1, q2);
  } else if (find(s, "Connect to ", i, end) >= 0) {
    kind = "connect_failed";
    socketFailure(s, i, end, d);
  } else if (find(s, "Socket creation failed", i, end) >= 0) {
    // `Net : Socket creation failed : Address family not supported by protocol` (socket.h, 2.3-2.11):
    // the socket for a peer connection cannot even be made (an IPv6 interface where IPv6 is off, ...).
    kind = "connect_failed";
    d.call = "socket";
    socketFailure(s, i, end, d);
  } else if (find(s, "timed out", i, end) >= 0 || find(s, "imeout", i, end) >= 0) {
    kind = "timeout";
    socketFailure(s, i, end, d);
  } else if (find(s, "ootstrap", i, end) >= 0) {
    kind = "bootstrap_error";
  } else if ((k = find(s, "retcode ", i, end)) >= 0 && find(s, "Failed to execute operation", i, end) >= 0) {
    const code = readInt(s, k + 8, end);
    kind = code === 2 ? "system_error" : code === 3 ? "internal_error" : "other";
  } else if (
    find(s, "Call to ", i, end) >= 0 || find(s, "libibverbs", i, end) >= 0 || find(s, "ystem error", i, end) >= 0
  ) {
    kind = "system_error";
    socketFailure(s, i, end, d);
  } else if (find(s, "nternal error", i, end) >= 0 || find(s, "ncclInternalError", i, end) >= 0) {
    kind = "internal_error";
  }
  d.warnKind = kind;
  if (kind === "other" && pluginGdrOff(s, i, end)) d.gdrDisabled = true;
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
