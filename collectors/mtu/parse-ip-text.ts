/**
 * Pure parser for iproute2's text output, for old iproute2 without `-j`: `ip link`, `ip -d link`,
 * `ip addr`, and grep'd excerpts that keep only the header lines (`ip a | grep mtu`).
 *
 *   29: mlx5_ib0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 2044 qdisc mq state UP mode DEFAULT ...
 *       link/infiniband 00:00:1f:e4:fe:80:... brd 00:ff:... promiscuity 0 minmtu 68 maxmtu 65520
 *       ipoib pkey  0xffff mode  datagram umcast  0000 addrgenmode none numtxqueues 256 ...
 *
 * With -d the link kind opens the first indented line after the `link/` line; without a kind that
 * line is something else (altname, inet, vf, a `*_slave` line) or absent, so a kind is taken only
 * from that position and only when it is a known link kind.
 */
import { deviceName, MAX_MTU, uniqueByDevice, type NetLink } from "./link.js";

const HEADER = /^(\d+):\s+([^\s:]+):\s+<([^>]*)>(.*)$/;
const LINK_LINE = /^\s+link\/(\S+)/;

/** Link kinds iproute2 prints with -d (ip/iplink_*.c and friends). */
const KINDS = new Set([
  "amt",
  "bareudp",
  "batadv",
  "bond",
  "bridge",
  "can",
  "dsa",
  "dummy",
  "erspan",
  "geneve",
  "gre",
  "gretap",
  "gtp",
  "hsr",
  "ifb",
  "ip6erspan",
  "ip6gre",
  "ip6gretap",
  "ip6tnl",
  "ipip",
  "ipoib",
  "ipvlan",
  "ipvtap",
  "lowpan",
  "macsec",
  "macvlan",
  "macvtap",
  "netdevsim",
  "netkit",
  "nlmon",
  "openvswitch",
  "rmnet",
  "sit",
  "team",
  "tun",
  "vcan",
  "veth",
  "virt_wifi",
  "vlan",
  "vrf",
  "vti",
  "vti6",
  "vxcan",
  "vxlan",
  "wireguard",
  "wwan",
  "xfrm",
]);

/** Value after `key` among whitespace-separated tokens, e.g. `mtu 4092`. */
function after(tokens: readonly string[], key: string): string | undefined {
  const i = tokens.indexOf(key);
  return i >= 0 ? tokens[i + 1] : undefined;
}

/** The kernel's MTU is an unsigned 32-bit int: anything else (400 digits, `1e309`) is not an MTU. */
function mtuValue(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,10}$/.test(text)) return undefined;
  const v = Number(text);
  return v <= MAX_MTU ? v : undefined;
}

export interface IpTextResult {
  links: NetLink[];
  /** Interface header lines seen (0 means the text is not ip output at all). */
  headers: number;
}

export function parseIpText(text: string): IpTextResult {
  const links: NetLink[] = [];
  let current: NetLink | undefined;
  /** Where we are inside the current block: right after its header, right after its link/ line, or past both. */
  let stage: "header" | "link" | "rest" = "rest";

  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    const h = HEADER.exec(line);
    if (h) {
      const tokens = (h[4] ?? "").trim().split(/\s+/);
      const mtu = after(tokens, "mtu");
      current = {
        device: deviceName(h[2] ?? ""),
        mtu: mtuValue(mtu),
        linkType: undefined,
        operstate: after(tokens, "state"),
        kind: undefined,
      };
      links.push(current);
      stage = "header";
      continue;
    }
    if (!current || line.trim() === "") continue;
    const l = LINK_LINE.exec(line);
    if (l && stage === "header") {
      current.linkType = l[1];
      stage = "link";
      continue;
    }
    if (stage === "link" && /^\s/.test(line)) {
      const first = line.trim().split(/\s+/)[0] ?? "";
      if (KINDS.has(first)) current.kind = first;
    }
    stage = "rest";
  }
  return { links: uniqueByDevice(links), headers: links.length };
}
