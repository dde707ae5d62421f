/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { aftermathOnly, pytorchErrorFindings } from "./findings-errors.js";
import { processGroupFindings } from "./findings-groups.js";
import type { Finding } from "../../verdict/report.js";
import { rankBehind } from "../../verdict/finding.js";
import { rankBehindWords, watchdogTimeoutWords } from "../../verdict/words.js";

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
  const timedOut =
    t.pt.watchdogs.length > 0 ||
    t.pt.workStatus.some((s) => s.from === "status" && s.failedSeq !== undefined) ||
    out.some((f) => f.kind === "watchdog_timeout");
  out.push(...pytorchErrorFindings(t.pt, timedOut));
  if (timedOut) withAftermathRanks(out, aftermathOnly(t.pt));
  return out;
}

/**
 * Ranks that printed only the aftermath of a failure (`Some NCCL operations have failed or timed
 * out`, `taking the entire process down`) failed too: where every timeout found is of one process
 * group, they join its finding (the lines that say it among its evidence). Timeouts of several
 * groups: which one they were in is unknown, and nothing is added.
 */
function withAftermathRanks(out: Finding[], ranks: readonly { rank: number; where: string[] }[]): void {
  const timeouts = out.map((f, i) => ({ f, i })).filter(({ f }) => f.kind === "watchdog_timeout");
  const first = timeouts[0];
  if (first === undefined || timeouts.some(({ f }) => f.process_group !== first.f.process_group)) return;
  const add = ranks.filter((r) => !timeouts.some(({ f }) => f.ranks.includes(r.rank)));
  if (add.length === 0) return;
  const f = first.f;
  out[first.i] = {
    ...f,
    summary: `${f.summary} ${watchdogTimeoutWords.aftermath({ ranks: add.map((r) => r.rank) })}`,
    ranks: [...f.ranks, ...add.map((r) => r.rank)].sort((a, b) => a - b),
    evidence: [...f.evidence, ...add.flatMap((r) => r.where.slice(0, 1))],
  };
}
