/**
 * Every check of `ringwatch check`, in the order they are printed. Their names are a contract
 * (docs/check.md, "Checks"): scripts and alerts match on them.
 */
import type { Expectations } from "./check-expect.js";
import { gdrPeermem, ibPortCount, ibPortRate, ibPortState, ncclRas, netMtu } from "./check-judge-fabric.js";
import { gpuBus, gpuCount } from "./check-judge-gpu.js";
import { gpuRecovery, gpuXid, nvswitchSxid } from "./check-judge-kernel.js";
import type { CheckResult, NodeView, Verdict } from "./check-result.js";

const CHECKS = [
  ["gpu.count", gpuCount],
  ["gpu.bus", gpuBus],
  ["gpu.xid", gpuXid],
  ["gpu.recovery", gpuRecovery],
  ["nvswitch.sxid", nvswitchSxid],
  ["ib.port.state", ibPortState],
  ["ib.port.rate", ibPortRate],
  ["ib.port.count", ibPortCount],
  ["gdr.peermem", gdrPeermem],
  ["net.mtu", netMtu],
  ["nccl.ras", ncclRas],
] as const satisfies ReadonlyArray<readonly [string, (v: NodeView, e: Expectations) => Verdict]>;

export type CheckName = (typeof CHECKS)[number][0];

export const CHECK_NAMES: readonly CheckName[] = CHECKS.map(([name]) => name);

export function judge(v: NodeView, e: Expectations): CheckResult[] {
  return CHECKS.map(([name, check]) => ({ name, ...check(v, e) }));
}
