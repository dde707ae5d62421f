/**
 * NCCL RAS diagnostics (NCCL 2.31.2+; Xid/SXid and the RDMA topology 2.32.3+): the text the RAS
 * client socket sends for `DIAGNOSTICS` (`ncclras -D`), or such lines pasted into a log. Every line
 * is `<host>:<pid> NCCL DIAG <body>` (src/ras/diagnostics.cc `"%s:%d NCCL DIAG %s"`), where the body
 * is the header `=== RAS Diagnostics ===`, a result tagged `[OK]   ` or `[INFO] `, the completion
 * `RAS diagnostics completed in %.1f ms across %d RAS peers` (or `ranks` at init), or
 * `ERROR: diagnostics summary failed (%d)`. A result's body is `<check>: ...`, except Xid and SXid
 * results, which begin `Xid <n> detected` / `SXid <n> detected`. Bare `BUSY: ...` and `ERROR: ...`
 * lines are the service's refusals.
 *
 * A problem is an [INFO] result other than those that only say a value is consistent or
 * unavailable: a mismatch, uncorrected ECC errors, inactive NVLink links, differing NCCL_*
 * settings, an Xid or SXid that needs action, missing ranks (`diagnostics incomplete`), a failed
 * rdma_topo check, IOMMU/ATS states that block GPUDirect RDMA. Lines are cut at fixed words: no
 * regular expression, nothing that backtracks.
 */

import { commIdOfHash } from "./findings.js";

/** The checks as ringwatch names them (the `check` label). */
export type DiagCheck =
  | "gpu_inventory"
  | "cuda_driver"
  | "nvidia_driver"
  | "ecc"
  | "nvlink"
  | "nccl_env"
  | "rdma_topo"
  | "iommu"
  | "ats"
  | "xid"
  | "sxid"
  | "kernel_log"
  | "paths"
  | "other";

const LABELS: readonly (readonly [string, DiagCheck])[] = [
  ["GPU inventory", "gpu_inventory"],
  ["CUDA driver version", "cuda_driver"],
  ["NVIDIA graphics driver version", "nvidia_driver"],
  ["ECC", "ecc"],
  ["NVLink", "nvlink"],
  ["NCCL environment", "nccl_env"],
  ["rdma_topo check", "rdma_topo"],
  ["IOMMU mode", "iommu"],
  ["IOMMU groups", "iommu"],
  ["ATS state", "ats"],
  ["Xid/SXid", "kernel_log"],
  ["Paths", "paths"],
];

export interface DiagResult {
  check: DiagCheck;
  ok: boolean;
  /** A problem to report (see the header). */
  problem: boolean;
  /** The result's text after its tag. */
  text: string;
  /** The communicator it is about, in the comm_id form (commIdOfHash: `0x`, no leading zeros), when it names one. */
  commId?: string;
  /** Xid / SXid number, or the NCCL_* variable of an environment mismatch. */
  detail?: string;
  /** Xid / SXid: the host whose kernel log had it. */
  host?: string;
  lineNo: number;
}

export interface DiagReport {
  /** `host:pid` of the process that answered. */
  from?: string;
  results: DiagResult[];
  /** The completion line: how long and over how many peers; undefined when the answer ended early. */
  completed?: { ms: number; peers: number };
  /** `BUSY: diagnostics already in progress` (another run in that process). */
  busy: boolean;
  /** `ERROR: ...` lines (unknown command on NCCL before 2.31.2, JSON format, failed start, summary failed). */
  errors: string[];
}

const MARK = " NCCL DIAG ";
const MAX_RESULTS = 512;

/** A commHash as printed (`0x%lx`, not padded) in the comm_id form. */
function commIdOf(text: string): string | undefined {
  const at = text.indexOf(" comm 0x");
  if (at < 0) return undefined;
  let end = at + 8;
  while (end < text.length && end - at - 8 < 16) {
    const c = text.charCodeAt(end);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) break;
    end++;
  }
  const hex = text.slice(at + 8, end);
  return hex.length === 0 ? undefined : commIdOfHash(hex);
}

function isDigits(s: string): boolean {
  if (s.length === 0 || s.length > 10) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Words that make an [INFO] line no problem: a value that is only unavailable, or consistent. */
function benign(check: DiagCheck, text: string): boolean {
  if (text.includes(" unavailable via NVML across ") && !text.includes("mismatch")) return true;
  // NCCL could not read the topology of some ranks yet (diagnostics_checks_common.cc): data, not the job.
  if (text.includes("topology-dependent data was unavailable")) return true;
  if (check === "cuda_driver" || check === "nvidia_driver") return !text.includes(": mismatch across ");
  if (check === "gpu_inventory") return text.includes(" consistent across ");
  if (check === "ecc") return text.startsWith("ECC: no uncorrected volatile errors");
  if (check === "nccl_env") return text.includes("consistent across") || text.includes("comparison may be partial");
  if (check === "rdma_topo") return text.includes("not usable on") || text.includes("mixed results") || text.includes(": passed on ");
  // IOMMU: a problem under DMA remapping, or modes that differ; differing groups matter only under remapping.
  if (check === "iommu") return !text.includes("DMA remapping") && !text.includes(": mismatch ");
  // ATS: a problem where it is disabled; the other lines say what could not be read (root, lspci, NICs).
  if (check === "ats") return !text.includes("disabled");
  if (check === "kernel_log") return true;
  if (check === "paths") return !text.includes("DIS");
  return false;
}

/** One result body (after the tag). */
function result(body: string, ok: boolean, lineNo: number): DiagResult {
  const commId = commIdOf(body);
  const base = { ok, text: body, lineNo, ...(commId !== undefined ? { commId } : {}) };
  // Xid 94 detected 1 time on host gpu-node-04. ...
  for (const kind of ["Xid ", "SXid "] as const) {
    if (!body.startsWith(kind)) continue;
    const sp = body.indexOf(" ", kind.length);
    const n = body.slice(kind.length, sp < 0 ? undefined : sp);
    if (!isDigits(n) || !body.startsWith(" detected ", sp)) continue;
    const on = body.indexOf(" on host ");
    const dot = on < 0 ? -1 : body.indexOf(". ", on + 9);
    const host = on < 0 ? undefined : body.slice(on + 9, dot < 0 ? undefined : dot);
    return { ...base, check: kind === "Xid " ? "xid" : "sxid", problem: !ok, detail: n, ...(host !== undefined && host !== "" ? { host } : {}) };
  }
  const colon = body.indexOf(": ");
  const label = colon < 0 ? "" : body.slice(0, colon);
  const check = LABELS.find(([l]) => l === label)?.[1] ?? "other";
  if (ok) return { ...base, check, problem: false };
  if (body.includes(": diagnostics incomplete, gathered ")) return { ...base, check, problem: true, detail: "incomplete" };
  // NCCL environment: mismatch across 16 ranks in comm 0x... for NCCL_IB_HCA
  if (check === "nccl_env" && body.includes(": mismatch across ")) {
    const f = body.lastIndexOf(" for ");
    return { ...base, check, problem: true, ...(f >= 0 ? { detail: body.slice(f + 5) } : {}) };
  }
  // The per-value lines of a mismatch (NCCL_IB_HCA=... on rank(s) {...}) and the count line repeat it.
  if (check === "nccl_env" && (body.includes(" on rank(s) ") || body.includes(" differ across ranks"))) return { ...base, check, problem: false };
  return { ...base, check, problem: !benign(check, body) };
}

/** The service's bare refusals, in the first lines of an answer (after `OK` to SET FORMAT at most). */
function refusal(report: DiagReport, line: string): boolean {
  if (line.startsWith("BUSY: ")) {
    report.busy = true;
    return true;
  }
  if (!line.startsWith("ERROR: ")) return false;
  if (report.errors.length < 16) report.errors.push(line.slice(7, 300));
  return true;
}

/** Parses a diagnostics answer (or pasted lines). */
export function parseDiagnostics(text: string): DiagReport {
  const report: DiagReport = { results: [], busy: false, errors: [] };
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    let line = text.slice(start, end);
    start = end + 1;
    lineNo++;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (lineNo <= 2 && refusal(report, line)) continue;
    diagLine(report, line, lineNo);
  }
  return report;
}

/** Adds one `NCCL DIAG` line to a report; false when it is none. */
export function diagLine(report: DiagReport, line: string, lineNo: number): boolean {
  const at = line.indexOf(MARK);
  if (at < 0) return false;
  const body = line.slice(at + MARK.length);
  // The envelope's host:pid is the last word before the mark (a pasted line may carry a prefix).
  const sp = line.lastIndexOf(" ", at - 1);
  report.from ??= line.slice(sp + 1, at);
  if (body === "=== RAS Diagnostics ===") return true;
  if (body.startsWith("RAS diagnostics completed in ")) {
    const rest = body.slice("RAS diagnostics completed in ".length);
    const ms = Number(rest.slice(0, rest.indexOf(" ")));
    const across = rest.indexOf(" across ");
    const peers = across < 0 ? NaN : Number(rest.slice(across + 8, rest.indexOf(" ", across + 8)));
    if (Number.isFinite(ms) && Number.isFinite(peers)) report.completed = { ms, peers };
    return true;
  }
  if (body.startsWith("ERROR: ")) {
    if (report.errors.length < 16) report.errors.push(body.slice(7, 300));
    return true;
  }
  const ok = body.startsWith("[OK]");
  if (!ok && !body.startsWith("[INFO]")) return false;
  if (report.results.length >= MAX_RESULTS) return true;
  report.results.push(result(body.slice(body.indexOf("]") + 1).trimStart(), ok, lineNo));
  return true;
}

/** The problems of a report, each line once (a line repeated, as pasted twice, counts once). */
export function diagProblems(report: DiagReport): DiagResult[] {
  const seen = new Set<string>();
  const out: DiagResult[] = [];
  for (const r of report.results) {
    if (!r.problem) continue;
    const key = `${r.check}|${r.commId ?? ""}|${r.detail ?? ""}|${r.host ?? ""}|${r.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(r);
  }
  return out;
}
