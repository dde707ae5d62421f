/** RAS's verdicts in the shape every source gives the merge (verdict/verdict.ts, verdict/merge.ts): hangs, and its local ranks behind or not. */
import { liveVerdict, type CommunicatorWatch, type LiveVerdict } from "../verdict/verdict.js";
import type { RasCommVerdict } from "./verdict.js";

export function communicatorVerdicts(verdicts: readonly RasCommVerdict[]): CommunicatorWatch[] {
  return verdicts.map((v) => {
    const ranks = v.local.map((l) => l.rank);
    const behind = new Set(v.behind.map((r) => r.rank));
    const stated: LiveVerdict[] = [];
    if (v.hang) stated.push(liveVerdict("hang_suspected", v.commId, ranks, v.evidence, v.gpus));
    const local = ranks.filter((r) => behind.has(r));
    if (local.length > 0) stated.push(liveVerdict("rank_behind", v.commId, local, ["ras"]));
    return { comm_id: v.commId, judges: ["hang_suspected", "rank_behind"], ranks, thresholdMs: v.thresholdMs, verdicts: stated };
  });
}
