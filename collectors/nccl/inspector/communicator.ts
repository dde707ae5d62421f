/** Inspector's verdicts in the shape every source gives the merge (verdict/verdict.ts, verdict/merge.ts): the stragglers of its active communicators. */
import { liveVerdict, type CommunicatorWatch } from "../verdict/verdict.js";
import type { InspectorSnapshot } from "./types.js";

export function communicatorVerdicts(snapshot: InspectorSnapshot | undefined): CommunicatorWatch[] {
  return (snapshot?.comms ?? [])
    .filter((c) => c.active)
    .map((c) => {
      const stragglers = c.ranks.filter((r) => r.straggler).map((r) => r.rank);
      return {
        comm_id: c.commId,
        judges: ["straggler"],
        ranks: c.ranks.map((r) => r.rank),
        // A rank the straggler comparison names, or a bandwidth drop: its ranks' series are shown.
        suspect: c.straggler !== undefined || c.bandwidthDrop,
        verdicts: stragglers.length > 0 ? [liveVerdict("straggler", c.commId, stragglers, ["inspector"])] : [],
      };
    });
}
