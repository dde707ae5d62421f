/** The logs' verdicts in the shape every source gives the merge (verdict/merge.ts). */
import type { CommunicatorVerdict } from "../../verdict/merge.js";
import type { TrackedState } from "./verdict.js";
import type { CommVerdict } from "./types.js";

/** Each verdict of a communicator still tracked, over every rank of it the logs know here. */
export function communicatorVerdicts(verdicts: readonly CommVerdict[], state: Pick<TrackedState, "comms">): CommunicatorVerdict[] {
  const out: CommunicatorVerdict[] = [];
  for (const v of verdicts) {
    const comm = state.comms.get(v.commKey);
    if (!comm) continue;
    out.push({
      commId: v.commKey,
      hang: v.hangSuspected,
      evidence: v.hangSuspected ? (v.gpus.some((g) => g.signature === "spin") ? ["coll_log", "gpu"] : ["coll_log"]) : [],
      thresholdMs: v.thresholdMs,
      ranks: [...comm.ranks.keys()].map((rank) => ({ rank, behind: v.behind.includes(rank), straggler: v.stragglers.includes(rank) })),
      mismatch: v.mismatch,
      gpus: v.gpus,
      // A rank the straggler window names, held or not yet: a candidate.
      suspect: comm.stragglerHold.size > 0,
    });
  }
  return out;
}
