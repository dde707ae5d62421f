/**
 * Which transport a process's NCCL uses between nodes, judged as the guide says: by channel links
 * (`via NET/Socket`, `via NET/IB/0/GDRDMA`), `No device found` and a missing libibverbs, not by the bootstrap
 * `NET/Socket : Using` line that old versions print even when IB carries the data.
 */
import type { ProcessState, WarningRecord } from "./model.js";

export type NetKind = "IB" | "RoCE" | "Socket" | "none" | "unknown";
export type GdrState = "enabled" | "disabled" | "n/a" | "unknown";

export interface Transport {
  net: NetKind;
  gdr: GdrState;
}

/**
 * The WARN that libibverbs could not be loaded (`Failed to open libibverbs.so[.1]`, a WARN to NCCL
 * 2.18): NCCL has no IB transport in this process. Undefined when none of its kept WARNs says so.
 */
export function ibVerbsMissing(p: ProcessState): WarningRecord | undefined {
  return p.warnings.find((w) => w.kind === "ib_unavailable");
}

export function transportOf(p: ProcessState): Transport {
  let socketLinks = 0;
  let ibLinks = 0;
  let otherLinks = 0;
  for (const [net, n] of p.netLinks) {
    if (net.startsWith("Socket")) socketLinks += n;
    else if (net.startsWith("IB")) ibLinks += n;
    else otherLinks += n;
  }
  const ibNamed = p.nets.has("IB") || p.nets.has("RoCE");
  // No libibverbs, and no other network (a net plugin) named or linked: NET/Socket is all that is left.
  const noVerbs = (): boolean =>
    !ibNamed && ibLinks === 0 && otherLinks === 0 && (p.nets.size === 0 || (p.nets.size === 1 && p.nets.has("Socket"))) && ibVerbsMissing(p) !== undefined;
  let net: NetKind;
  // A WARN of the NET/Socket plugin (`NET/Socket : message truncated`) is a socket data path too.
  if (socketLinks > 0 || p.evidence.has("socket_warn") || (p.noIbDevice && !ibNamed) || noVerbs()) net = "Socket";
  else if (ibLinks > 0 || ibNamed) net = p.nets.has("RoCE") ? "RoCE" : "IB";
  else if (p.netLinks.size === 0 && p.nets.size === 0 && !p.noIbDevice) net = "unknown";
  else net = "none";
  let gdr: GdrState;
  if (net === "Socket") gdr = "n/a";
  else if (p.gdrLinks > 0) gdr = "enabled";
  // An HCA that can (`Enabled for HCA 0`) beside its GPU that does not (`Disabled for GPU 81000 / HCA 0 (distance 6 > 4)`): off.
  else if (p.gdrDisabled > 0 && p.gdrEnabledGpu === 0) gdr = "disabled";
  else if (ibLinks > 0)
    gdr = "disabled"; // network links shown, none of them GDRDMA
  else if (p.gdrEnabled > 0) gdr = "enabled";
  else gdr = "unknown";
  return { net, gdr };
}

/**
 * `Using network Socket` (NCCL_NET=Socket, or a net plugin that failed) with no IB named and no
 * channel through another network: the network NCCL would use between nodes. Not a transport by
 * itself (a single-node job prints it and moves nothing over it): analyze's socket finding weighs it
 * with the hosts its logs show (findings/transport.ts).
 */
export function socketPicked(p: ProcessState): boolean {
  if (p.selectedNet !== "Socket" || p.nets.has("IB") || p.nets.has("RoCE")) return false;
  for (const net of p.netLinks.keys()) if (!net.startsWith("Socket")) return false;
  return true;
}
