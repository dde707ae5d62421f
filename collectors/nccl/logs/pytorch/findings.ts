/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { pytorchErrorFindings } from "./findings-errors.js";
import { processGroupFindings } from "./findings-groups.js";
import type { Finding } from "../../verdict/report.js";
import { rankBehind } from "../../verdict/finding.js";
import { rankBehindWords } from "../../verdict/words.js";

/** Every rank the logs' communicators name (for "which rank did not report"). */
export function knownRanks(t: Tracker): Set<number> {
  let world: number[] = [];
  for (const c of t.comms.values()) if (c.ranks.size > world.length) world = [...c.ranks.keys()];
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
  out.push(...pytorchErrorFindings(t.pt));
  return out;
}
