/** A node for RAS verdicts (collectors/nccl/ras/verdict.ts) in tests and the bench: no procfs, no GPU collector. */
import type { RasNode } from "../../collectors/nccl/ras/verdict.js";

/** This node holds `addresses`; every pid is alive; no GPU readings, logs or loopback service unless overridden. */
export function stubRasNode(addresses: readonly string[], over: Partial<RasNode> = {}): RasNode {
  return {
    isLocal: (h) => addresses.includes(h),
    alive: () => true,
    gpu: () => undefined,
    spinHeldMs: () => 0,
    loggedHere: () => undefined,
    rasIsLocal: false,
    ...over,
  };
}
