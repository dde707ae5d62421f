/**
 * Which transport a process's NCCL uses between nodes, judged as the guide says: by channel links
 * (`via NET/Socket`, `via NET/IB/0/GDRDMA`) and `No device found`, not by the bootstrap
 * `NET/Socket : Using` line that old versions print even when IB carries the data.
 */
import type { ProcessState } from "./model.js";

export type NetKind = "IB" | "RoCE" | "Socket" | "none" | "unknown";
export type GdrState = "enabled" | "disabled" | "n/a" | "unknown";

export interface Transport {
  net: NetKind;
  gdr: GdrState;
}

export function transportOf(p: ProcessState): Transport {
  let socketLinks = 0;
  let ibLinks = 0;
  for (const [net, n] of p.netLinks) {
    if (net.startsWith("Socket")) socketLinks += n;
    else if (net.startsWith("IB")) ibLinks += n;
  }
  const ibNamed = p.nets.has("IB") || p.nets.has("RoCE");
  let net: NetKind;
  // A WARN of the NET/Socket plugin (`NET/Socket : message truncated`) is a socket data path too.
  if (socketLinks > 0 || p.evidence.has("socket_warn") || (p.noIbDevice && !ibNamed)) net = "Socket";
  else if (ibLinks > 0 || ibNamed) net = p.nets.has("RoCE") ? "RoCE" : "IB";
  else if (p.netLinks.size === 0 && p.nets.size === 0 && !p.noIbDevice) net = "unknown";
  else net = "none";
  let gdr: GdrState;
  if (net === "Socket") gdr = "n/a";
  else if (p.gdrLinks > 0) gdr = "enabled";
  else if (p.gdrDisabled > 0 && p.gdrEnabled === 0) gdr = "disabled";
  else if (ibLinks > 0)
    gdr = "disabled"; // network links shown, none of them GDRDMA
  else if (p.gdrEnabled > 0) gdr = "enabled";
  else gdr = "unknown";
  return { net, gdr };
}
