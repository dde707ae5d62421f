/**
 * PyTorch ProcessGroupNCCL lines (stderr of the training processes, often captured to files).
 *
 * Log header forms: `[rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] ` (c10 logger, 2.2+),
 * `[E ProcessGroupNCCL.cpp:737] ` (older), glog `E0816 01:45:40.183009 1234 ProcessGroupNCCL.cpp:607] `;
 * then ProcessGroupNCCL's own prefix `[Rank 7] `, `[PG 0 Rank 144] `, `[PG 0 (default_pg) Rank 7] `
 * or `[PG ID 0 PG GUID 0(default_pg) Rank 118] ` (group-local rank); the name in parentheses is the
 * group's description as the job gave it (`default_pg`, `gloo:tp`, `ncclx:dp_replicate`: read as it
 * is). TorchComms' in-tree NCCL backend (c10d/nccl2) writes `[TC][rank=3][name=0] ` instead.
 */
import type { NcclEvent, PtBase, PtDumpEvent, PtErrorEvent, PtHeartbeatEvent, PtWatchdogTimeoutEvent, PtWorkStatusEvent, WarnDetail } from "../parse/types.js";
import { parsePrefix } from "../parse/prefix.js";
import { classifyWarn } from "../parse/warn.js";
import { find, intAfter, isAlpha, isDigit, isSpace, pos, readInt, skipSpaces, tokenEnd, trimEnd } from "../parse/scan.js";

/** Parses the c10/glog header at i into b; returns the message start (i when there is none). */
function logHeader(s: string, i: number, end: number, b: PtBase): number {
  const c = s.charCodeAt(i);
  let j = i;
  if (c === 91 /* [ */ && isAlpha(s.charCodeAt(i + 1)) && (isSpace(s.charCodeAt(i + 2)) || isDigit(s.charCodeAt(i + 2)))) {
    j = i + 1;
  } else if (isAlpha(c) && isDigit(s.charCodeAt(i + 1)) && isDigit(s.charCodeAt(i + 4)) && isSpace(s.charCodeAt(i + 5))) {
    j = i;
  } else {
    return cutHeader(s, i, end, b);
  }
  const close = s.indexOf("] ", j);
  if (close < 0 || close > j + 120 || close >= end) return i;
  b.severity = s[j];
  const srcStart = s.lastIndexOf(" ", close - 1) + 1;
  if (srcStart > j) b.src = s.slice(srcStart, close);
  if (isDigit(s.charCodeAt(j + 1))) {
    // MMDD HH:MM:SS.frac (c10 prints the month without a leading zero: E816 = Aug 16)
    const te = tokenEnd(s, tokenEnd(s, j + 1, close) + 1, close);
    const colon = s.indexOf(":", j + 1);
    if (te < srcStart && colon > j && colon < te) b.ts = s.slice(j + 1, te);
  }
  return close + 2;
}

/** The tail of a c10 header whose start a paste cut off: `ProcessGroupNCCL.cpp:629] ` at i. */
function cutHeader(s: string, i: number, end: number, b: PtBase): number {
  const close = s.indexOf("] ", i);
  if (close < 0 || close >= end || close - i > 64) return i;
  const dot = s.indexOf(".cpp:", i);
  if (dot < 0 || dot > close || s.indexOf(" ", i) < close) return i;
  for (let k = dot + 5; k < close; k++) if (!isDigit(s.charCodeAt(k))) return i;
  b.src = s.slice(i, close);
  return close + 2;
}

/** `[Rank 7] `, `[PG 0 Rank 144] `, `[PG 0 (default_pg) Rank 7] `, `[PG ID 0 PG GUID 0(default_pg) Rank 118] ` */
function pgPrefix(s: string, i: number, end: number, b: PtBase): number {
  for (let guard = 0; guard < 2 && s.charCodeAt(i) === 91; guard++) {
    const close = s.indexOf("]", i);
    if (close < 0 || close >= end || close - i > 160) break;
    let k = i + 1;
    if (s.startsWith("PG ID ", k)) {
      const id = readInt(s, k + 6, close);
      if (id !== undefined) b.pgId = id;
      const gk = find(s, "PG GUID ", k, close);
      if (gk >= 0) {
        let ge = gk + 8;
        while (ge < close && s.charCodeAt(ge) !== 40 && !isSpace(s.charCodeAt(ge))) ge++;
        b.pgGuid = s.slice(gk + 8, ge);
      }
    } else if (s.startsWith("PG ", k)) {
      const id = readInt(s, k + 3, close);
      if (id !== undefined) b.pgId = id;
    } else if (!s.startsWith("Rank ", k)) break;
    const lp = s.indexOf("(", k);
    if (lp >= 0 && lp < close) {
      const rp = s.indexOf(")", lp);
      if (rp > lp && rp < close) b.pgName = s.slice(lp + 1, rp);
    }
    const rk = s.lastIndexOf("Rank ", close);
    if (rk >= k) {
      const r = readInt(s, rk + 5, close);
      if (r !== undefined) b.pgRank = r;
    }
    k = close + 1;
    i = skipSpaces(s, k, end);
  }
  return i;
}

/**
 * The in-tree TorchComms NCCL backend's (c10d/nccl2, `TC_LOG`) prefix `[TC][rank=3][name=<comm name>] `:
 * rank inside the group, and the group's name (its GUID, e.g. `0`, or a name such as `ncclx:tp`).
 */
function tcPrefix(s: string, i: number, end: number, b: PtBase): number {
  if (!s.startsWith("[TC]", i)) return i;
  let k = i + 4;
  for (let guard = 0; guard < 2 && s.charCodeAt(k) === 91; guard++) {
    const close = s.indexOf("]", k);
    if (close < 0 || close >= end || close - k > 160) break;
    if (s.startsWith("rank=", k + 1)) {
      const r = readInt(s, k + 6, close);
      if (r !== undefined && pos === close) b.pgRank = r;
    } else if (s.startsWith("name=", k + 1) && close > k + 6) {
      b.pgName = s.slice(k + 6, close);
      b.pgGuid = b.pgName;
    } else break;
    k = close + 1;
  }
  return skipSpaces(s, k, end);
}

/** Integer value of `Key=` terminated by `,` or `)` (a hard-wrapped line must not yield a cut number). */
function field(s: string, key: string, from: number, end: number): number | undefined {
  const k = find(s, key, from, end);
  if (k < 0) return undefined;
  const v = readInt(s, k + key.length, end);
  if (v === undefined) return undefined;
  const c = s.charCodeAt(pos);
  return pos < end && (c === 44 || c === 41) ? v : undefined;
}

/** `OpType=X` ended by `,` or `)` (a line cut inside the name gives none). */
function opType(s: string, from: number, end: number): string | undefined {
  const ok = find(s, "OpType=", from, end);
  if (ok < 0) return undefined;
  let e = ok + 7;
  while (e < end && s.charCodeAt(e) !== 44 && s.charCodeAt(e) !== 41) e++;
  return e < end && e > ok + 7 ? s.slice(ok + 7, e) : undefined;
}

function workNccl(s: string, i: number, end: number, ev: PtWatchdogTimeoutEvent): void {
  const seq = field(s, "SeqNum=", i, end);
  if (seq !== undefined) ev.seq = seq;
  const op = opType(s, i, end);
  if (op !== undefined) ev.opType = op;
  const a = field(s, "NumelIn=", i, end);
  if (a !== undefined) ev.numelIn = a;
  const b = field(s, "NumelOut=", i, end);
  if (b !== undefined) ev.numelOut = b;
  const t = field(s, "Timeout(ms)=", i, end);
  if (t !== undefined) ev.timeoutMs = t;
  const rk = find(s, " ran for ", i, end);
  if (rk >= 0) {
    const r = readInt(s, rk + 9, end);
    if (r !== undefined && s.startsWith(" millisecond", pos)) ev.ranForMs = r;
  }
}

/**
 * `label` N where N ends with one of `stops` (a char code), or with the line when `atEnd`: a paste
 * that cut the line inside the number must not yield a smaller one.
 */
function workNumber(s: string, label: string, i: number, end: number, stops: readonly number[], atEnd: boolean): number | undefined {
  const v = intAfter(s, label, i, end);
  if (v === undefined) return undefined;
  return (pos >= end && atEnd) || (pos < end && stops.includes(s.charCodeAt(pos))) ? v : undefined;
}

/**
 * Work status numbers of a dump-signal / exception message: `last enqueued NCCL work: E, last
 * completed NCCL work: C.` (2.2-2.5, always followed by `,` and `.`) or `last enqueued work: E, last
 * completed work: C` (2.6+, C may end the line). -1 (nothing yet: the first work is 1) is kept as
 * written; the readers take it as 0.
 */
function lastWork(s: string, i: number, end: number, ev: { lastEnqueued?: number; lastCompleted?: number }): void {
  const le = workNumber(s, "ast enqueued NCCL work:", i, end, [44], false) ?? workNumber(s, "ast enqueued work:", i, end, [44], false);
  if (le !== undefined) ev.lastEnqueued = le;
  const lc = workNumber(s, "ast completed NCCL work:", i, end, [46, 44], false) ?? workNumber(s, "ast completed work:", i, end, [46, 44, 32], true);
  if (lc !== undefined) ev.lastCompleted = lc;
}

/** NCCL's failing results (ncclResult_t, nccl.h): a name such as ncclCommGetAsyncError is a function, no result. */
const NCCL_ERRORS = new Set(["ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError"]);

/** NCCL error name such as ncclRemoteError in [i, end). */
function ncclErrorName(s: string, i: number, end: number): string | undefined {
  for (let k = s.indexOf("nccl", i); k >= 0 && k < end; k = s.indexOf("nccl", k + 4)) {
    let e = k + 4;
    while (e < end && isAlpha(s.charCodeAt(e))) e++;
    const name = s.slice(k, e);
    if (NCCL_ERRORS.has(name)) return name;
  }
  return undefined;
}

function errorExtras(s: string, i: number, end: number, ev: PtErrorEvent): void {
  const vk = find(s, "NCCL version ", i, end);
  if (vk >= 0) {
    let e = vk + 13;
    while (e < end && (isDigit(s.charCodeAt(e)) || s.charCodeAt(e) === 46)) e++;
    if (e > vk + 13) ev.ncclVersion = s.slice(vk + 13, e);
  }
  const name = ncclErrorName(s, i, end);
  if (name !== undefined) ev.ncclError = name;
  const lk = find(s, "Last error:", i, end);
  if (lk >= 0 && skipSpaces(s, lk + 11, end) < end) {
    const d: WarnDetail = { warnKind: "other" };
    classifyWarn(s, lk + 11, end, d);
    ev.lastError = d;
  }
}

/** Parses a PyTorch line (no NCCL header). Returns undefined for lines it does not know. */
export function parsePyTorch(s: string, end: number): NcclEvent | undefined {
  end = trimEnd(s, 0, end);
  const pre = parsePrefix(s, 0, end, true);
  const b: PtBase = {};
  if (pre.launcher !== undefined) {
    b.launcher = pre.launcher;
    if (pre.launcher.rank !== undefined) b.launcherRank = pre.launcher.rank;
    if (pre.launcher.pid !== undefined) b.pid = pre.launcher.pid;
  }
  // `terminate called after throwing ...` / `  what():  [PG 1 Rank 1] ...`: the exception's text follows.
  const at = s.startsWith("what():", pre.end) ? skipSpaces(s, pre.end + 7, end) : pre.end;
  const hs = logHeader(s, at, end, b);
  const m = s.startsWith("[TC]", hs) ? tcPrefix(s, hs, end, b) : pgPrefix(s, hs, end, b);
  if (hs === at) b.headerless = true;
  if (b.pgRank === undefined) abortedOnRank(s, m, end, b);
  return message(s, m, end, b);
}

const ABORTED_ON = "communicator was aborted on rank ";

/**
 * `NCCL communicator was aborted on rank 3.  Original reason for failure was: ...` (NCCLComm's
 * check once its communicator is aborted, PyTorch 1.10-2.x): the rank in that communicator's group,
 * where no `[Rank N]` prefix gave one.
 */
function abortedOnRank(s: string, m: number, end: number, b: PtBase): void {
  const k = find(s, ABORTED_ON, m, end);
  if (k < 0) return;
  const r = readInt(s, k + ABORTED_ON.length, end);
  if (r !== undefined && s.charCodeAt(pos) === 46 /* . */) b.pgRank = r;
}

function message(s: string, m: number, end: number, b: PtBase): NcclEvent | undefined {
  let k: number;
  if (s.startsWith("Rank ", m) && b.src !== undefined) {
    // First line of a TORCH_NCCL_DESYNC_DEBUG report: `... ProcessGroupNCCL.cpp:1937] Rank 0`
    const r = readInt(s, m + 5, end);
    if (r !== undefined && pos === end) return { ...b, kind: "pt_desync", what: "report", ranks: [r] };
  }
  // `Collective WorkNCCL(SeqNum=2, ...) raised the following async exception: NCCL error: ...` is an error (below).
  if ((k = find(s, "WorkNCCL(", m, end)) >= 0 && find(s, "raised the following async exception", k, end) < 0) {
    const bw = find(s, "timed out in blocking wait", k, end) >= 0;
    if (!bw && find(s, "Watchdog caught collective operation timeout", m, end) < 0) return undefined;
    const ev: PtWatchdogTimeoutEvent = { ...b, kind: "pt_watchdog_timeout", via: bw ? "blocking_wait" : "watchdog" };
    workNccl(s, k, end, ev);
    return ev;
  }
  // The watchdog's C++ stack as it raises the timeout: a frame of WorkNCCL::checkTimeout, or c10's `Exception raised from checkTimeout at`.
  if (find(s, "WorkNCCL::checkTimeout(", m, end) >= 0 || s.startsWith("Exception raised from checkTimeout at ", m)) {
    return { ...b, kind: "pt_watchdog_timeout", via: "stack" };
  }
  // TorchComms' NCCL backend (c10d/nccl2 WorkNCCL::checkStatus): `[TC][rank=3][name=0] Operation timed out after 600012 ms`.
  if (b.pgName !== undefined && s.startsWith("Operation timed out after ", m)) {
    const ev: PtWatchdogTimeoutEvent = { ...b, kind: "pt_watchdog_timeout", via: "watchdog" };
    const r = readInt(s, m + 26, end);
    if (r !== undefined && s.startsWith(" ms", pos)) ev.ranForMs = r;
    return ev;
  }
  // A paste cut the line before its WorkNCCL(...): `Watchdog caught collective operati`.
  if (b.src !== undefined && find(s, "Watchdog caught coll", m, end) >= 0) return { ...b, kind: "pt_watchdog_timeout", via: "watchdog" };
  // The watchdog's status line: `... detected by watchdog at work: N, last enqueued ...`, `failure detected by
  // watchdog at work sequence id: N`, or PyTorch 2.4's `Timeout at NCCL work: N, last enqueued ...`.
  const dk = find(s, "detected by watchdog at work", m, end);
  const tk = dk < 0 ? find(s, "Timeout at NCCL work: ", m, end) : -1;
  if (dk >= 0 || tk >= 0) {
    const ev: PtWorkStatusEvent = { ...b, kind: "pt_work_status" };
    const seq = tk >= 0 ? readInt(s, tk + 22, end) : s.startsWith(": ", dk + 28) ? readInt(s, dk + 30, end) : intAfter(s, "sequence id:", dk, end);
    if (seq !== undefined) ev.failedSeq = seq;
    lastWork(s, Math.max(dk, tk), end, ev);
    return ev;
  }
  if (find(s, "Heartbeat monitor timed out", m, end) >= 0) {
    const ev: PtHeartbeatEvent = { ...b, kind: "pt_heartbeat", what: "monitor_timeout" };
    const n = intAfter(s, "workMetaList_.size()=", m, end);
    if (n !== undefined) ev.workMetaListSize = n;
    return ev;
  }
  if ((k = find(s, "watchdog got stuck for ", m, end)) >= 0) {
    const ev: PtHeartbeatEvent = { ...b, kind: "pt_heartbeat", what: "watchdog_stuck" };
    const n = readInt(s, k + 23, end);
    if (n !== undefined) ev.stuckSeconds = n;
    return ev;
  }
  return dumpOrError(s, m, end, b);
}

export const PG_DESTROYED = "Process Group destroyed on rank ";

const XLA_OP = "NCCL operation ";

/**
 * XLA's (JAX, TensorFlow) `NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled
 * cuda error` (xla/service/gpu/nccl_utils.cc, nccl-pasted 471): the call and NCCL's words for its result.
 */
function xlaNcclError(s: string, m: number, end: number, b: PtBase): PtErrorEvent | undefined {
  const k = find(s, XLA_OP, m, end);
  if (k < 0) return undefined;
  const open = s.indexOf("(", k + XLA_OP.length);
  const failed = open < 0 ? -1 : find(s, ") failed: ", open, end);
  if (open < 0 || failed < 0 || open - k > 64) return undefined;
  const call = s.slice(k + XLA_OP.length, open);
  if (!call.startsWith("nccl")) return undefined;
  // The words end at XLA's `; current tracing scope: ...` where it adds one.
  const semi = find(s, ";", failed + 10, end);
  return { ...b, kind: "pt_error", what: "nccl_error", by: "xla", reason: `${call} failed: ${s.slice(failed + 10, semi < 0 ? end : semi).trim()}` };
}

function dumpOrError(s: string, m: number, end: number, b: PtBase): NcclEvent | undefined {
  let k: number;
  if ((k = find(s, "dump signal", m, end)) >= 0 || find(s, "ast enqueued NCCL work:", m, end) >= 0) {
    const ev: PtDumpEvent = { ...b, kind: "pt_dump", what: "dump_signal" };
    if (k >= 0) {
      const fk = find(s, "timeout from ", k, end);
      if (fk >= 0) {
        const fs = skipSpaces(s, fk + 13, end);
        if (s.startsWith("this local rank", fs)) ev.fromLocal = true;
        else if (s.startsWith("rank ", fs)) {
          const r = readInt(s, fs + 5, end);
          if (r !== undefined) ev.fromRank = r;
        }
      }
    }
    lastWork(s, m, end, ev);
    return ev;
  }
  if ((k = find(s, "preparing to dump debug info", m, end)) >= 0) {
    const ev: PtDumpEvent = { ...b, kind: "pt_dump", what: "preparing_dump" };
    const t = intAfter(s, "Include stack trace:", k, end);
    if (t !== undefined) ev.includeStackTrace = t !== 0;
    return ev;
  }
  if (find(s, "to signal dumping", m, end) >= 0) return { ...b, kind: "pt_dump", what: "first_pg_dump" };
  if ((k = find(s, "Stack trace of the failed collective", m, end)) >= 0) {
    const nf = find(s, "not found", k, end) >= 0;
    return { ...b, kind: "pt_dump", what: nf ? "trace_not_found" : "stack_trace" };
  }
  if ((k = find(s, "watchdog thread terminated with exception:", m, end)) >= 0) {
    const ev: PtErrorEvent = { ...b, kind: "pt_error", what: "watchdog_exception" };
    const rs = skipSpaces(s, k + 42, end);
    if (rs < end) ev.reason = s.slice(rs, end);
    errorExtras(s, rs, end, ev);
    return ev;
  }
  if (s.startsWith("Last error:", m)) {
    // Alone on its row, the error follows on the next (analyze joins them).
    const ev: PtErrorEvent = { ...b, kind: "pt_error", what: "last_error" };
    const rs = skipSpaces(s, m + 11, end);
    if (rs < end) {
      errorExtras(s, m, end, ev);
      ev.reason = s.slice(rs, end);
    }
    return ev;
  }
  // The reason ProcessGroupNCCL's destructor gives the communicators it aborts; an error in that
  // abort prints it on the row after its own (`NCCL error in: ..., unhandled cuda error` above it).
  if (s.startsWith(PG_DESTROYED, m)) {
    const r = readInt(s, m + PG_DESTROYED.length, end);
    return r === undefined || pos !== end ? undefined : { ...b, kind: "pt_error", what: "pg_destroyed", pgRank: r };
  }
  const xla = xlaNcclError(s, m, end, b);
  if (xla !== undefined) return xla;
  let what: PtErrorEvent["what"] | undefined;
  const aborted = b.pgRank !== undefined && find(s, "NCCL " + ABORTED_ON, m, end) >= 0;
  if (find(s, "Some NCCL operations have failed", m, end) >= 0) what = "ops_failed";
  else if (find(s, "taking the entire process down", m, end) >= 0) what = "taking_down";
  else if (find(s, "DistBackendError", m, end) >= 0) what = "dist_backend_error";
  // PyTorch 1.x raised NCCLComm's abort check as a RuntimeError: `RuntimeError: NCCL communicator was aborted on rank 19.`
  else if (aborted) what = "nccl_error";
  else if (find(s, "NCCL error", m, end) >= 0 || ncclErrorNumbered(s, m, end) >= 0 || ncclErrorName(s, m, Math.min(end, m + 40)) !== undefined) {
    what = "nccl_error";
  }
  if (what === undefined) return undefined;
  const ev: PtErrorEvent = { ...b, kind: "pt_error", what };
  ncclErrorReason(s, m, end, ev);
  if (aborted && ev.reason === undefined) ev.reason = "NCCL communicator was aborted (after an earlier failure or timeout of this rank)";
  errorExtras(s, m, end, ev);
  // `Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised the following async exception: NCCL error: ...`
  const wk = find(s, "WorkNCCL(", m, end);
  if (wk >= 0) {
    const seq = field(s, "SeqNum=", wk, end);
    if (seq !== undefined) ev.seq = seq;
    const op = opType(s, wk, end);
    if (op !== undefined) ev.op = op;
  }
  return ev;
}

/**
 * `NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)`: torch.cuda.nccl's
 * words for a result (its coalesced collectives; nccl-pasted 292). Where it starts, else -1.
 */
function ncclErrorNumbered(s: string, m: number, end: number): number {
  const k = find(s, "NCCL Error ", m, end);
  return k >= 0 && isDigit(s.charCodeAt(k + 11)) ? k : -1;
}

/**
 * Reason text of `NCCL error in: file:line, <reason>, NCCL version X`, `NCCL error: <reason>, NCCL version X`
 * or an application's `NCCL error file.cu:46: <reason>`.
 */
function ncclErrorReason(s: string, m: number, end: number, ev: PtErrorEvent): void {
  let ek = find(s, "NCCL error", m, end);
  if (ek < 0) ek = ncclErrorNumbered(s, m, end);
  if (ek < 0) return;
  let rs: number;
  if (s.startsWith(" in: ", ek + 10)) {
    rs = s.indexOf(", ", ek);
    if (rs < 0 || rs >= end) return;
    rs += 2;
  } else if (s.startsWith(": ", ek + 10)) {
    rs = ek + 12;
  } else {
    rs = s.indexOf(": ", ek + 10);
    if (rs < 0 || rs >= end) return;
    rs += 2;
  }
  const ve = find(s, ", NCCL version", rs, end);
  const re = ve >= 0 ? ve : end;
  if (re > rs) ev.reason = s.slice(rs, re);
}
