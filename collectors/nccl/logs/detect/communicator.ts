/** The logs' verdicts in the shape every source gives the merge (verdict/verdict.ts, verdict/merge.ts). */
import { liveVerdict, type CommunicatorWatch, type LiveVerdict } from "../../verdict/verdict.js";
import type { TrackedState } from "./verdict.js";
import type { CommVerdict } from "./types.js";

/** Each verdict of a communicator still tracked, over every rank of it the logs know here: the logs judge all four kinds. */
export function communicatorVerdicts(verdicts: readonly CommVerdict[], state: Pick<TrackedState, "comms">): CommunicatorWatch[] {
  const out: CommunicatorWatch[] = [];
  for (const v of verdicts) {
    const comm = state.comms.get(v.commKey);
    if (!comm) continue;
    const ranks = [...comm.ranks.keys()];
    const local = (xs: readonly number[]): number[] => ranks.filter((r) => xs.includes(r));
    const stated: LiveVerdict[] = [];
    if (v.hangSuspected) {
      const evidence = v.gpus.some((g) => g.signature === "spin") ? ["coll_log", "gpu"] : ["coll_log"];
      stated.push(liveVerdict("hang_suspected", v.commKey, ranks, evidence, v.gpus));
    }
    if (local(v.behind).length > 0) stated.push(liveVerdict("rank_behind", v.commKey, local(v.behind), ["coll_log"]));
    if (local(v.stragglers).length > 0) stated.push(liveVerdict("straggler", v.commKey, local(v.stragglers), ["coll_log"]));
    if (v.mismatch) stated.push(liveVerdict("collective_mismatch", v.commKey, ranks, ["coll_log"]));
    out.push({
      comm_id: v.commKey,
      judges: ["hang_suspected", "rank_behind", "straggler", "collective_mismatch"],
      ranks,
      thresholdMs: v.thresholdMs,
      // A rank the straggler window names, held or not yet: a candidate.
      suspect: comm.stragglerHold.size > 0,
      verdicts: stated,
    });
  }
  return out;
}
