/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { pytorchErrorFindings } from "./findings-errors.js";
import { processGroupFindings } from "./findings-groups.js";
import { rankList, type Finding } from "../../verdict/report.js";

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
    if (d.what === "finished_not_joined" && d.ranks && d.ranks.length > 0) {
      const seq = d.nextSeq ?? (d.seq !== undefined ? d.seq + 1 : undefined);
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary: `PyTorch's desync report: rank ${rankList(d.ranks)} finished collective #${d.seq ?? "?"} but never joined #${seq ?? "?"}; the other ranks wait for it. Look at what that rank does after collective #${d.seq ?? "?"}.`,
        ranks: [...d.ranks].sort((a, b) => a - b),
        processes: [],
        comm_id: null,
        evidence: [d.where],
        ...(seq !== undefined ? { seq } : {}),
      });
    } else if ((d.what === "never_joined" || d.what === "missing_ranks") && d.ranks && d.ranks.length > 0) {
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary: `PyTorch's desync report: rank ${rankList(d.ranks)} did not join collective #${d.seq ?? "?"}; the other ranks wait for it.`,
        ranks: [...d.ranks].sort((a, b) => a - b),
        processes: [],
        comm_id: null,
        evidence: [d.where],
        ...(d.seq !== undefined ? { seq: d.seq } : {}),
      });
    }
  }
  out.push(...pytorchErrorFindings(t.pt));
  return out;
}
