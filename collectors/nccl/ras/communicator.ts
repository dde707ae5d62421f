/** RAS's verdicts in the shape every source gives the merge (verdict/merge.ts): its local ranks, behind or not. */
import type { CommunicatorVerdict } from "../verdict/merge.js";
import type { RasCommVerdict } from "./verdict.js";

export function communicatorVerdicts(verdicts: readonly RasCommVerdict[]): CommunicatorVerdict[] {
  return verdicts.map((v) => {
    const behind = new Set(v.behind.map((r) => r.rank));
    return {
      commId: v.commId,
      hang: v.hang,
      evidence: v.hang ? v.evidence : [],
      thresholdMs: v.thresholdMs,
      ranks: v.local.map((l) => ({ rank: l.rank, behind: behind.has(l.rank) })),
      gpus: v.gpus,
    };
  });
}
