/**
 * Pure parser for iproute2's JSON (`ip -j [-d] link show`, `ip -j addr show`; compact or
 * `-pretty`). Uses ifname, mtu, link_type, operstate and, with -d, linkinfo.info_kind.
 * Entries without an ifname (old iproute2 printed `{}` for filtered links) are skipped.
 * Throws on text that is not a JSON array.
 */
import { deviceName, MAX_MTU, uniqueByDevice, type NetLink } from "./link.js";

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

function entry(v: unknown): NetLink | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const ifname = str(o.ifname);
  if (ifname === undefined) return undefined;
  const linkinfo = typeof o.linkinfo === "object" && o.linkinfo !== null ? (o.linkinfo as Record<string, unknown>) : {};
  const mtu = typeof o.mtu === "number" && Number.isInteger(o.mtu) && o.mtu >= 0 && o.mtu <= MAX_MTU ? o.mtu : undefined;
  return {
    device: deviceName(ifname),
    mtu,
    linkType: str(o.link_type),
    operstate: str(o.operstate),
    kind: str(linkinfo.info_kind),
  };
}

export function parseIpJson(text: string): NetLink[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`ip JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (!Array.isArray(data)) throw new Error("ip JSON: top level is not an array");
  const links: NetLink[] = [];
  for (const v of data) {
    const l = entry(v);
    if (l) links.push(l);
  }
  return uniqueByDevice(links);
}
