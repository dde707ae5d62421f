/**
 * Findings from Horovod's stall inspector (stall.ts): the ranks the last report of each log names
 * missing are rank_behind (the other ranks wait for them), the tensors they have not submitted in
 * the summary. A warning while it may still resolve (one report: a slow rank catches up), critical
 * once the same ranks are reported again or Horovod shuts the job down for them. The oldest form
 * lists only the ranks that submitted: the ones absent below the highest of them are rank_behind;
 * when none is, tensors whose sets of ranks cross are a collective_mismatch, else the report is a
 * sign of a hang (hang_suspected) naming the ranks that wait.
 */
import type { Finding } from "../../verdict/report.js";
import { collectiveMismatch, hangSuspected, rankBehind } from "../../verdict/finding.js";
import { horovodStallWords } from "../../verdict/words.js";
import type { StallReport } from "./stall.js";
import type { HorovodMismatch } from "./mismatch.js";

/** Evidence lines kept per finding. */
const MAX_EVIDENCE = 8;

const sorted = (xs: Iterable<number>): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** The ranks a report names missing (rank lines, or `[missing ranks: ...]`), with the tensors of each. */
function missingOf(r: StallReport): { ranks: number[]; names: { ranks: number[]; tensors: string[]; partial?: boolean }[]; shutdown: number[] } {
  if (r.ranks.size > 0) {
    // Ranks with the same tensors are told together.
    const by = new Map<string, { ranks: number[]; tensors: string[]; partial: boolean }>();
    for (const [rank, v] of [...r.ranks].sort((a, b) => a[0] - b[0])) {
      const key = v.tensors.join("\n");
      const g = by.get(key);
      if (g) {
        g.ranks.push(rank);
        g.partial ||= v.partial;
      } else by.set(key, { ranks: [rank], tensors: v.tensors, partial: v.partial });
    }
    const shutdown = [...r.ranks].filter(([, v]) => v.shutdown).map(([rank]) => rank);
    return { ranks: sorted(r.ranks.keys()), names: [...by.values()], shutdown: sorted(shutdown) };
  }
  const by = new Map<string, { ranks: number[]; tensors: string[] }>();
  for (const t of r.tensors) {
    if (t.missing === undefined || t.missing.length === 0) continue;
    const ranks = sorted(t.missing);
    const key = ranks.join(",");
    const g = by.get(key);
    if (g) g.tensors.push(t.name);
    else by.set(key, { ranks, tensors: [t.name] });
  }
  const names = [...by.values()];
  return { ranks: sorted(names.flatMap((n) => n.ranks)), names, shutdown: [] };
}

/**
 * Reports whose lines name neither ranks nor tensors (the warning alone: nccl-pasted 307, a report
 * quoted in one line, or cut after its header): a stall all the same, no rank named.
 */
function headerOnly(source: string, all: readonly StallReport[]): Finding[] {
  const r = all[all.length - 1];
  if (r === undefined) return [];
  const seconds = r.seconds ?? all.find((x) => x.seconds !== undefined)?.seconds;
  return [
    hangSuspected({
      severity: "warning",
      summary: horovodStallWords.unnamed({ reports: all.length, ...(seconds !== undefined ? { seconds } : {}) }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence: all
        .flatMap((x) => x.lines.slice(0, 1))
        .slice(0, MAX_EVIDENCE)
        .map((n) => `${source}:${n}`),
    }),
  ];
}

const sameRanks = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** The findings of one log's stall reports (the last one says where the job is). */
export function horovodStallFindings(source: string, all: readonly StallReport[], count: number = all.length): Finding[] {
  // A report cut after its header (the paste ends there) names nothing: the one before says where the job is.
  const named = (r: StallReport): boolean => r.ranks.size > 0 || r.tensors.length > 0;
  let n = all.length;
  while (n > 0 && !named(all[n - 1] as StallReport)) n--;
  const reports = all.slice(0, n);
  count -= all.length - n;
  const last = reports[reports.length - 1];
  if (last === undefined) return headerOnly(source, all);
  const evidence = last.lines.slice(0, MAX_EVIDENCE).map((n) => `${source}:${n}`);
  const seconds = last.seconds ?? reports.find((r) => r.seconds !== undefined)?.seconds;
  const m = missingOf(last);
  // Rank lines only: the per-tensor form groups its tensors by rank set, disjoint by construction.
  const crossing = last.ranks.size > 0 ? crossedMissing(m.names) : undefined;
  if (crossing !== undefined)
    return [
      collectiveMismatch({
        severity: "critical",
        summary: horovodStallWords.crossed({ sets: crossing, ...(seconds !== undefined ? { seconds } : {}) }),
        ranks: m.ranks,
        processes: [],
        comm_id: null,
        evidence,
      }),
    ];
  if (m.ranks.length > 0) {
    // How many reports in a row, up to the last, named the same ranks (those dropped by the reader not counted).
    let reportsSame = 0;
    for (let i = reports.length - 1; i >= 0; i--) {
      const r = reports[i];
      if (r === undefined || !sameRanks(missingOf(r).ranks, m.ranks)) break;
      reportsSame++;
    }
    if (reportsSame === reports.length) reportsSame = Math.max(reportsSame, count);
    const shutdownRanks = m.shutdown.length > 0 ? m.shutdown : last.shutdown ? m.ranks : [];
    const shutdown = last.shutdown !== undefined || shutdownRanks.length > 0;
    return [
      rankBehind({
        severity: shutdown || reportsSame > 1 ? "critical" : "warning",
        summary: horovodStallWords.missing({
          ranks: m.ranks,
          ...(seconds !== undefined ? { seconds } : {}),
          names: m.names,
          reports: reportsSame,
          ...(shutdown ? { shutdown: { ranks: shutdownRanks, ...(last.shutdown?.seconds !== undefined ? { seconds: last.shutdown.seconds } : {}) } } : {}),
        }),
        ranks: m.ranks,
        processes: [],
        comm_id: null,
        evidence,
      }),
    ];
  }
  // The oldest form: only the ranks that submitted.
  const readyTensors = last.tensors.filter((t) => t.ready !== undefined && t.ready.length > 0);
  if (readyTensors.length === 0) return [];
  const ready = sorted(readyTensors.flatMap((t) => t.ready ?? []));
  const have = new Set(ready);
  const max = ready[ready.length - 1] ?? 0;
  const absent: number[] = [];
  for (let r = 0; r < max && absent.length < 4096; r++) if (!have.has(r)) absent.push(r);
  if (absent.length === 0) {
    const crossed = crossedSets(readyTensors);
    if (crossed !== undefined)
      return [
        collectiveMismatch({
          severity: "critical",
          summary: horovodStallWords.crossed({ sets: crossed, ...(seconds !== undefined ? { seconds } : {}) }),
          ranks: ready,
          processes: [],
          comm_id: null,
          evidence,
        }),
      ];
  }
  const summary = horovodStallWords.readyOnly({ absent, ready, ...(seconds !== undefined ? { seconds } : {}), tensors: readyTensors.map((t) => t.name) });
  const facts = {
    severity: "warning" as const,
    summary,
    ranks: absent.length > 0 ? absent : ready,
    processes: [],
    comm_id: null,
    evidence,
    waiting_ranks: ready,
  };
  return [absent.length > 0 ? rankBehind(facts) : hangSuspected(facts)];
}

/**
 * Two ranks (or groups of ranks with the same list) each missing a tensor the other has submitted
 * (Lightning pull request 5155's `Missing ranks:` with `0: [broadcast.bool.sz]` and `1:
 * [allreduce.c_d1.bias, ...]`): they run different collectives, not one late rank. A tensor absent
 * from a rank's list proves that rank submitted it only where the list shows the place it would
 * have: Horovod prints each list sorted and cuts it after six names (` ...`), so a name past the
 * last one shown may be cut off. Groups that share a rank, or a tensor, do not cross. Undefined
 * where no two cross. As `submitted` sets for the words: each group submitted what the other misses.
 */
function crossedMissing(names: readonly { ranks: number[]; tensors: string[]; partial?: boolean }[]): { ranks: number[]; tensors: string[] }[] | undefined {
  for (let i = 0; i < names.length; i++)
    for (let j = i + 1; j < names.length; j++) {
      const a = names[i];
      const b = names[j];
      if (a === undefined || b === undefined || a.tensors.length === 0 || b.tensors.length === 0) continue;
      if (a.ranks.some((r) => b.ranks.includes(r))) continue;
      const inA = new Set(a.tensors);
      if (b.tensors.some((t) => inA.has(t))) continue;
      const aSubmitted = b.tensors.filter((t) => shownAbsent(a, t));
      const bSubmitted = a.tensors.filter((t) => shownAbsent(b, t));
      if (aSubmitted.length === 0 || bSubmitted.length === 0) continue;
      return [
        { ranks: a.ranks, tensors: aSubmitted },
        { ranks: b.ranks, tensors: bSubmitted },
      ];
    }
  return undefined;
}

/** `t` is not in the list and the list shows where it would be: whole, or `t` sorts before its last name shown. */
function shownAbsent(list: { tensors: readonly string[]; partial?: boolean }, t: string): boolean {
  if (list.tensors.includes(t)) return false;
  if (list.partial !== true) return true;
  const last = list.tensors.reduce((x, y) => (y > x ? y : x));
  return t < last;
}

/**
 * The oldest form's tensors grouped by the ranks that submitted them, where two groups cross (each
 * has a rank the other lacks: nccl-pasted 281, `loss_Mean [ready ranks: 3]` beside the gradients'
 * `[ready ranks: 2, 0, 1]`): each tensor waits for ranks that wait in another one, so the ranks run
 * different collectives (another order, another branch); no one rank is merely late. Undefined
 * where the sets nest (the ranks in fewer sets are the late ones).
 */
function crossedSets(tensors: readonly StallReport["tensors"][number][]): { ranks: number[]; tensors: string[] }[] | undefined {
  const by = new Map<string, { ranks: number[]; tensors: string[] }>();
  for (const t of tensors) {
    const ranks = sorted(t.ready ?? []);
    const key = ranks.join(",");
    const g = by.get(key);
    if (g) g.tensors.push(t.name);
    else by.set(key, { ranks, tensors: [t.name] });
  }
  const sets = [...by.values()];
  const lacks = (a: readonly number[], b: readonly number[]): boolean => a.some((r) => !b.includes(r));
  const cross = sets.some((a) => sets.some((b) => a !== b && lacks(a.ranks, b.ranks) && lacks(b.ranks, a.ranks)));
  return cross ? sets : undefined;
}

/**
 * Horovod's coordinator refused a tensor the ranks submitted differently (mismatch.ts): a
 * collective_mismatch per message, whichever logs print it (every rank's does). Its words name no
 * rank; those that printed it are told as reporters.
 */
export function horovodMismatchFindings(all: readonly { source: string; mismatches: readonly HorovodMismatch[] }[]): Finding[] {
  const by = new Map<string, { reporters: Set<number>; where: string[]; count: number }>();
  for (const { source, mismatches } of all)
    for (const m of mismatches) {
      let g = by.get(m.message);
      if (g === undefined) by.set(m.message, (g = { reporters: new Set(), where: [], count: 0 }));
      for (const r of m.reporters) g.reporters.add(r);
      for (const n of m.lines) if (g.where.length < MAX_EVIDENCE) g.where.push(`${source}:${n}`);
      g.count += m.lines.length;
    }
  return [...by].map(([message, g]) =>
    collectiveMismatch({
      summary: horovodStallWords.mismatched({ message, reporters: sorted(g.reporters) }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence: g.where,
      ...(g.count > 1 ? { count: g.count } : {}),
    }),
  );
}
