/**
 * Findings from PyTorch Flight Recorder dumps (flight-recorder/analyze.ts): per process group, the
 * ranks that never enqueued the collective the others wait in (with the Python stacks the others
 * called it from), member ranks that left no dump, collectives the ranks recorded differently, a
 * collective every rank entered and none finished; and dumps that could not be used.
 */
import type { FrAnalysis, FrGroupAnalysis, FrMismatch, FrStack } from "./analyze.js";
import type { FrFrame } from "./types.js";
import type { Finding, FindingStack, ProcessGroupSummary } from "../verdict/report.js";
import { collectiveMismatch, dumpUnreadable, hangSuspected, rankBehind, rankMissing } from "../verdict/finding.js";
import { collectiveMismatchWords, dumpUnreadableWords, hangSuspectedWords, rankBehindWords, rankMissingWords } from "../verdict/words.js";

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
  const enqueued = b.by === "enqueued";
  // The collective they never enqueued (or never completed), which the others wait in.
  const at = {
    group: groupLabel(g),
    seq: b.at + 1,
    op: w?.op,
    frame: userFrame(w?.stacks[0]?.frames),
    behind: b.ranks,
    ahead: b.aheadRanks,
    missing: g.missing,
  };
  const last = b.last[0];
  return rankBehind({
    summary: enqueued
      ? rankBehindWords.frNotEnqueued({
          ...at,
          at: b.at,
          aheadAt: b.aheadAt,
          waiting: w?.ranks,
          last: last && { rank: last.rank, seq: last.seq, op: last.op, state: last.state, frame: userFrame(last.frames) },
        })
      : rankBehindWords.frNotCompleted(at),
    ...base(g, b.ranks),
    // Not enqueued: the lines of the ranks that wait in it; not completed: of those that completed it.
    evidence: evidenceOf(g, b.ranks, enqueued ? (w?.ranks ?? b.aheadRanks) : b.aheadRanks),
    seq: b.at + 1,
    ...(w ? { waiting_ranks: w.ranks, stacks: stacksOut(w.stacks), ...(w.op !== undefined ? { op: w.op } : {}) } : {}),
  });
}

/** Every rank with a dump waits in the same collective, and nothing else explains it. */
function allWaiting(g: FrGroupAnalysis): boolean {
  return g.wait !== undefined && g.behind === undefined && g.status.length > 0 && g.wait.ranks.length === g.status.length;
}

function hangFinding(g: FrGroupAnalysis): Finding | undefined {
  const w = g.wait;
  if (w === undefined || !allWaiting(g) || g.missing.length > 0) return undefined;
  if (g.mismatches.some((m) => m.kind !== "state" && m.seq <= w.seq)) return undefined; // the mismatch is the cause
  return hangSuspected({
    summary: hangSuspectedWords.flightRecorder({
      group: groupLabel(g),
      seq: w.seq,
      op: w.op,
      frame: userFrame(w.stacks[0]?.frames),
      states: w.states.map((s) => ({ state: s.state, count: s.ranks.length })),
    }),
    ...base(g, w.ranks),
    evidence: evidenceOf(g, w.ranks),
    seq: w.seq,
    waiting_ranks: w.ranks,
    stacks: stacksOut(w.stacks),
    ...(w.op !== undefined ? { op: w.op } : {}),
    ...(w.timeoutMs !== undefined ? { timeout_ms: w.timeoutMs } : {}),
  });
}

function missingFinding(g: FrGroupAnalysis): Finding | undefined {
  if (g.missing.length === 0) return undefined;
  const w = g.wait;
  const facts = { group: groupLabel(g), size: g.size, missing: g.missing, unreadable: g.unreadable, dumped: g.status.map((s) => s.rank) };
  // Every rank with a dump waits in one collective: the ranks without one are the likely culprits.
  const culprit = allWaiting(g) && w !== undefined;
  return rankMissing({
    severity: culprit ? "critical" : "warning",
    summary:
      culprit && w ? rankMissingWords.culprit({ ...facts, seq: w.seq, op: w.op, frame: userFrame(w.stacks[0]?.frames) }) : rankMissingWords.partial(facts),
    ...base(g, g.missing),
    evidence: evidenceOf(g, w?.ranks ?? []),
    count: g.missing.length,
    ...(culprit && w ? { seq: w.seq, waiting_ranks: w.ranks, stacks: stacksOut(w.stacks), ...(w.op !== undefined ? { op: w.op } : {}) } : {}),
  });
}

function mismatchFindings(g: FrGroupAnalysis, m: FrMismatch): Finding[] {
  const e = m.expected;
  return m.found.map((f) =>
    collectiveMismatch({
      // Ranks in another state (one not started yet) may only be slow: a warning.
      severity: m.kind === "state" ? "warning" : "critical",
      summary: collectiveMismatchWords.flightRecorder({ group: groupLabel(g), seq: m.seq, kind: m.kind, op: m.op, found: f, expected: e }),
      ...base(g, f.ranks),
      evidence: evidenceOf(g, f.ranks, e.ranks),
      seq: m.seq,
      op: m.op,
      ...(m.kind === "op" ? { other_op: f.value } : {}),
      mismatch: m.kind,
      expected: e.value,
      found: f.value,
      stacks: stacksOut([...f.stacks, ...e.stacks.slice(0, 1)]),
    }),
  );
}

function inputFindings(a: FrAnalysis): Finding[] {
  const out: Finding[] = [];
  const warn = (summary: string, source: string, ranks: number[] = []): void => {
    out.push(dumpUnreadable({ summary, ranks, processes: [], comm_id: null, evidence: source !== "" ? [source] : [] }));
  };
  for (const f of a.failed) warn(dumpUnreadableWords.failed(f), f.source, f.rank !== undefined ? [f.rank] : []);
  for (const s of a.unplaced) warn(dumpUnreadableWords.noRank({ source: s }), s);
  for (const d of a.duplicates) warn(dumpUnreadableWords.duplicate(d), d.source, [d.rank]);
  if (a.truncated) warn(dumpUnreadableWords.truncated(), "");
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
