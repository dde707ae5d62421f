/** Inspector's verdicts in the shape every source gives the merge (verdict/merge.ts): the stragglers of its active communicators. */
import type { CommunicatorVerdict } from "../verdict/merge.js";
import type { InspectorSnapshot } from "./types.js";

export function communicatorVerdicts(snapshot: InspectorSnapshot | undefined): CommunicatorVerdict[] {
  return (snapshot?.comms ?? [])
    .filter((c) => c.active)
    .map((c) => ({
      commId: c.commId,
      evidence: [],
      ranks: c.ranks.map((r) => ({ rank: r.rank, straggler: r.straggler })),
      gpus: [],
      // A rank the straggler comparison names, or a bandwidth drop: its ranks' series are shown.
      suspect: c.straggler !== undefined || c.bandwidthDrop,
    }));
}
