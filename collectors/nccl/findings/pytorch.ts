/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { processGroupFindings } from "./pytorch-groups.js";
import { rankList, uniq, type Finding } from "./report.js";


/** Every rank the logs' communicators name (for "which rank did not report"). */
function knownRanks(t: Tracker): Set<number> {
  let world: number[] = [];
  for (const c of t.comms.values()) if (c.ranks.size > world.length) world = [...c.ranks.keys()];
  return new Set(world);
}

export function pytorchFindings(t: Tracker): Finding[] {
  const out = processGroupFindings(t, knownRanks(t));
  // TORCH_NCCL_DESYNC_DEBUG / Flight Recorder: ranks that never joined collective #N.
  let frSeq: number | undefined; // Flight Recorder prints the sequence and the missing ranks on separate lines
  for (const d of t.desync) {
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
  // PyTorch error lines come in bursts (DistBackendError, its reason, the NCCL error): one finding per rank.
  const byRank = new Map<string, typeof t.ptErrors>();
  for (const e of t.ptErrors) byRank.set(String(e.rank ?? "?"), [...(byRank.get(String(e.rank ?? "?")) ?? []), e]);
  for (const [rank, es] of byRank) {
    const texts = uniq(es.map((e) => e.text ?? e.what.replace(/_/g, " ")));
    const peer = es.find((e) => e.peer)?.peer;
    out.push({
      kind: peer ? "network_error" : "nccl_error",
      severity: "critical",
      summary: `PyTorch reported an NCCL failure${rank !== "?" ? ` on rank ${rank}` : ""}: ${texts.join("; ")}${peer ? ` (the last error points at peer ${peer})` : ""}.`,
      ranks: rank !== "?" ? [Number(rank)] : [],
      processes: uniq(es.map((e) => e.processKey).filter((p): p is string => p !== undefined)),
      comm_id: null,
      evidence: es.map((e) => e.where).slice(0, 5),
      ...(peer ? { peer } : {}),
    });
  }
  return out;
}
