/**
 * PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL and monitoredBarrier lines (torch/csrc/distributed/c10d/
 * ProcessGroupWrapper.cpp, ProcessGroupGloo.cpp), which need no NCCL word:
 *
 *   RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective:
 *     CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480],
 *     TensorDtypes=BFloat16, ...), but Rank 0 is running collective: CollectiveFingerPrint(...)
 *   (older: `CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER)`, no separator)
 *   RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000 ms
 *   [E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors
 *     while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.
 *   [I ProcessGroupWrapper.cpp:562] [Rank 2] Running collective: CollectiveFingerPrint(...)
 *
 * The second fingerprint is often cut by the paste; what is there is kept.
 */
import { parsePrefix } from "../parse/prefix.js";
import { find, pos, readInt } from "../parse/scan.js";
import type { PtBarrierEvent, PtFingerprint, PtMismatchEvent, PtRunningEvent } from "./types.js";

/** `CollectiveFingerPrint(` ... up to its `)` or the end. */
function fingerprint(s: string, k: number, end: number): PtFingerprint {
  const fp: PtFingerprint = {};
  const close = s.indexOf("TensorDeviceTypes", k);
  const stop = close > k && close < end ? close : end;
  const sk = find(s, "SequenceNumber=", k, stop);
  if (sk >= 0) {
    const v = readInt(s, sk + 15, stop);
    if (v !== undefined) {
      fp.seq = v;
      if (s.startsWith("OpType=", pos)) fp.tensors = false;
      else if (s.startsWith(", OpType=", pos)) fp.tensors = true;
    }
  }
  if (fp.tensors === undefined && find(s, "TensorShape=", k, stop) >= 0) fp.tensors = true;
  const ok = find(s, "OpType=", k, stop);
  if (ok >= 0) {
    let e = ok + 7;
    for (let c = s.charCodeAt(e); e < stop && ((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95); c = s.charCodeAt(++e));
    if (e > ok + 7) fp.op = s.slice(ok + 7, e);
  }
  const tk = find(s, "TensorShape=[", k, stop);
  if (tk >= 0) {
    const e = s.indexOf("]", tk + 13);
    if (e > 0 && e < stop) fp.shape = s.slice(tk + 13, e);
  }
  const dk = find(s, "TensorDtypes=", k, stop);
  if (dk >= 0) {
    let e = dk + 13;
    while (e < stop && s[e] !== "," && s[e] !== ")") e++;
    if (e > dk + 13) fp.dtype = s.slice(dk + 13, e);
  }
  return fp;
}

/** `[Rank 2] Running collective: CollectiveFingerPrint(...)` from k = index of `Running collective:`. */
function running(s: string, k: number, end: number): PtRunningEvent | undefined {
  const rk = s.lastIndexOf("[Rank ", k);
  const fk = find(s, "CollectiveFingerPrint(", k, end);
  if (rk < 0 || fk < 0) return undefined;
  const rank = readInt(s, rk + 6, k);
  if (rank === undefined) return undefined;
  const ev: PtRunningEvent = { kind: "pt_running", rank, fp: fingerprint(s, fk + 22, end) };
  const pre = parsePrefix(s, 0, end, true);
  if (pre.launcher?.rank !== undefined) ev.launcherRank = pre.launcher.rank;
  return ev.fp.seq === undefined ? undefined : ev;
}

/** `Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0` */
function barrierErrors(s: string, k: number, end: number): PtBarrierEvent | undefined {
  const fk = find(s, "from rank ", k, end);
  const from = fk >= 0 ? readInt(s, fk + 10, end) : undefined;
  if (from === undefined) return undefined;
  const ev: PtBarrierEvent = { kind: "pt_barrier", form: "errors", ranks: [from] };
  const rk = s.lastIndexOf("Rank ", k);
  if (rk >= 0) {
    const r = readInt(s, rk + 5, k);
    if (r !== undefined) ev.reporter = r;
  }
  return ev;
}

/** A DETAIL mismatch or running collective, or a monitoredBarrier failure in [0, end); undefined when the line is none. */
export function parsePyTorchDebug(s: string, end: number): PtMismatchEvent | PtBarrierEvent | PtRunningEvent | undefined {
  let k = find(s, "Running collective: ", 0, end);
  if (k >= 0) return running(s, k, end);
  k = find(s, " successfully reached monitoredBarrier, but received errors", 0, end);
  if (k >= 0) return barrierErrors(s, k, end);
  k = find(s, "Detected mismatch between collectives on ranks", 0, end);
  if (k >= 0) {
    const ev: PtMismatchEvent = { kind: "pt_mismatch" };
    const pre = parsePrefix(s, 0, end, true);
    if (pre.launcher?.rank !== undefined) ev.launcherRank = pre.launcher.rank;
    const ra = find(s, "Rank ", k + 46, end);
    const fa = ra >= 0 ? find(s, "CollectiveFingerPrint(", ra, end) : -1;
    if (ra < 0 || fa < 0) return ev;
    const a = readInt(s, ra + 5, end);
    if (a !== undefined) ev.rankA = a;
    ev.a = fingerprint(s, fa + 22, end);
    const rb = find(s, "but Rank ", fa, end);
    if (rb >= 0) {
      const r = readInt(s, rb + 9, end);
      if (r !== undefined) ev.rankB = r;
      const fb = find(s, "CollectiveFingerPrint(", rb, end);
      if (fb >= 0) ev.b = fingerprint(s, fb + 22, end);
    }
    return ev;
  }
  k = find(s, " failed to pass monitoredBarrier", 0, end);
  if (k >= 0) {
    const rk = s.lastIndexOf("Ranks ", k);
    if (rk < 0) return undefined;
    const ranks: number[] = [];
    for (const part of s.slice(rk + 6, k).split(",")) {
      const n = Number(part.trim());
      if (part.trim() !== "" && Number.isInteger(n) && n >= 0) ranks.push(n);
    }
    if (ranks.length === 0) return undefined;
    const ev: PtBarrierEvent = { kind: "pt_barrier", form: "failed", ranks };
    const by = s.lastIndexOf("[Rank ", rk);
    if (by >= 0) {
      const r = readInt(s, by + 6, rk);
      if (r !== undefined) ev.reporter = r;
    }
    const inMs = find(s, " in ", k, end);
    if (inMs >= 0) {
      const t = readInt(s, inMs + 4, end);
      if (t !== undefined) ev.timeoutMs = t;
    }
    return ev;
  }
  return undefined;
}
