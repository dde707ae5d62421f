/**
 * Findings from PyTorch Flight Recorder dumps (flight-recorder/analyze.ts): per process group, the
 * ranks that never enqueued the collective the others wait in (with the Python stacks the others
 * called it from), member ranks that left no dump, collectives the ranks recorded differently, a
 * collective every rank entered and none finished; and dumps that could not be used.
 */
import type { FrAnalysis, FrGroupAnalysis, FrMismatch, FrStack } from "./analyze.js";
import type { FrFrame } from "./types.js";
import { rankList, type Finding, type FindingStack, type ProcessGroupSummary } from "../verdict/report.js";

const who = (ranks: readonly number[]): string => `${ranks.length === 1 ? "rank" : "ranks"} ${rankList(ranks)}`;
const verb = (ranks: readonly number[], one: string, many: string): string => (ranks.length === 1 ? one : many);

export function groupLabel(g: Pick<FrGroupAnalysis, "name" | "desc">): string {
  return g.desc !== undefined && g.desc !== "" && g.desc !== "undefined" && g.desc !== g.name ? `${g.name} (${g.desc})` : g.name;
}

/** PyTorch's own frames (distributed_c10d.py, c10d_logger.py, DDP/FSDP internals) are not where the job's code is. */
function isTorchFrame(f: FrFrame): boolean {
  const p = f.file;
  return p.includes("/site-packages/torch/") || p.includes("/dist-packages/torch/") || p.includes("/torch/distributed/") || p.includes("/torch/nn/parallel/");
}

/** `job.py:20`: the innermost frame outside PyTorch. */
function userFrame(frames: readonly FrFrame[] | undefined): string | undefined {
  const f = frames?.find((x) => !isTorchFrame(x)) ?? frames?.[0];
  return f ? `${f.file}:${f.line}` : undefined;
}

/** ` (called from job.py:20)`, or nothing without frames. */
function calledFrom(frames: readonly FrFrame[] | undefined): string {
  const f = userFrame(frames);
  return f !== undefined ? ` (called from ${f})` : "";
}

const stacksOut = (stacks: readonly FrStack[]): FindingStack[] =>
  stacks.map((s) => ({ ranks: [...s.ranks], frames: s.frames.map((f) => ({ function: f.name, file: f.file, line: f.line })) }));

function evidenceOf(g: FrGroupAnalysis, ...rankSets: (readonly number[])[]): string[] {
  const source = new Map(g.status.map((s) => [s.rank, s.source]));
  const out: string[] = [];
  for (const ranks of rankSets) {
    for (const r of ranks.slice(0, 3)) {
      const s = source.get(r);
      if (s !== undefined && !out.includes(s)) out.push(s);
    }
  }
  return out;
}

function base(g: FrGroupAnalysis, ranks: readonly number[]): Pick<Finding, "ranks" | "processes" | "comm_id" | "process_group"> {
  return { ranks: [...ranks], processes: [], comm_id: null, process_group: groupLabel(g) };
}

function behindFinding(g: FrGroupAnalysis): Finding | undefined {
  const b = g.behind;
  if (b === undefined) return undefined;
  const w = g.wait;
  const pg = groupLabel(g);
  const op = w?.op !== undefined ? ` (${w.op})` : "";
  const missing = g.missing.length > 0 ? ` There is no dump from ${who(g.missing)}: ${verb(g.missing, "it", "they")} may be behind too.` : "";
  const waitFields = w ? { waiting_ranks: w.ranks, stacks: stacksOut(w.stacks), ...(w.op !== undefined ? { op: w.op } : {}) } : {};
  if (b.by === "enqueued") {
    const seq = b.at + 1;
    const last = b.last[0];
    const lastText = last
      ? `${b.ranks.length === 1 ? "Its" : `Rank ${last.rank}'s`} last collective was #${last.seq} (${last.op}${last.state ? `, ${last.state}` : ""})${userFrame(last.frames) !== undefined ? `, called from ${userFrame(last.frames)}` : ""}. `
      : "";
    return {
      kind: "rank_behind",
      severity: "critical",
      summary:
        `Flight Recorder, process group ${pg}: ${who(b.ranks)} enqueued collectives only up to #${b.at} while ${who(b.aheadRanks)} reached #${b.aheadAt}: ` +
        `${who(b.ranks)} never enqueued collective #${seq}${op}, which ${w ? `${who(w.ranks)} ${verb(w.ranks, "waits", "wait")} in${calledFrom(w.stacks[0]?.frames)}` : "the others wait in"}. ` +
        `${lastText}"Not enqueued" means that rank's Python code never got there: another code path, or stuck on the CPU (py-spy dump its process).${missing}`,
      ...base(g, b.ranks),
      evidence: evidenceOf(g, b.ranks, w?.ranks ?? b.aheadRanks),
      seq,
      ...waitFields,
    };
  }
  return {
    kind: "rank_behind",
    severity: "critical",
    summary:
      `Flight Recorder, process group ${pg}: every rank enqueued collective #${b.at + 1}${op} and ${who(b.aheadRanks)} completed it, but ${who(b.ranks)} did not ` +
      `(last completed #${b.at}): ${verb(b.ranks, "it", "they")} entered it and did not finish. "Enqueued but not completed" points below Python: that rank's GPU or its network links.${missing}`,
    ...base(g, b.ranks),
    evidence: evidenceOf(g, b.ranks, b.aheadRanks),
    seq: b.at + 1,
    ...waitFields,
  };
}

/** Every rank with a dump waits in the same collective, and nothing else explains it. */
function allWaiting(g: FrGroupAnalysis): boolean {
  return g.wait !== undefined && g.behind === undefined && g.status.length > 0 && g.wait.ranks.length === g.status.length;
}

function hangFinding(g: FrGroupAnalysis): Finding | undefined {
  const w = g.wait;
  if (w === undefined || !allWaiting(g) || g.missing.length > 0) return undefined;
  if (g.mismatches.some((m) => m.kind !== "state" && m.seq <= w.seq)) return undefined; // the mismatch is the cause
  const states = w.states.map((s) => `${s.ranks.length} ${s.state}`).join(", ");
  return {
    kind: "hang_suspected",
    severity: "critical",
    summary:
      `Flight Recorder, process group ${groupLabel(g)}: every rank enqueued collective #${w.seq}${w.op !== undefined ? ` (${w.op})` : ""}${calledFrom(w.stacks[0]?.frames)} ` +
      `and none completed it${states ? ` (${states})` : ""}: all entered it and none finished. "Enqueued but not completed" points at the network or a GPU, not at user code.`,
    ...base(g, w.ranks),
    evidence: evidenceOf(g, w.ranks),
    seq: w.seq,
    waiting_ranks: w.ranks,
    stacks: stacksOut(w.stacks),
    ...(w.op !== undefined ? { op: w.op } : {}),
    ...(w.timeoutMs !== undefined ? { timeout_ms: w.timeoutMs } : {}),
  };
}

function missingFinding(g: FrGroupAnalysis): Finding | undefined {
  if (g.missing.length === 0) return undefined;
  const w = g.wait;
  const unreadable = g.unreadable.length > 0 ? ` (the dump of ${who(g.unreadable)} could not be read)` : "";
  const size = g.size !== undefined ? ` (${g.size} ranks)` : "";
  const head = `Flight Recorder, process group ${groupLabel(g)}${size}: no dump from ${who(g.missing)}${unreadable}`;
  const n = g.status.length;
  const culprit = allWaiting(g) && w !== undefined;
  const present = n === 1 ? `${who(g.status.map((s) => s.rank))}, the only rank with a dump, waits` : `all ${n} ranks with a dump wait`;
  return {
    kind: "rank_missing",
    severity: culprit ? "critical" : "warning",
    summary:
      culprit && w
        ? `${head}, while ${present} in collective #${w.seq}${w.op !== undefined ? ` (${w.op})` : ""}${calledFrom(w.stacks[0]?.frames)}. ` +
          `The ranks without a dump most likely never entered it: check that their processes are alive and where they are (py-spy dump).`
        : `${head}: what is said here covers the ${n} rank${n === 1 ? "" : "s"} with one.`,
    ...base(g, g.missing),
    evidence: evidenceOf(g, w?.ranks ?? []),
    count: g.missing.length,
    ...(culprit && w ? { seq: w.seq, waiting_ranks: w.ranks, stacks: stacksOut(w.stacks), ...(w.op !== undefined ? { op: w.op } : {}) } : {}),
  };
}

const CLASS_NAME = { op: "collective type mismatch", size: "size mismatch", dtype: "dtype mismatch", state: "state mismatch" } as const;

function mismatchFindings(g: FrGroupAnalysis, m: FrMismatch): Finding[] {
  const e = m.expected;
  return m.found.map((f) => {
    const at = `Flight Recorder, process group ${groupLabel(g)}, collective #${m.seq}: `;
    const tail = ` (${CLASS_NAME[m.kind]}).`;
    let text: string;
    if (m.kind === "op") text = `${who(f.ranks)} issued ${f.value} where ${who(e.ranks)} issued ${e.value}${tail} The ranks' code took different paths: compare the stacks.`;
    else if (m.kind === "size") text = `${who(f.ranks)} called ${m.op} with ${f.value} where ${who(e.ranks)} used ${e.value}${tail} The ranks passed tensors of different shapes.`;
    else if (m.kind === "dtype") text = `${who(f.ranks)} called ${m.op} with dtypes ${f.value} where ${who(e.ranks)} used ${e.value}${tail}`;
    else {
      const hint = f.value === "scheduled" ? " Its kernel has not started: that GPU, or the stream the collective waits on, is busy with something else." : "";
      text = `${who(f.ranks)} ${verb(f.ranks, "is", "are")} ${f.value} in ${m.op} while ${who(e.ranks)} ${verb(e.ranks, "is", "are")} ${e.value}${tail}${hint}`;
    }
    return {
      kind: "collective_mismatch" as const,
      severity: m.kind === "state" ? ("warning" as const) : ("critical" as const),
      summary: at + text,
      ...base(g, f.ranks),
      evidence: evidenceOf(g, f.ranks, e.ranks),
      seq: m.seq,
      op: m.op,
      ...(m.kind === "op" ? { other_op: f.value } : {}),
      mismatch: m.kind,
      expected: e.value,
      found: f.value,
      stacks: stacksOut([...f.stacks, ...e.stacks.slice(0, 1)]),
    };
  });
}

function inputFindings(a: FrAnalysis): Finding[] {
  const out: Finding[] = [];
  const warn = (summary: string, source: string, ranks: number[] = []): void => {
    out.push({ kind: "dump_unreadable", severity: "warning", summary, ranks, processes: [], comm_id: null, evidence: source !== "" ? [source] : [] });
  };
  for (const f of a.failed) warn(`Flight Recorder dump ${f.source}${f.rank !== undefined ? ` (rank ${f.rank})` : ""} could not be read: ${f.error}.`, f.source, f.rank !== undefined ? [f.rank] : []);
  for (const s of a.unplaced) warn(`Flight Recorder dump ${s} names no rank (no "rank" key, and its file name does not end in one, as in nccl_trace_rank_3): left out.`, s);
  for (const d of a.duplicates) warn(`Two Flight Recorder dumps of rank ${d.rank}: ${d.used} is used, ${d.source} is left out.`, d.source, [d.rank]);
  if (a.truncated) warn("More process groups or ranks than ringwatch analyzes (1,024 groups, 65,536 ranks per group): some were left out.", "");
  return out;
}

export function flightRecorderFindings(a: FrAnalysis): Finding[] {
  const out: Finding[] = [];
  for (const g of a.groups) {
    for (const f of [behindFinding(g), missingFinding(g), hangFinding(g)]) if (f) out.push(f);
    for (const m of g.mismatches) {
      // A rank that did not complete what the others completed: the rank_behind finding says it already.
      if (m.kind === "state" && g.behind?.by === "completed" && m.seq === g.behind.at + 1) continue;
      out.push(...mismatchFindings(g, m));
    }
  }
  return [...out, ...inputFindings(a)];
}

export function processGroupSummaries(a: FrAnalysis): ProcessGroupSummary[] {
  return a.groups.map((g) => ({
    process_group: g.name,
    desc: g.desc ?? null,
    size: g.size ?? null,
    missing_ranks: g.missing,
    ranks: g.status.map((s) => ({
      rank: s.rank,
      dump: s.source,
      last_enqueued: s.lastEnqueued ?? null,
      last_started: s.lastStarted ?? null,
      last_completed: s.lastCompleted ?? null,
    })),
  }));
}
