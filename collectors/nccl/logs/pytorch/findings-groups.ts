/**
 * PyTorch's lines from many ranks of one process group, read as one picture: watchdog timeouts
 * (`WorkNCCL(SeqNum=N, OpType=X)`: the rank's oldest unfinished work), status lines (`last
 * enqueued work: E, last completed work: C`, from the watchdog or from a dump signal), heartbeat
 * timeouts and dump signals. Per group (PG GUID, else PG id, else the default group):
 * - ranks at the same SeqNum in different OpTypes: collective_mismatch;
 * - the ranks at the lowest enqueued sequence (or, when every rank enqueued the same, the lowest
 *   completed one) while others got further: rank_behind, with how far behind;
 * - every rank at the same point with work pending: hang_suspected (the collective itself hangs);
 * - a heartbeat timeout or a stuck watchdog: hang_suspected; a dump signal from another rank
 *   names the rank whose watchdog fired first.
 * A rank with nothing pending (enqueued == completed) is never the culprit by itself.
 */
import type { HangSignRecord, PtErrorRecord, PytorchLog, WatchdogRecord, WorkStatusRecord } from "./log.js";
import { AFTERMATH } from "./findings-errors.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { collectiveMismatch, hangSuspected, rankBehind, watchdogTimeout } from "../../verdict/finding.js";
import { collectiveMismatchWords, hangSuspectedWords, rankBehindWords, watchdogTimeoutWords } from "../../verdict/words.js";

/** The most SeqNums one rank's oldest pending work may be past another's in a group no line named (PyTorch 1.13 `[Rank 0] Watchdog caught ...`). */
export const MAX_UNNAMED_LEAD = 64;

interface RankView {
  rank: number;
  /** Its oldest unfinished work, from a watchdog timeout. */
  pending?: { seq: number; op?: string };
  enq?: number;
  done?: number;
  /** The work a watchdog status line says failed. */
  failedSeq?: number;
  where: string[];
  proc?: string;
}

interface Group {
  key: string;
  label: string;
  ranks: Map<number, RankView>;
  watchdogs: WatchdogRecord[];
  /** Ranks that printed a watchdog timeout in this group. */
  timedOut: Set<number | undefined>;
  signs: HangSignRecord[];
  /** Some line named the group; else it is the default group by guess, and unnamed lines of different groups may be in it. */
  named: boolean;
}

/**
 * A watchdog timeout line that names no group (`[Rank 1] Watchdog caught ...`, PyTorch 2.4-2.6)
 * belongs to the group of the same rank's status line about the same work (`[PG ID 11 PG GUID 119
 * Rank 1] Exception ... detected by watchdog at work: 216`), else to the one group that rank's
 * status lines name.
 */
function withNamedGroup(w: WatchdogRecord, status: readonly WorkStatusRecord[]): WatchdogRecord {
  if (w.pgNamed || w.rank === undefined) return w;
  const mine = status.filter((s) => s.pgNamed && s.rank === w.rank);
  const same = mine.find((s) => s.failedSeq !== undefined && s.failedSeq === w.seq);
  const only = uniq(mine.map((s) => s.pg)).length === 1 ? mine[0] : undefined;
  const s = same ?? only;
  return s === undefined ? w : { ...w, pg: s.pg, pgLabel: s.pgLabel, pgNamed: true };
}

/** Else, the one named group whose ranks time out in the same work (SeqNum and OpType). */
function withSameWork(w: WatchdogRecord, all: readonly WatchdogRecord[]): WatchdogRecord {
  if (w.pgNamed || w.seq === undefined) return w;
  const same = all.filter((o) => o.pgNamed && o.seq === w.seq && o.opType === w.opType);
  if (same.length === 0 || uniq(same.map((o) => o.pg)).length !== 1) return w;
  const o = same[0] as WatchdogRecord;
  return { ...w, pg: o.pg, pgLabel: o.pgLabel, pgNamed: true };
}

/** The records the process-group picture reads (a live view may hold only the recent ones). */
export type PtGroupRecords = Pick<PytorchLog, "watchdogs" | "workStatus" | "hangSigns" | "errors">;

function groupsOf(t: PtGroupRecords): Group[] {
  const groups = new Map<string, Group>();
  const group = (r: { pg: string; pgLabel: string; pgNamed?: boolean }): Group => {
    let g = groups.get(r.pg);
    if (g === undefined) {
      g = { key: r.pg, label: r.pgLabel, ranks: new Map(), watchdogs: [], timedOut: new Set(), signs: [], named: false };
      groups.set(r.pg, g);
    }
    if (r.pgNamed === true) g.named = true;
    // The longest label carries the name (`PG 0 (default_pg)` over `PG 0`).
    if (r.pgLabel.length > g.label.length) g.label = r.pgLabel;
    return g;
  };
  const view = (g: Group, rank: number): RankView => {
    let v = g.ranks.get(rank);
    if (v === undefined) {
      v = { rank, where: [] };
      g.ranks.set(rank, v);
    }
    return v;
  };
  const placed = t.watchdogs.map((w) => withNamedGroup(w, t.workStatus));
  for (const w0 of placed) {
    const w = withSameWork(w0, placed);
    const g = group(w);
    g.watchdogs.push(w);
    g.timedOut.add(w.rank);
    if (w.rank === undefined || w.seq === undefined) continue;
    const v = view(g, w.rank);
    if (v.pending === undefined || w.seq < v.pending.seq) v.pending = { seq: w.seq, ...(w.opType !== undefined ? { op: w.opType } : {}) };
    v.where.push(w.where);
    v.proc ??= w.processKey;
  }
  for (const s of t.workStatus as readonly WorkStatusRecord[]) {
    if (s.rank === undefined) continue;
    const v = view(group(s), s.rank);
    // -1: nothing enqueued / completed yet (the first work is 1), the same as 0.
    if (s.lastEnqueued !== undefined) v.enq = Math.max(v.enq ?? 0, s.lastEnqueued, 0);
    if (s.lastCompleted !== undefined) v.done = Math.max(v.done ?? 0, s.lastCompleted, 0);
    if (s.failedSeq !== undefined) {
      v.failedSeq ??= s.failedSeq;
      if (v.pending === undefined) v.pending = { seq: s.failedSeq };
    }
    v.where.push(s.where);
    v.proc ??= s.processKey;
  }
  for (const h of t.hangSigns) group(h).signs.push(h);
  return [...groups.values()];
}

/**
 * The processes whose lines speak for each group, by the group's label as its findings name it
 * (`PG 0 (default_pg)`, also for a rank's `[Rank 0] Watchdog caught` line placed in it as above),
 * with the rank the first such line gave: the live stacks' processes (stacks-inputs.ts).
 */
export function groupProcesses(t: PtGroupRecords): Map<string, Map<string, number | undefined>> {
  const labels = new Map(groupsOf(t).map((g) => [g.key, g.label]));
  const placed = t.watchdogs.map((w) => withNamedGroup(w, t.workStatus));
  const out = new Map<string, Map<string, number | undefined>>();
  for (const r of [...placed.map((w) => withSameWork(w, placed)), ...t.workStatus, ...t.hangSigns]) {
    const label = labels.get(r.pg);
    if (label === undefined || r.processKey === undefined) continue;
    let m = out.get(label);
    if (m === undefined) out.set(label, (m = new Map<string, number | undefined>()));
    if (m.get(r.processKey) === undefined) m.set(r.processKey, r.rank);
  }
  return out;
}

/** The highest work the rank is known to have enqueued. */
const enqueued = (v: RankView): number | undefined => v.enq ?? v.pending?.seq;
/** The highest work the rank is known to have completed. */
const completed = (v: RankView): number | undefined => v.done ?? (v.pending !== undefined ? v.pending.seq - 1 : undefined);

function base(g: Group, views: readonly RankView[]): Pick<Finding, "processes" | "comm_id" | "evidence" | "process_group"> {
  return {
    processes: uniq(views.map((v) => v.proc).filter((p): p is string => p !== undefined)),
    comm_id: null,
    evidence: uniq(views.flatMap((v) => v.where)).slice(0, 5),
    process_group: g.label,
  };
}

/** Collectives whose every rank passes as many elements as the others (all_gather's input, a reduction's, a broadcast's). */
const SAME_SIZE_OPS: ReadonlySet<string> = new Set([
  "ALLREDUCE",
  "BROADCAST",
  "REDUCE",
  "ALLGATHER",
  "_ALLGATHER_BASE",
  "REDUCE_SCATTER",
  "_REDUCE_SCATTER_BASE",
]);

/**
 * Ranks of one group timed out in the same work and collective with different NumelIn, where every
 * rank passes as many elements: they are in different collectives (a data-dependent size, a
 * parameter one rank gathers and the other does not), not in one that the network or a GPU holds
 * up (nccl-pasted 277, ms-swift ZeRO-3: _ALLGATHER_BASE SeqNum 3497, NumelIn 1572864 vs 512).
 */
function sizeMismatch(g: Group, ws: readonly WatchdogRecord[], out: Finding[]): void {
  const w0 = ws[0];
  if (w0?.seq === undefined || w0.opType === undefined || !SAME_SIZE_OPS.has(w0.opType)) return;
  // Each rank's one size, from lines sure of the group: their own words, or the rank's status line in it.
  const sizeOf = new Map<number, number | undefined>();
  for (const w of ws) {
    if (w.numelIn === undefined || w.rank === undefined) continue;
    if (!w.pgNamed && g.ranks.get(w.rank)?.enq === undefined) return;
    // A rank seen at two sizes (a restart, logs put together): no comparison.
    if (sizeOf.has(w.rank) && sizeOf.get(w.rank) !== w.numelIn) return;
    sizeOf.set(w.rank, w.numelIn);
  }
  const bySize = new Map<number, number[]>();
  for (const [rank, numel] of sizeOf) if (numel !== undefined) bySize.set(numel, [...(bySize.get(numel) ?? []), rank]);
  if (bySize.size < 2) return;
  const sizes = [...bySize].map(([numel, ranks]) => ({ numel, ranks: ranks.sort((a, b) => a - b) }));
  out.push(
    collectiveMismatch({
      summary: collectiveMismatchWords.pytorchSizes({ group: g.label, seq: w0.seq, op: w0.opType, sizes }),
      ranks: sizes.flatMap((x) => x.ranks).sort((a, b) => a - b),
      processes: uniq(ws.map((w) => w.processKey).filter((p): p is string => p !== undefined)),
      comm_id: null,
      evidence: ws.map((w) => w.where).slice(0, 5),
      process_group: g.label,
      seq: w0.seq,
      op: w0.opType,
    }),
  );
}

function watchdogFindings(g: Group, errors: readonly PtErrorRecord[], out: Finding[]): void {
  const bySeqOp = new Map<string, WatchdogRecord[]>();
  // A rank's line cut before its SeqNum (`...terminated with exception: [Rank 3] Watchdog caught collective oper`)
  // repeats the timeout its whole line names: no second finding.
  const named = new Set(g.watchdogs.filter((w) => w.seq !== undefined && w.rank !== undefined).map((w) => w.rank));
  for (const w of g.watchdogs) {
    if (w.seq === undefined && w.rank !== undefined && named.has(w.rank)) continue;
    const k = `${w.seq ?? "?"}|${w.opType ?? "?"}`;
    bySeqOp.set(k, [...(bySeqOp.get(k) ?? []), w]);
  }
  // Ranks whose status line says which work failed and that printed no timeout line here (a paste
  // kept only their status line): they join the timeout of the same work.
  const statusOnly = [...g.ranks.values()].filter((v) => v.failedSeq !== undefined && !g.timedOut.has(v.rank));
  // Ranks whose own watchdog signalled the dump in this group (`First PG on this rank to signal dumping`) and
  // printed nothing else of it: they join the group's one timeout (nccl-pasted 294: its timeout line is cut off).
  // A rank with an error of its own (an NCCL error, a CUDA error in its watchdog) failed another way.
  const failed = new Set(errors.filter((e) => !AFTERMATH.has(e.what)).map((e) => e.rank));
  const signs = g.signs.filter(
    (s) => s.what === "first_pg_dump" && s.rank !== undefined && !g.timedOut.has(s.rank) && !g.ranks.has(s.rank) && !failed.has(s.rank),
  );
  const signalledOnly = uniq(signs.map((s) => s.rank as number));
  const joined = new Set<number>();
  const seqsWithOps = new Map<number, number>();
  for (const ws of bySeqOp.values()) if (ws[0]?.seq !== undefined) seqsWithOps.set(ws[0].seq, (seqsWithOps.get(ws[0].seq) ?? 0) + 1);
  for (const ws of bySeqOp.values()) {
    const w0 = ws[0];
    if (w0 === undefined) continue;
    // Only where one collective timed out at that SeqNum (two ops at one SeqNum: which one the rank was in is unknown).
    const join = w0.seq !== undefined && seqsWithOps.get(w0.seq) === 1 ? statusOnly.filter((v) => v.failedSeq === w0.seq) : [];
    for (const v of join) joined.add(v.rank);
    const signalled = g.named && bySeqOp.size === 1 && w0.seq !== undefined ? signalledOnly : [];
    const ranks = uniq([...ws.map((w) => w.rank).filter((r): r is number => r !== undefined), ...join.map((v) => v.rank), ...signalled]).sort((a, b) => a - b);
    const ran = Math.max(...ws.map((w) => w.ranForMs ?? 0));
    const timeoutMs = ws.find((w) => w.timeoutMs !== undefined)?.timeoutMs;
    out.push(
      watchdogTimeout({
        summary: watchdogTimeoutWords.timedOut({ group: g.label, ranks, seq: w0.seq, op: w0.opType, ranForMs: ran, timeoutMs }),
        ranks,
        processes: uniq([...ws.map((w) => w.processKey), ...join.map((v) => v.proc)].filter((p): p is string => p !== undefined)),
        comm_id: null,
        evidence: uniq([
          ...ws.map((w) => w.where),
          ...join.flatMap((v) => v.where),
          ...signs.filter((x) => signalled.includes(x.rank as number)).map((x) => x.where),
        ]).slice(0, 5),
        process_group: g.label,
        ...(w0.seq !== undefined ? { seq: w0.seq } : {}),
        ...(w0.opType ? { op: w0.opType } : {}),
        ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}),
      }),
    );
  }
  for (const ws of bySeqOp.values()) sizeMismatch(g, ws, out);
  // `failure detected by watchdog at work sequence id: N` with no timeout line of that rank here.
  const bySeq0 = new Map<number, RankView[]>();
  for (const v of g.ranks.values()) {
    if (v.failedSeq === undefined || g.timedOut.has(v.rank) || joined.has(v.rank)) continue;
    bySeq0.set(v.failedSeq, [...(bySeq0.get(v.failedSeq) ?? []), v]);
  }
  for (const [seq, vs] of bySeq0) {
    const ranks = vs.map((v) => v.rank).sort((a, b) => a - b);
    const v0 = vs[0];
    out.push(
      watchdogTimeout({
        summary: watchdogTimeoutWords.failureDetected({
          group: g.label,
          ranks,
          seq,
          first: v0?.enq !== undefined ? { rank: v0.rank, enqueued: v0.enq, completed: v0.done } : undefined,
        }),
        ranks,
        ...base(g, vs),
        seq,
      }),
    );
  }
  // The same work, different collectives: the ranks' code diverged.
  const bySeq = new Map<number, Map<string, number[]>>();
  for (const v of g.ranks.values()) {
    if (v.pending?.op === undefined) continue;
    const ops = bySeq.get(v.pending.seq) ?? new Map<string, number[]>();
    ops.set(v.pending.op, [...(ops.get(v.pending.op) ?? []), v.rank]);
    bySeq.set(v.pending.seq, ops);
  }
  for (const [seq, ops] of bySeq) {
    if (ops.size < 2) continue;
    const byOp = [...ops].map(([op, ranks]) => ({ op, ranks: ranks.sort((a, b) => a - b) }));
    const ranks = [...ops.values()].flat().sort((a, b) => a - b);
    const [first, second] = [...ops.keys()];
    out.push(
      collectiveMismatch({
        summary: collectiveMismatchWords.pytorch({ group: g.label, seq, ops: byOp }),
        ranks,
        ...base(
          g,
          ranks.map((r) => g.ranks.get(r)).filter((v): v is RankView => v !== undefined),
        ),
        seq,
        ...(first !== undefined ? { op: first } : {}),
        ...(second !== undefined ? { other_op: second } : {}),
      }),
    );
  }
}

/**
 * Every rank that spoke timed out in the same work: a rank the logs' communicators know (at most a
 * quarter of them) that printed no timeout never enqueued it.
 */
function silentFinding(g: Group, known: ReadonlySet<number>): Finding | undefined {
  const w0 = g.watchdogs[0];
  if (w0 === undefined || known.size === 0) return undefined;
  if (g.watchdogs.some((w) => w.seq !== w0.seq || w.opType !== w0.opType)) return undefined;
  const reported = new Set(g.watchdogs.map((w) => w.rank).filter((r): r is number => r !== undefined));
  const silent = [...known].filter((r) => !reported.has(r)).sort((a, b) => a - b);
  if (reported.size === 0 || silent.length === 0 || silent.length > Math.max(1, Math.floor(known.size / 4))) return undefined;
  return rankBehind({
    summary: rankBehindWords.pytorchSilent({ group: g.label, silent, reported: [...reported].sort((a, b) => a - b), seq: w0.seq, op: w0.opType }),
    ranks: silent,
    processes: [],
    comm_id: null,
    evidence: g.watchdogs.map((w) => w.where).slice(0, 3),
    process_group: g.label,
    ...(w0.seq !== undefined ? { seq: w0.seq } : {}),
    ...(w0.opType ? { op: w0.opType } : {}),
  });
}

/**
 * The ranks behind, or a hang that every rank is in. S is the oldest work some rank has not
 * completed. A rank that completed everything it enqueued and never enqueued S is behind (its
 * Python went elsewhere); a rank that enqueued S but did not complete it while others completed it
 * is behind below Python (its GPU or network); when every rank enqueued S and none completed it,
 * the collective itself hangs.
 */
function progressFindings(g: Group, known: ReadonlySet<number>, out: Finding[]): void {
  const views = [...g.ranks.values()].sort((a, b) => a.rank - b.rank);
  const withEnq = views.filter((v) => enqueued(v) !== undefined && completed(v) !== undefined);
  if (withEnq.length < 2) {
    const silent = silentFinding(g, known);
    if (silent !== undefined) out.push(silent);
    return;
  }
  const enq = (v: RankView): number => enqueued(v) ?? 0;
  const done = (v: RankView): number => completed(v) ?? 0;
  const S = Math.min(...withEnq.map((v) => done(v) + 1));
  const maxEnq = Math.max(...withEnq.map(enq));
  if (maxEnq < S) return; // nothing pending anywhere: no culprit to invent
  const stuck = withEnq.filter((v) => done(v) + 1 === S);
  // Never enqueued S (nothing pending; a watchdog line alone is only a lower bound, never this).
  const idle = stuck.filter((v) => v.enq !== undefined && enq(v) < S);
  if (idle.length > 0) {
    const behindRanks = idle.map((v) => v.rank);
    const waiting = withEnq.filter((v) => enq(v) > done(v));
    const waits = uniq(waiting.map((v) => done(v) + 1)).sort((a, b) => a - b);
    out.push(
      rankBehind({
        summary: rankBehindWords.pytorchNotEnqueued({
          group: g.label,
          behind: behindRanks,
          seq: S,
          reached: maxEnq,
          waiting: waiting.map((v) => v.rank),
          waits,
        }),
        ranks: behindRanks,
        ...base(g, idle),
        seq: S,
      }),
    );
    return;
  }
  const past = withEnq.filter((v) => done(v) >= S);
  if (past.length > 0) {
    const behindRanks = stuck.map((v) => v.rank);
    const aheadRanks = past.map((v) => v.rank);
    // Known only from watchdog timeouts: the lowest waits in its own work, which the others got past;
    // the first work they are not known to have enqueued is S + 1.
    const watchdogOnly = stuck.every((v) => v.enq === undefined && v.pending !== undefined);
    // Watchdog lines that name no group, in a group no line named, may be of different groups (each
    // counts its own SeqNum). In one group a rank gets only a few collectives past another: each
    // needs every rank, and only rooted ones (a broadcast's root) can finish first. Far apart: no rank behind.
    if (watchdogOnly && !g.named && Math.max(...past.map((v) => v.pending?.seq ?? S)) - S > MAX_UNNAMED_LEAD) return;
    const summary = watchdogOnly
      ? rankBehindWords.pytorchStillWaits({
          group: g.label,
          behind: behindRanks,
          seq: S,
          op: stuck[0]?.pending?.op,
          ahead: aheadRanks,
          aheadWait: past.find((v) => v.pending !== undefined)?.pending,
        })
      : rankBehindWords.pytorchNotCompleted({ group: g.label, behind: behindRanks, seq: S, ahead: aheadRanks, completed: Math.max(...past.map(done)) });
    out.push(rankBehind({ summary, ranks: behindRanks, ...base(g, stuck), seq: watchdogOnly ? S + 1 : S }));
    return;
  }
  // Every rank enqueued S and none completed it. Not the collective's fault when a rank stayed silent.
  const silent = silentFinding(g, known);
  if (silent !== undefined) {
    out.push(silent);
    return;
  }
  const ranks = stuck.map((v) => v.rank);
  // The watchdog already timed out in that work: one finding says both (the timeout, and that every rank is in it).
  const timeout = out.findIndex((f) => f.kind === "watchdog_timeout" && f.process_group === g.label && f.seq === S);
  const t = out[timeout];
  // Ranks in that work with different sizes are in different collectives: it is no collective that does not finish.
  if (out.some((f) => f.kind === "collective_mismatch" && f.process_group === g.label && f.seq === S)) return;
  if (t !== undefined) {
    const all = uniq([...t.ranks, ...ranks]).sort((a, b) => a - b);
    out[timeout] = {
      ...t,
      summary: `${t.summary} ${watchdogTimeoutWords.noneCompleted({ ranks: all, enqueued: maxEnq })}`,
      ranks: all,
      evidence: uniq([...t.evidence, ...base(g, stuck).evidence]).slice(0, 5),
    };
    return;
  }
  out.push(
    hangSuspected({
      summary: hangSuspectedWords.pytorch({ group: g.label, ranks, seq: S, enqueued: maxEnq }),
      ranks,
      ...base(g, stuck),
      seq: S,
    }),
  );
}

function signFindings(g: Group, out: Finding[]): void {
  const stuck = g.signs.filter((s) => s.what !== "dump_signal" && s.what !== "first_pg_dump");
  if (stuck.length > 0) {
    const ranks = uniq(stuck.map((s) => s.rank).filter((r): r is number => r !== undefined)).sort((a, b) => a - b);
    const seconds = Math.max(0, ...stuck.map((s) => s.stuckSeconds ?? 0));
    const pending = Math.max(0, ...stuck.map((s) => s.workMetaListSize ?? 0));
    out.push(
      hangSuspected({
        summary: hangSuspectedWords.heartbeat({ group: g.label, ranks, seconds, pending }),
        ranks,
        processes: uniq(stuck.map((s) => s.processKey).filter((p): p is string => p !== undefined)),
        comm_id: null,
        evidence: stuck.map((s) => s.where).slice(0, 5),
        process_group: g.label,
      }),
    );
  }
  // A rank whose own timeout raised the dump, and that printed no watchdog line here: its status says where.
  const timedOutHere = new Set(g.timedOut);
  for (const s of g.signs) {
    if (s.what !== "dump_signal" || s.rank === undefined || s.fromRank !== s.rank || timedOutHere.has(s.rank)) continue;
    const v = g.ranks.get(s.rank);
    if (v?.enq === undefined || v.done === undefined || v.done >= v.enq) continue;
    timedOutHere.add(s.rank);
    out.push(
      watchdogTimeout({
        summary: watchdogTimeoutWords.ownSignal({ group: g.label, rank: s.rank, enqueued: v.enq, completed: v.done }),
        ranks: [s.rank],
        ...base(g, [v]),
        seq: v.done + 1,
      }),
    );
  }
  // Ranks that dumped on another rank's signal: that rank's watchdog fired first.
  const signals = g.signs.filter((s) => s.what === "dump_signal" && s.fromRank !== undefined && s.fromRank !== s.rank);
  for (const from of uniq(signals.map((s) => s.fromRank as number))) {
    if (g.timedOut.has(from)) continue;
    const receivers = uniq(
      signals
        .filter((s) => s.fromRank === from)
        .map((s) => s.rank)
        .filter((r): r is number => r !== undefined),
    ).sort((a, b) => a - b);
    // Receivers whose status shows work enqueued and not completed wait in the group for it.
    const waiting = receivers.filter((r) => {
      const v = g.ranks.get(r);
      return v?.enq !== undefined && v.done !== undefined && v.enq > v.done;
    });
    out.push(
      watchdogTimeout({
        summary: watchdogTimeoutWords.firstSignal({ group: g.label, rank: from, receivers }),
        ranks: [from],
        ...(waiting.length > 0 ? { waiting_ranks: waiting } : {}),
        processes: [],
        comm_id: null,
        evidence: signals
          .filter((s) => s.fromRank === from)
          .map((s) => s.where)
          .slice(0, 5),
        process_group: g.label,
      }),
    );
  }
}

/** Findings from PyTorch's per-process-group lines; `known`: every rank the logs' communicators name. */
export function processGroupFindings(t: PtGroupRecords, known: ReadonlySet<number>): Finding[] {
  const out: Finding[] = [];
  for (const g of groupsOf(t)) {
    watchdogFindings(g, t.errors, out);
    progressFindings(g, known, out);
    signFindings(g, out);
  }
  return out;
}
