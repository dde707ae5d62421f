/**
 * NCCL RAS reports in JSON (`ncclras -f json`, NCCL 2.28.7+; written by src/ras/client_support.cc
 * jsonWrite*): every rank of every communicator with its collective counts per op type and status,
 * and the missing ranks with `unresponsive` / `considered_dead`. Turned into the same RasReport the
 * text reader gives, so findings/ras.ts reads both alike. The text report lists the ranks of
 * outlier groups only (one rank, or at most 10 ranks and 25 % of the communicator); the JSON has
 * every rank, and the same rule picks which groups' ranks are listed here, so that both forms of
 * one report give the same findings.
 *
 *   { "nccl_version": "2.28.7", ..., "communicators": [ { "hash": "0x49bbd7790311d5eb",
 *     "size": 16, "ranks": [ { "rank": 0, "host": "10.0.0.7", "pid": 4242, "cuda_dev": 0,
 *     "nvml_dev": 0, "status": { "init_state": 0, "async_error": 0, "finalize_called": false,
 *     "destroy_flag": false, "abort_flag": false }, "collective_counts": { "AllReduce": 40, ... } } ],
 *     "missing_ranks": [ { "rank": 9, ..., "status": { "unresponsive": true, "considered_dead": false } } ]
 *   } ], "ras": { "collection_time_sec": 0.012, "timeouts_count": 0 } }
 */
import type { RasCommEntry, RasCommRanks, RasGroup, RasMissingRank, RasOpMismatch, RasProcess, RasRank, RasRankCounts, RasReport } from "./parse-text.js";

/** NCCL's outlier rule for listing a group's ranks (client_support.cc rasCountIsOutlier, not verbose). */
const DETAIL_THRESHOLD = 10;
const OUTLIER_FRACTION = 0.25;
const MAX_RANKS = 1_000;
/** Every rank's counts are kept up to this many ranks per communicator (the live progress compares them all). */
const MAX_FULL_RANKS = 32_768;
/** NCCL counts 5 collective types; more names than this in one communicator are ignored. */
const MAX_OPS = 32;
const MAX_COMMS = 10_000;
/** Larger documents are not parsed (a 10,000-rank report is about 5 MB). */
export const MAX_RAS_JSON_BYTES = 64 * 1024 * 1024;

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function isOutlier(count: number, total: number): boolean {
  return count === 1 || (count <= DETAIL_THRESHOLD && count <= total * OUTLIER_FRACTION);
}

/** `0x49bbd7790311d5eb` → `49bbd7790311d5eb`, zero-padded to 16 like the text report; undefined if not hex. */
function hashOf(v: unknown): string | undefined {
  const s = str(v);
  if (s === undefined || !s.startsWith("0x") || s.length < 3 || s.length > 18) return undefined;
  for (let i = 2; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return undefined;
  }
  return s.slice(2).padStart(16, "0");
}

interface JsonRank {
  r: RasRank;
  status: string;
  initState: number;
  asyncError: number;
  counts: Map<string, number>;
}

function rankOf(v: Obj): RasRank | undefined {
  const rank = num(v.rank);
  if (rank === undefined) return undefined;
  const r: RasRank = { rank };
  const cuda = num(v.cuda_dev);
  const nvml = num(v.nvml_dev);
  if (cuda !== undefined) r.gpu = nvml !== undefined && nvml !== cuda ? `${cuda} (NVML ${nvml})` : String(cuda);
  if (nvml !== undefined && nvml >= 0) r.nvmlDev = nvml;
  const pid = num(v.pid);
  const host = str(v.host);
  // NCCL writes pid -1 and host "unknown" when it could not tell.
  if (pid !== undefined && pid >= 0 && host !== undefined && host !== "unknown") {
    r.pid = pid;
    r.node = host;
  }
  return r;
}

/** NCCL's status of a rank (client_support.cc): abort, then finalize/destroy, then init state. */
function statusOf(s: Obj): string {
  if (s.abort_flag === true) return "ABORT";
  if (s.finalize_called === true || s.destroy_flag === true) return "FINALIZE";
  if ((num(s.init_state) ?? 0) !== NCCL_SUCCESS) return "INIT";
  return "RUNNING";
}

const NCCL_SUCCESS = 0;
const NCCL_IN_PROGRESS = 7;
const isError = (code: number): boolean => code !== NCCL_SUCCESS && code !== NCCL_IN_PROGRESS;

/** Groups of equal values; a group's ranks are listed only when NCCL's text would list them. */
function groupsOf<T extends string | number>(
  ranks: readonly JsonRank[],
  key: (r: JsonRank) => T | undefined,
  total: number,
): Map<T, { count: number; ranks: RasRank[] }> {
  const out = new Map<T, { count: number; ranks: RasRank[] }>();
  for (const r of ranks) {
    const k = key(r);
    if (k === undefined) continue;
    let g = out.get(k);
    if (g === undefined) out.set(k, (g = { count: 0, ranks: [] }));
    g.count++;
    if (g.ranks.length < MAX_RANKS) g.ranks.push(r.r);
  }
  for (const g of out.values()) if (!isOutlier(g.count, total)) g.ranks = [];
  return out;
}

/** `Initialization errors on 2 ranks` / `Asynchronous error on 1 rank`, as the text report words it. */
function errorLine(what: string, n: number): string {
  return `${what} error${n > 1 ? "s" : ""} on ${n} rank${n > 1 ? "s" : ""}`;
}

function commEntries(c: Obj, lineNo: number): { entries: RasCommEntry[]; dead: RasProcess[]; full?: RasCommRanks } {
  const commHash = hashOf(c.hash);
  if (commHash === undefined) return { entries: [], dead: [] };
  const ranks: JsonRank[] = [];
  for (const v of Array.isArray(c.ranks) ? c.ranks : []) {
    if (!isObj(v)) continue;
    const r = rankOf(v);
    if (r === undefined) continue;
    const st = isObj(v.status) ? v.status : {};
    const counts = new Map<string, number>();
    if (isObj(v.collective_counts)) for (const [op, n] of Object.entries(v.collective_counts)) if (num(n) !== undefined) counts.set(op, n as number);
    ranks.push({ r, status: statusOf(st), initState: num(st.init_state) ?? NCCL_SUCCESS, asyncError: num(st.async_error) ?? NCCL_SUCCESS, counts });
  }
  // Missing ranks: those that did not answer at all make the communicator INCOMPLETE; those that
  // answered without this communicator are in the status NOCOMM.
  const missing: { r: RasRank; unresponsive: boolean; dead: boolean }[] = [];
  for (const m of Array.isArray(c.missing_ranks) ? c.missing_ranks : []) {
    if (!isObj(m)) continue;
    const r = rankOf(m);
    if (r === undefined) continue;
    const st = isObj(m.status) ? m.status : {};
    missing.push({ r, unresponsive: st.unresponsive !== false, dead: st.considered_dead === true });
  }
  const unresponsive = missing.filter((m) => m.unresponsive);
  const nocomm = missing.filter((m) => !m.unresponsive);
  // NCCL's outlier rule counts against the communicator's size, not the ranks that answered.
  const total = num(c.size) ?? ranks.length + missing.length;
  const entries: RasCommEntry[] = [];
  const entry = (kind: RasCommEntry["kind"]): RasCommEntry => ({ kind, commHash, lineNo, ops: [], statusGroups: [], errors: [], ranks: [] });

  if (unresponsive.length > 0) {
    const e = entry("INCOMPLETE");
    e.missingRanks = unresponsive.length;
    if (isOutlier(unresponsive.length, Infinity)) e.ranks = unresponsive.slice(0, MAX_RANKS).map((m) => m.r);
    entries.push(e);
  }
  const init = ranks.filter((r) => isError(r.initState));
  const async = ranks.filter((r) => isError(r.asyncError));
  if (init.length > 0 || async.length > 0) {
    const e = entry("ERROR");
    for (const [what, failing, code] of [
      ["Initialization", init, (r: JsonRank) => r.initState],
      ["Asynchronous", async, (r: JsonRank) => r.asyncError],
    ] as const) {
      if (failing.length === 0) continue;
      e.errors.push(errorLine(what, failing.length));
      // NCCL breaks the ranks down by error code and lists a code's ranks when they are few.
      for (const g of groupsOf(failing, code, total).values()) for (const r of g.ranks) if (e.ranks.length < MAX_RANKS) e.ranks.push(r);
    }
    entries.push(e);
  }
  const states = groupsOf(ranks, (r) => r.status, total);
  if (nocomm.length > 0)
    states.set("NOCOMM", { count: nocomm.length, ranks: isOutlier(nocomm.length, total) ? nocomm.slice(0, MAX_RANKS).map((m) => m.r) : [] });
  const mismatch = entry("MISMATCH");
  if (states.size > 1)
    mismatch.statusGroups = [...states].sort((a, b) => b[1].count - a[1].count).map(([status, g]): RasGroup => ({ count: g.count, status, ranks: g.ranks }));
  const ops = new Set<string>();
  for (const r of ranks) for (const op of r.counts.keys()) if (ops.size < MAX_OPS) ops.add(op);
  // One MISMATCH entry per communicator, one block per collective type whose counts differ, as the text has.
  for (const op of ops) {
    const groups = groupsOf(ranks, (r) => r.counts.get(op), total);
    if (groups.size < 2) continue;
    const block: RasOpMismatch = {
      op,
      groups: [...groups].sort((a, b) => a[0] - b[0]).map(([opCount, g]): RasGroup => ({ count: g.count, opCount, ranks: g.ranks })),
    };
    mismatch.ops.push(block);
  }
  if (mismatch.ops.length > 0 || mismatch.statusGroups.length > 0) entries.push(mismatch);
  const dead = missing
    .filter((m) => m.dead && m.r.pid !== undefined && m.r.node !== undefined)
    .map((m): RasProcess => ({ pid: m.r.pid as number, node: m.r.node as string, gpus: m.r.gpu ?? "?" }));
  const full: RasCommRanks = {
    commHash,
    size: total,
    ranks: ranks.slice(0, MAX_FULL_RANKS).map((r): RasRankCounts => ({ ...r.r, counts: r.counts, status: r.status })),
    missing: missing.slice(0, MAX_FULL_RANKS).map((m): RasMissingRank => ({ ...m.r, unresponsive: m.unresponsive, dead: m.dead })),
  };
  return { entries, dead, full };
}

/** Line number (1-based) of each `"hash":` in the text, in order: the evidence of each communicator. */
function hashLines(text: string): number[] {
  const out: number[] = [];
  let line = 1;
  let from = 0;
  for (;;) {
    const at = text.indexOf('"hash"', from);
    if (at < 0) return out;
    for (let i = from; i < at; i++) if (text.charCodeAt(i) === 10) line++;
    out.push(line);
    from = at + 6;
  }
}

/** Whether `text` looks like a JSON document (its first non-blank character is `{`). */
export function looksLikeJson(text: string): boolean {
  for (let i = 0; i < text.length && i < 4096; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0xfeff) continue;
    return c === 0x7b;
  }
  return false;
}

/**
 * NCCL 2.28.x writes a missing rank's `"nvml_dev": N` without the comma before `"status"` (fixed in
 * 2.29), so its JSON does not parse when a rank is missing. Put back a comma between a line that
 * ends a value and a next line that opens a key, where none is. Line-wise, no backtracking.
 */
export function repairRasJson(text: string): string {
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) {
    const cur = (lines[i] as string).trimEnd();
    const next = (lines[i + 1] as string).trimStart();
    if (!next.startsWith('"') || cur.length === 0) continue;
    const last = cur.charCodeAt(cur.length - 1);
    // A value ends in a digit, a quote, `}` / `]`, or the e/l of true/false/null; `{`, `[` and `,` need none.
    const endsValue =
      (last >= 48 && last <= 57) || last === 34 || last === 125 || last === 93 || cur.endsWith("true") || cur.endsWith("false") || cur.endsWith("null");
    if (endsValue) lines[i] = `${cur},`;
  }
  return lines.join("\n");
}

function parseJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch {
    try {
      return JSON.parse(repairRasJson(body));
    } catch {
      return undefined;
    }
  }
}

/** The RasReport of a JSON RAS document, or undefined when `text` is not one. */
export function rasReportFromJson(text: string): RasReport | undefined {
  if (text.length > MAX_RAS_JSON_BYTES || !looksLikeJson(text)) return undefined;
  const doc = parseJson(text);
  if (!isObj(doc) || !Array.isArray(doc.communicators) || !isObj(doc.ras)) return undefined;
  const lines = hashLines(text);
  const version = str(doc.nccl_version);
  const report: RasReport = {
    lineNo: 1,
    table: [],
    comms: [],
    processes: [],
    timeouts: num(doc.ras.timeouts_count) ?? 0,
    full: [],
    ...(version !== undefined ? { version } : {}),
  };
  const dead = new Map<string, RasProcess>();
  doc.communicators.forEach((c, i) => {
    if (!isObj(c) || i >= MAX_COMMS) return;
    const { entries, dead: d, full } = commEntries(c, lines[i] ?? 1);
    report.comms.push(...entries);
    if (full !== undefined) report.full?.push(full);
    for (const p of d) dead.set(`${p.node}:${p.pid}`, p);
  });
  if (dead.size > 0) report.processes.push({ kind: "DEAD", count: dead.size, lineNo: 1, processes: [...dead.values()] });
  return report;
}
