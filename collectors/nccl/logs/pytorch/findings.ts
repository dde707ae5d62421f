/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { aftermathOnly, pytorchErrorFindings } from "./findings-errors.js";
import { isFailure } from "../findings/retcode.js";
import { processGroupFindings } from "./findings-groups.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { rankBehind, watchdogTimeout } from "../../verdict/finding.js";
import { ncclErrorWords, rankBehindWords, watchdogTimeoutWords } from "../../verdict/words.js";

/** The ranks of the largest communicator the logs show whole (for "which rank did not report"). */
export function knownRanks(t: Tracker): Set<number> {
  let world: number[] = [];
  // Only a communicator whose every rank the logs show: of one seen in part (an excerpt, a split
  // communicator's few local ranks), a rank with no timeout line proves nothing.
  for (const c of t.comms.values()) if (c.nranks !== undefined && c.ranks.size === c.nranks && c.ranks.size > world.length) world = [...c.ranks.keys()];
  return new Set(world);
}

export function pytorchFindings(t: Tracker): Finding[] {
  const out = processGroupFindings(t.pt, knownRanks(t));
  // TORCH_NCCL_DESYNC_DEBUG / Flight Recorder: ranks that never joined collective #N.
  let frSeq: number | undefined; // Flight Recorder prints the sequence and the missing ranks on separate lines
  for (const d of t.pt.desync) {
    if (d.what === "not_all_joined") frSeq = d.seq;
    if (d.what === "missing_ranks" && d.seq === undefined && frSeq !== undefined) d.seq = frSeq;
    if (!d.ranks || d.ranks.length === 0) continue;
    const finished = d.what === "finished_not_joined";
    if (!finished && d.what !== "never_joined" && d.what !== "missing_ranks") continue;
    // The collective they never joined: the one after the last they finished, or the one named.
    const seq = finished ? (d.nextSeq ?? (d.seq !== undefined ? d.seq + 1 : undefined)) : d.seq;
    out.push(
      rankBehind({
        summary: finished
          ? rankBehindWords.desyncFinished({ ranks: d.ranks, seq: d.seq, next: seq })
          : rankBehindWords.desyncNotJoined({ ranks: d.ranks, seq }),
        ranks: [...d.ranks].sort((a, b) => a - b),
        processes: [],
        comm_id: null,
        evidence: [d.where],
        ...(seq !== undefined ? { seq } : {}),
      }),
    );
  }
  // A timeout line, a status line naming the work that failed, or a timeout the group findings read
  // from a rank's own dump signal (`Received a dump signal due to a collective timeout from this local rank`).
  if (!out.some((f) => f.kind === "watchdog_timeout") && t.pt.watchdogs.length === 0) out.push(...stackOnlyTimeout(t.pt.timeoutStacks));
  const timedOut =
    t.pt.watchdogs.length > 0 ||
    t.pt.workStatus.some((s) => s.from === "status" && s.failedSeq !== undefined) ||
    out.some((f) => f.kind === "watchdog_timeout");
  // XLA's words for a failed NCCL call repeat what NCCL's own lines of the process say, where the logs hold them (nccl-pasted 90).
  // A failure of NCCL's own lines: a failing return chain or a WARN of a failure (not `other`, not a missing libibverbs).
  const ncclSaid = [...t.processes.values()].some((p) => p.chains.some(isFailure) || p.warnings.some((w) => w.kind !== "other" && w.kind !== "ib_unavailable"));
  out.push(...pytorchErrorFindings(ncclSaid ? { errors: t.pt.errors.filter((e) => e.by !== "xla") } : t.pt, timedOut));
  if (timedOut) withAftermathRanks(out, aftermathOnly(t.pt));
  withAbortedRanks(out, abortedRanks(t), timedOut);
  return out;
}

/**
 * Only the watchdog's C++ stack raising a timeout (`frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(...)`,
 * nccl-pasted 419: the paste kept the frames, not the message above them): a collective timed out,
 * of no known work, on the ranks of the frames' prefixes where they have one.
 */
function stackOnlyTimeout(stacks: readonly { rank?: number; where: string }[]): Finding[] {
  if (stacks.length === 0) return [];
  const ranks = [...new Set(stacks.map((x) => x.rank).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);
  return [
    watchdogTimeout({
      summary: watchdogTimeoutWords.stackOnly({ ranks }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: stacks.slice(0, 3).map((x) => x.where),
    }),
  ];
}

/**
 * The ranks whose communicator NCCL aborted (`comm 0x.. rank 11 nranks 16 ... - Abort COMPLETE`),
 * each with the line that says it. Only the job's largest communicator's (the largest any line of
 * the logs gives): a split communicator numbers its ranks itself.
 */
function abortedRanks(t: Tracker): Aborted[] {
  let world = 0;
  for (const c of t.comms.values()) world = Math.max(world, c.nranks ?? 0);
  for (const a of t.aborts) world = Math.max(world, a.nranks ?? 0);
  const out = new Map<number, Aborted>();
  for (const a of t.aborts)
    if ((a.nranks ?? 0) === world && !out.has(a.rank)) out.set(a.rank, { rank: a.rank, nranks: world, where: [a.where], process: a.processKey });
  return [...out.values()];
}

type Aborted = { rank: number; nranks: number; where: string[]; process: string };

/** `file:line` → [file, line]. */
function fileLine(where: string): [string, number] {
  const c = where.lastIndexOf(":");
  return [where.slice(0, c), Number(where.slice(c + 1))];
}

/**
 * The aborts a failure's lines vouch for: in a file that holds the failure, after its first line
 * there, of a communicator large enough to hold the ranks the failure names (a split one's numbers
 * are its own). PyTorch also aborts a communicator at a clean exit (ProcessGroupNCCL's destructor):
 * a rank that finished its loop and left before another timed out aborted before that timeout's
 * line, or in a log of its own, and is no part of it.
 */
function afterFailure(aborted: readonly Aborted[], failure: Finding): Aborted[] {
  const top = Math.max(-1, ...failure.ranks);
  const first = new Map<string, number>();
  for (const w of failure.evidence) {
    const [file, line] = fileLine(w);
    first.set(file, Math.min(first.get(file) ?? Infinity, line));
  }
  return aborted.filter((a) => {
    const [file, line] = fileLine(a.where[0] ?? "");
    const from = first.get(file);
    return from !== undefined && line > from && a.nranks > top;
  });
}

/** Evidence lines a joined finding keeps at most. */
const MAX_JOINED_EVIDENCE = 12;

/**
 * PyTorch aborts a rank's communicators after a timeout or an error its watchdog saw, so a rank
 * whose lines show only that abort, after the failure in the same log, failed too (nccl-pasted 389:
 * rank 4 beside the timeouts of ranks 0 and 2). After a timeout, those ranks join it as the
 * aftermath's do; without one, an error that names no rank (`ncclSystemError` with an empty `Last
 * error:`, 412) is theirs, where it is the only PyTorch error found.
 */
function withAbortedRanks(out: Finding[], aborted: readonly Aborted[], timedOut: boolean): void {
  if (aborted.length === 0) return;
  if (timedOut) {
    const timeout = out.find((f) => f.kind === "watchdog_timeout");
    if (timeout !== undefined) withJoined(out, afterFailure(aborted, timeout), watchdogTimeoutWords.aborted);
    return;
  }
  const errors = out.map((f, i) => ({ f, i })).filter(({ f }) => f.kind === "nccl_error" || f.kind === "network_error");
  const only = errors[0];
  if (errors.length !== 1 || only === undefined || only.f.ranks.length > 0) return;
  const f = only.f;
  const mine = afterFailure(aborted, f);
  if (mine.length === 0) return;
  out[only.i] = {
    ...f,
    summary: `${f.summary} ${ncclErrorWords.aborted({ ranks: mine.map((r) => r.rank) })}`,
    ranks: mine.map((r) => r.rank).sort((a, b) => a - b),
    processes: uniq([...f.processes, ...mine.map((r) => r.process)]),
    evidence: [...f.evidence, ...mine.flatMap((r) => r.where.slice(0, 1))].slice(0, MAX_JOINED_EVIDENCE),
  };
}

/**
 * Ranks that printed only the aftermath of a failure (`Some NCCL operations have failed or timed
 * out`, `taking the entire process down`) failed too: where every timeout found is of one process
 * group, they join its finding (the lines that say it among its evidence). Timeouts of several
 * groups: which one they were in is unknown, and nothing is added.
 */
function withAftermathRanks(out: Finding[], ranks: readonly { rank: number; where: string[] }[]): void {
  withJoined(out, ranks, watchdogTimeoutWords.aftermath);
}

/** Ranks joined to the one process group's timeout finding, with the words that say why. */
function withJoined(out: Finding[], ranks: readonly { rank: number; where: string[] }[], words: (f: { ranks: readonly number[] }) => string): void {
  const timeouts = out.map((f, i) => ({ f, i })).filter(({ f }) => f.kind === "watchdog_timeout");
  const first = timeouts[0];
  if (first === undefined || timeouts.some(({ f }) => f.process_group !== first.f.process_group)) return;
  const add = ranks.filter((r) => !timeouts.some(({ f }) => f.ranks.includes(r.rank)));
  if (add.length === 0) return;
  const f = first.f;
  out[first.i] = {
    ...f,
    summary: `${f.summary} ${words({ ranks: add.map((r) => r.rank) })}`,
    ranks: [...f.ranks, ...add.map((r) => r.rank)].sort((a, b) => a - b),
    evidence: [...f.evidence, ...add.flatMap((r) => r.where.slice(0, 1))].slice(0, Math.max(f.evidence.length, MAX_JOINED_EVIDENCE)),
  };
}
