/** The log lines of a hang the logs call: when it begins (with what the verdict found) and when it ends. */
import type { HangLine } from "../../verdict/hang-transitions.js";
import type { CommVerdict } from "./types.js";

export function commHangLine(v: CommVerdict): HangLine {
  return {
    fields: {
      comm_id: v.commKey,
      silent_seconds: Math.round((v.silentMs ?? 0) / 1000),
      threshold_seconds: Math.round(v.thresholdMs / 1000),
      ranks_behind: v.behind,
      live_ranks: v.liveRanks,
      gpu_signatures: v.gpus.map((g) => `${g.gpu}:${g.signature}`),
    },
    message: `nccl: hang suspected on communicator ${v.commKey}${v.behind.length ? `; rank ${v.behind.join(",")} never entered the collective the others wait in` : ""}`,
  };
}

export function commHangEndedLine(commKey: string): HangLine {
  return { fields: { comm_id: commKey }, message: `nccl: communicator ${commKey} no longer hung` };
}
