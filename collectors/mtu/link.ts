/** One network interface as `ip` reports it; shared by the JSON and text parsers. */
export interface NetLink {
  /** Interface name without any `@peer` suffix (`eth0@if12` → `eth0`). */
  device: string;
  /** MTU in bytes; undefined when the source did not print one. */
  mtu: number | undefined;
  /** `ether`, `infiniband`, `loopback`, `none`, ...; undefined when not printed (grep'd excerpts). */
  linkType: string | undefined;
  /** Kernel operstate as printed: `UP`, `DOWN`, `UNKNOWN`, `LOWERLAYERDOWN`, ...; undefined when absent. */
  operstate: string | undefined;
  /** linkinfo kind (`ipoib`, `bond`, `vlan`, `veth`, ...); only `-d` output has it. */
  kind: string | undefined;
}

/** The kernel keeps an MTU in an unsigned 32-bit int: a larger number is not an MTU. */
export const MAX_MTU = 4_294_967_295;

/** `eth0@if12` → `eth0`, `ib0.8001@ib0` → `ib0.8001`. */
export function deviceName(ifname: string): string {
  const at = ifname.indexOf("@");
  return at > 0 ? ifname.slice(0, at) : ifname;
}

/** Keeps the first entry per device (an `ip addr | grep` excerpt can repeat one). */
export function uniqueByDevice(links: readonly NetLink[]): NetLink[] {
  const seen = new Set<string>();
  return links.filter((l) => (seen.has(l.device) ? false : (seen.add(l.device), true)));
}
