/**
 * Findings from NCCL RAS diagnostics (NCCL 2.31.2+, `ncclras -D` or the lines pasted into a log;
 * ras/parse-diag.ts reads them), offline and live. An Xid that needs action is a `gpu_xid`, an
 * SXid an `nvswitch_sxid` (the host whose kernel log had it, no device: NCCL does not print it);
 * every other problem is an `nccl_diagnostic` whose `event` is the check (`ecc`, `nvlink`,
 * `nccl_env`, ...), except the ranks a gather missed: one finding per communicator and count,
 * `event` `incomplete`, naming every check that missed them (NCCL prints one line per check).
 *
 * One finding per (check, communicator, detail, host), diagProblems' key: a line repeated (the
 * answer of a second run, a paste pasted twice) adds its evidence, and other lines of the same key
 * (ECC's uncorrected and corrected errors, NVLink's down links and speeds, ATS's summary and
 * detail lines) add what they say. Uncorrected ECC errors, NVLink links down and an Xid whose
 * guidance is to reset the GPU are critical; a fatal SXid too; the rest are warnings.
 */
import type { DiagReport, DiagResult } from "./parse-diag.js";
import { uniq, type Finding, type Severity } from "../verdict/report.js";
import { hardwareEvent, ncclDiagnostic } from "../verdict/finding.js";
import { diagHardwareWords, ncclDiagnosticWords, type DiagMismatch, type DiagXidGuidance } from "../verdict/words.js";

/** Lines cited per finding. */
const MAX_EVIDENCE = 5;

/** `{0,1,2,3,4,5,6,7,...} (N=16)` after `marker`: the ranks listed and, when NCCL cut the list, how many there are. */
export function rankSet(text: string, marker = " rank(s) {"): { ranks: number[]; total?: number } | undefined {
  const at = text.indexOf(marker);
  if (at < 0) return undefined;
  const open = at + marker.length;
  const close = text.indexOf("}", open);
  if (close < 0) return undefined;
  const ranks: number[] = [];
  for (const part of text.slice(open, close).split(",")) {
    const n = intAt(part, 0);
    if (n !== undefined && String(n) === part) ranks.push(n);
  }
  const total = text.startsWith(" (N=", close + 1) ? intAt(text, close + 5) : undefined;
  return { ranks: uniq(ranks).sort((a, b) => a - b), ...(total !== undefined ? { total } : {}) };
}

/** The decimal number at `at`, if one starts there. */
function intAt(text: string, at: number): number | undefined {
  let end = at;
  while (end < text.length && end - at < 12 && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
  return end === at ? undefined : Number(text.slice(at, end));
}

/** The number right after `marker`. */
function intAfter(text: string, marker: string): number | undefined {
  const at = text.indexOf(marker);
  return at < 0 ? undefined : intAt(text, at + marker.length);
}

/** The text after `marker` up to `stop` (or the end). */
function between(text: string, marker: string, stop: string): string | undefined {
  const at = text.indexOf(marker);
  if (at < 0) return undefined;
  const end = text.indexOf(stop, at + marker.length);
  return text.slice(at + marker.length, end < 0 ? undefined : end);
}

/** NCCL's words after the check's label, without the communicator (the summary names it). */
function saidOf(text: string): string {
  const colon = text.indexOf(": ");
  let s = colon < 0 ? text : text.slice(colon + 2);
  const at = s.indexOf(" in comm 0x");
  if (at >= 0) {
    let end = at + 11;
    while (end < s.length && /[0-9a-fx/]/.test(s.charAt(end))) end++;
    s = s.slice(0, at) + s.slice(end);
  }
  return s.endsWith(".") ? s.slice(0, -1) : s;
}

/** What one problem line says: its severity, and either a sentence of its own or NCCL's words for the group's shared sentence. */
interface Told {
  /** Lines of one group that tell the same thing keep the first one's words. */
  situation: string;
  severity: Severity;
  sentence?: string;
  said?: string;
  ranks: number[];
}

const MISMATCH_OF: Partial<Record<DiagResult["check"], DiagMismatch>> = { cuda_driver: "cuda_driver", nvidia_driver: "nvidia_driver" };

function mismatch(r: DiagResult, comm: string | undefined, what: DiagMismatch): Told {
  const set = rankSet(r.text);
  const ref = intAfter(r.text, " differ from rank ");
  const open = ref === undefined ? -1 : r.text.indexOf(" (", r.text.indexOf(" differ from rank "));
  const close = r.text.lastIndexOf(")");
  const refValue = open >= 0 && close > open ? r.text.slice(open + 2, close) : undefined;
  const across = intAfter(r.text, ": mismatch across ") ?? intAfter(r.text, " mismatch across ");
  const ranks = set?.ranks ?? [];
  return {
    situation: `mismatch ${what}`,
    severity: "warning",
    sentence: ncclDiagnosticWords.mismatch({
      ...(comm !== undefined ? { comm } : {}),
      what,
      ranks,
      ...(set?.total !== undefined ? { total: set.total } : {}),
      ...(ref !== undefined ? { ref } : {}),
      ...(refValue !== undefined ? { refValue } : {}),
      ...(across !== undefined ? { across } : {}),
    }),
    ranks,
  };
}

/** One problem line (not an Xid, an SXid, an environment mismatch or a gather that missed ranks). */
function told(r: DiagResult, comm: string | undefined): Told {
  const t = r.text;
  const on = comm !== undefined ? { comm } : {};
  const set = rankSet(t);
  const ranks = set?.ranks ?? [];
  const total = set?.total !== undefined ? { total: set.total } : {};
  if (r.check === "gpu_inventory" && t.startsWith("GPU inventory: count mismatch")) return mismatch(r, comm, "gpu_count");
  if (r.check === "gpu_inventory" && t.startsWith("GPU inventory: model mismatch")) return mismatch(r, comm, "gpu_model");
  const driver = MISMATCH_OF[r.check];
  if (driver !== undefined && t.includes(": mismatch across ")) return mismatch(r, comm, driver);
  if (r.check === "nvlink" && t.startsWith("NVLink: link-count mismatch")) return mismatch(r, comm, "nvlink_links");
  if (r.check === "ecc" && (t.startsWith("ECC: uncorrected") || t.startsWith("ECC: corrected"))) {
    const uncorrected = t.startsWith("ECC: uncorrected");
    const worst = between(t, "(worst=", ")");
    const threshold = uncorrected ? undefined : between(t, " at or above threshold ", " ");
    return {
      situation: uncorrected ? "ecc uncorrected" : "ecc corrected",
      severity: uncorrected ? "critical" : "warning",
      sentence: ncclDiagnosticWords.ecc({
        ...on,
        ranks,
        ...total,
        ...(worst !== undefined ? { worst } : {}),
        ...(threshold !== undefined ? { threshold } : {}),
      }),
      ranks,
    };
  }
  if (r.check === "nvlink" && (t.startsWith("NVLink: inactive link") || t.startsWith("NVLink: inconsistent link speeds"))) {
    const inactive = t.startsWith("NVLink: inactive link");
    return {
      situation: inactive ? "nvlink inactive" : "nvlink speed",
      severity: inactive ? "critical" : "warning",
      sentence: ncclDiagnosticWords.nvlink({ ...on, ranks, ...total, inactive }),
      ranks,
    };
  }
  if (r.check === "rdma_topo" && t.startsWith("rdma_topo check: failed on ")) {
    const first = intAfter(t, "; first rank ");
    const exit = between(t, " exit ", ":");
    const colon = t.indexOf(": ", t.indexOf("; first rank "));
    const sample = first !== undefined && colon >= 0 ? t.slice(colon + 2).slice(0, 200) : undefined;
    return {
      situation: "rdma_topo failed",
      severity: "warning",
      sentence: ncclDiagnosticWords.rdmaTopoFailed({
        ...on,
        ranks,
        ...total,
        ...(first !== undefined ? { first } : {}),
        ...(exit !== undefined ? { exit } : {}),
        ...(sample !== undefined ? { sample } : {}),
      }),
      ranks,
    };
  }
  const said = saidOf(t);
  return { situation: `said ${said.replace(/[0-9]+/g, "#").replace(/\{[^}]*\}/g, "{}")}`, severity: "warning", said, ranks };
}

/** The values of an environment mismatch: the `NCCL environment: VAR=value on rank(s) {...}` lines right after it. */
function envValues(
  results: readonly DiagResult[],
  i: number,
  variable: string,
): { values: { value: string; ranks: number[]; total?: number }[]; lines: number[] } {
  const prefix = `NCCL environment: ${variable}=`;
  const values: { value: string; ranks: number[]; total?: number }[] = [];
  const lines: number[] = [];
  for (let j = i + 1; j < results.length; j++) {
    const r = results[j] as DiagResult;
    const on = r.text.lastIndexOf(" on rank(s) {");
    if (r.check !== "nccl_env" || !r.text.startsWith(prefix) || on < 0) break;
    const set = rankSet(r.text.slice(on));
    values.push({ value: r.text.slice(prefix.length, on), ranks: set?.ranks ?? [], ...(set?.total !== undefined ? { total: set.total } : {}) });
    lines.push(r.lineNo);
  }
  return { values, lines };
}

/** The ranks not holding the one value most ranks hold; every rank named when no value is held by most. */
function oddRanks(values: readonly { ranks: readonly number[]; total?: number }[]): number[] {
  const size = (v: { ranks: readonly number[]; total?: number }): number => v.total ?? v.ranks.length;
  const sorted = [...values].sort((a, b) => size(b) - size(a));
  const top = sorted[0];
  const unique = top !== undefined && (sorted[1] === undefined || size(sorted[1]) < size(top));
  return uniq((unique ? sorted.slice(1) : sorted).flatMap((v) => v.ranks)).sort((a, b) => a - b);
}

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
const worse = (a: Severity, b: Severity): Severity => (SEVERITY_RANK[b] < SEVERITY_RANK[a] ? b : a);

interface Group {
  first: DiagResult;
  comm?: string;
  severity: Severity;
  lines: number[];
  told: Told[];
  /** `incomplete`: the checks that missed the ranks. */
  checks: string[];
  /** Xid, SXid: times detected, over the lines. */
  count: number;
  atLeast: boolean;
  /** Environment mismatch: each value and its ranks (the first mismatch line's). */
  env?: { values: { value: string; ranks: number[]; total?: number }[] };
}

/** Xid/SXid: `detected 3 times`, `detected at least 64 times`. */
function detected(text: string): { count: number; atLeast: boolean } {
  const atLeast = text.includes(" detected at least ");
  return { count: intAfter(text, atLeast ? " detected at least " : " detected ") ?? 1, atLeast };
}

function xidGuidance(text: string): DiagXidGuidance {
  if (text.includes("recommends resetting the affected GPU")) return "reset_gpu";
  if (text.includes("Restart the affected application")) return "restart_job";
  if (text.includes("pre-Ampere GPU")) return "pre_ampere";
  return "other";
}

/** What an Xid or SXid summary is told of the group: the code, the host, how many times it was detected. */
interface Detected {
  code: number;
  host?: string;
  count: number;
  atLeast: boolean;
}

/** An Xid or SXid: an event of the host's kernel log (no rank, process or communicator), counted over the group's lines. */
function hardwareFinding(
  kind: "gpu_xid" | "nvswitch_sxid",
  g: Group,
  evidence: string[],
  severity: Severity,
  summary: (d: Detected) => string,
  extra: Pick<Finding, "action"> = {},
): Finding {
  const r = g.first;
  const code = Number(r.detail);
  const host = r.host !== undefined ? { host: r.host } : {};
  return hardwareEvent(kind, {
    severity,
    summary: summary({ code, ...host, count: g.count, atLeast: g.atLeast }),
    ranks: [],
    processes: [],
    comm_id: null,
    evidence,
    count: g.count,
    ...host,
    code,
    ...extra,
  });
}

function finding(source: string, g: Group): Finding {
  const r = g.first;
  const evidence = uniq(g.lines)
    .slice(0, MAX_EVIDENCE)
    .map((n) => `${source}:${n}`);
  if (r.check === "xid") {
    const guidance = xidGuidance(r.text);
    const severity = guidance === "reset_gpu" ? "critical" : "warning";
    const action = guidance === "reset_gpu" || guidance === "restart_job" ? { action: guidance } : {};
    return hardwareFinding("gpu_xid", g, evidence, severity, (d) => diagHardwareWords.xid({ ...d, guidance }), action);
  }
  if (r.check === "sxid") {
    const classification = between(r.text, "(NVSwitch driver reported ", ",") ?? "classification unavailable";
    const links = between(r.text, ", link(s) ", ")");
    const severity = classification === "Fatal" ? "critical" : "warning";
    return hardwareFinding("nvswitch_sxid", g, evidence, severity, (d) =>
      diagHardwareWords.sxid({ ...d, classification, ...(links !== undefined ? { links } : {}) }),
    );
  }
  const on = g.comm !== undefined ? { comm: g.comm } : {};
  const comm_id = g.comm ?? null;
  if (r.detail === "incomplete") {
    const gathered = between(r.text, ": diagnostics incomplete, gathered ", "/");
    const of = intAfter(r.text, `: diagnostics incomplete, gathered ${gathered}/`) ?? 0;
    const n = Number(gathered);
    return ncclDiagnostic({
      summary: ncclDiagnosticWords.incomplete({ ...on, gathered: n, of, checks: g.checks }),
      ranks: [],
      processes: [],
      comm_id,
      evidence,
      count: of - n,
      event: "incomplete",
    });
  }
  if (r.check === "nccl_env" && r.detail !== undefined) {
    const values = g.env?.values ?? [];
    const across = intAfter(r.text, ": mismatch across ");
    return ncclDiagnostic({
      summary: ncclDiagnosticWords.env({ ...on, variable: r.detail, ...(across !== undefined ? { across } : {}), values }),
      ranks: oddRanks(values),
      processes: [],
      comm_id,
      evidence,
      event: r.check,
    });
  }
  const seen = new Set<string>();
  const told = g.told.filter((t) => !seen.has(t.situation) && seen.add(t.situation));
  const sentences = told.flatMap((t) => (t.sentence !== undefined ? [t.sentence] : []));
  const said = told.flatMap((t) => (t.said !== undefined ? [t.said] : []));
  if (said.length > 0) {
    const colon = r.text.indexOf(": ");
    sentences.push(ncclDiagnosticWords.said({ ...on, check: r.check, label: colon < 0 ? r.check : r.text.slice(0, colon), said }));
  }
  return ncclDiagnostic({
    severity: g.severity,
    summary: sentences.join(" "),
    ranks: uniq(g.told.flatMap((t) => t.ranks)).sort((a, b) => a - b),
    processes: [],
    comm_id,
    evidence,
    event: r.check,
  });
}

/** The findings of one diagnostics answer (or of every DIAG line of one log); `source` names it in evidence (`source:line`). */
export function diagFindings(source: string, report: DiagReport): Finding[] {
  const groups = new Map<string, Group>();
  const results = report.results;
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as DiagResult;
    if (!r.problem) continue;
    const comm = r.commId;
    const incomplete = r.detail === "incomplete";
    const key = incomplete
      ? `incomplete|${comm ?? ""}|${between(r.text, " gathered ", " ") ?? ""}`
      : `${r.check}|${comm ?? ""}|${r.detail ?? ""}|${r.host ?? ""}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = { first: r, ...(comm !== undefined ? { comm } : {}), severity: "warning", lines: [], told: [], checks: [], count: 0, atLeast: false };
      groups.set(key, g);
    }
    g.lines.push(r.lineNo);
    if (r.check === "xid" || r.check === "sxid") {
      const d = detected(r.text);
      g.count += d.count;
      g.atLeast ||= d.atLeast;
    } else if (incomplete) {
      const label = r.text.slice(0, r.text.indexOf(": "));
      if (!g.checks.includes(label)) g.checks.push(label);
    } else if (r.check === "nccl_env" && r.detail !== undefined) {
      if (g.env === undefined) {
        const v = envValues(results, i, r.detail);
        g.env = { values: v.values };
        g.lines.push(...v.lines);
      }
    } else {
      const t = told(r, comm);
      g.told.push(t);
      g.severity = worse(g.severity, t.severity);
    }
  }
  return [...groups.values()].map((g) => finding(source, g));
}
