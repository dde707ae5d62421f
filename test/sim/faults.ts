/**
 * Scripted faults. Steps and collective indexes are 0-based; a collective index is the position
 * in the step's plan (every rank runs the same plan, each on its own member comm).
 */
import type { WarnKind } from "./events.js";
import type { CollOpName } from "./spec.js";

export type Fault =
  | { type: "rankStopsBeforeCollective"; rank: number; atStep: number; beforeCollIndex: number }
  | { type: "allStallInside"; atStep: number; collIndex: number }
  | { type: "straggler"; rank: number; delayMs: number }
  | { type: "jobExits"; atStep: number; clean: boolean }
  | { type: "graphReplay"; fromStep: number }
  | { type: "mismatch"; rank: number; atStep: number; atCollIndex: number; op: CollOpName; hang: boolean }
  | { type: "socketFallback" }
  | { type: "gdrDisabled" }
  | { type: "warn"; kind: WarnKind; rank: number; atStep: number; peerRank: number | undefined; comm: string }
  | { type: "slowButMoving"; stepMs: number; fromStep: number };

/** No faults. */
export function healthy(): Fault[] {
  return [];
}

/** `rank` never enters collective #beforeCollIndex of `atStep` and writes nothing more; the others write that COLL line, then nothing. */
export function rankStopsBeforeCollective(o: { rank: number; atStep: number; beforeCollIndex: number }): Fault {
  return { type: "rankStopsBeforeCollective", ...o };
}

/** Every rank enters collective #collIndex (default 0) of `atStep`; nobody enters the next one. */
export function allStallInside(o: { atStep: number; collIndex?: number }): Fault {
  return { type: "allStallInside", atStep: o.atStep, collIndex: o.collIndex ?? 0 };
}

/** `rank` enqueues every collective `delayMs` after the others; steps take `delayMs` longer. */
export function straggler(o: { rank: number; delayMs: number }): Fault {
  return { type: "straggler", ...o };
}

/** At the start of `atStep` the job ends: clean = Destroy COMPLETE per comm then silence; else just silence. */
export function jobExits(o: { atStep: number; clean: boolean }): Fault {
  return { type: "jobExits", ...o };
}

/** Step `fromStep` is captured into a CUDA graph (COLL lines printed once); later steps replay it silently. */
export function graphReplay(o: { fromStep: number }): Fault {
  return { type: "graphReplay", ...o };
}

/** `rank` issues `op` instead of the planned collective at (atStep, atCollIndex); by default the job then hangs there. */
export function mismatch(o: { rank: number; atCollIndex: number; op: CollOpName; atStep?: number; hang?: boolean }): Fault {
  return { type: "mismatch", rank: o.rank, atCollIndex: o.atCollIndex, op: o.op, atStep: o.atStep ?? 0, hang: o.hang ?? true };
}

/** Transport becomes the TCP fallback: `NET/IB : No device found.` / `NET/Socket : Using ...` / `via NET/Socket/0`. */
export function socketFallback(): Fault {
  return { type: "socketFallback" };
}

/** GPUDirect RDMA off: `GPU Direct RDMA Disabled for HCA ...`, channel lines without `/GDRDMA`. */
export function gdrDisabled(): Fault {
  return { type: "gdrDisabled" };
}

/** A WARN block on `rank` in the middle of `atStep`; the peer defaults to the first rank of another node. */
export function warn(kind: WarnKind, o: { rank: number; atStep: number; peerRank?: number; comm?: string }): Fault {
  return { type: "warn", kind, rank: o.rank, atStep: o.atStep, peerRank: o.peerRank, comm: o.comm ?? "world" };
}

/** From `fromStep` (default 0) each step takes `stepMs`: long silent gaps while the job still moves. */
export function slowButMoving(o: { stepMs: number; fromStep?: number }): Fault {
  return { type: "slowButMoving", stepMs: o.stepMs, fromStep: o.fromStep ?? 0 };
}
