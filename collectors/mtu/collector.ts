/**
 * mtu collector (poll): MTU, link type, operstate and link kind of every network interface.
 *
 * Runs `ip -j -d link show` (netlink read, unprivileged). iproute2 older than JSON support
 * rejects `-j` (`Option "-j" is unknown, try "ip -help".`, exit 255): then it parses
 * `ip -d link show` text instead, and keeps doing so without retrying JSON.
 */
import { CollectorError, type Collector, type CollectorDeps } from "../collector.js";
import type { ToolResult } from "../exec.js";
import { gauge, publishGauge } from "../publish.js";
import { keepDevice } from "./filter.js";
import type { NetLink } from "./link.js";
import { parseIpJson } from "./parse-ip-json.js";
import { parseIpText } from "./parse-ip-text.js";

export interface MtuOptions {
  /** ip binary (--collector.mtu.ip). */
  ip: string;
  /** Report only devices matching this (--collector.mtu.device-include). */
  deviceInclude?: RegExp;
  /** Drop devices matching this (--collector.mtu.device-exclude); default DEFAULT_DEVICE_EXCLUDE. */
  deviceExclude?: RegExp;
  /** Kill ip after this many ms. Default 5,000. */
  timeoutMs?: number;
}

type Source = "ip-json" | "ip-text";

const JSON_ARGS = ["-j", "-d", "link", "show"] as const;
const TEXT_ARGS = ["-d", "link", "show"] as const;
const UNKNOWN_OPTION = /option "-j(son)?" is unknown|unknown option|invalid option|unrecognized option/i;

/** The tool ran and refused the -j option (old iproute2, busybox). */
function rejectsJson(r: ToolResult): boolean {
  return !r.ok && !r.notFound && !r.timedOut && !r.overflowed && r.signal === undefined && UNKNOWN_OPTION.test(`${r.stderr}\n${r.stdout}`);
}

export function createMtuCollector(deps: CollectorDeps, opts: MtuOptions): Collector {
  const { registry, logger, exec } = deps;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const filter = { include: opts.deviceInclude, exclude: opts.deviceExclude };
  let jsonUnsupported = false;

  const mtuBytes = gauge(registry, "ringwatch_network_mtu_bytes", "MTU of the network interface, in bytes.", ["device"]);
  const info = gauge(
    registry,
    "ringwatch_network_info",
    "Network interface identity: link_type (ether, infiniband, loopback, ...) and kernel operstate (UP, DOWN, UNKNOWN, ...); empty when ip did not say. Always 1.",
    ["device", "link_type", "operstate"],
  );
  const kindInfo = gauge(
    registry,
    "ringwatch_network_link_kind_info",
    "Link kind of a virtual or special interface (ipoib, bond, vlan, veth, ...) from ip -d linkinfo. Always 1.",
    ["device", "kind"],
  );
  const sourceInfo = gauge(
    registry,
    "ringwatch_network_source_info",
    "How interfaces were read: ip-json (ip -j -d link show) or ip-text (old iproute2 without -j). Always 1.",
    ["source"],
  );
  const all = [mtuBytes, info, kindInfo, sourceInfo];

  function fail(r: ToolResult): never {
    if (r.notFound) throw new CollectorError(`${opts.ip}: not found`, { absent: true });
    throw new CollectorError(r.problem ?? `${r.command}: failed`);
  }

  async function readText(): Promise<NetLink[]> {
    const r = await exec.run(opts.ip, TEXT_ARGS, { timeoutMs });
    if (!r.ok) fail(r);
    const parsed = parseIpText(r.stdout);
    if (parsed.headers === 0) throw new CollectorError(`${r.command}: output has no interface line`);
    return parsed.links;
  }

  async function readJson(): Promise<NetLink[] | undefined> {
    const r = await exec.run(opts.ip, JSON_ARGS, { timeoutMs });
    if (rejectsJson(r)) return undefined;
    if (!r.ok) fail(r);
    let links: NetLink[];
    try {
      links = parseIpJson(r.stdout);
    } catch (err) {
      throw new CollectorError(`${r.command}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (links.length === 0) throw new CollectorError(`${r.command}: no interface in the output`);
    return links;
  }

  async function read(): Promise<{ source: Source; links: NetLink[] }> {
    if (!jsonUnsupported) {
      const links = await readJson();
      if (links) return { source: "ip-json", links };
      jsonUnsupported = true;
      logger.info({ ip: opts.ip }, "mtu: ip does not support -j (old iproute2); using its text output");
    }
    return { source: "ip-text", links: await readText() };
  }

  function publish(source: Source, links: readonly NetLink[]): void {
    const kept = links.filter((l) => keepDevice(l.device, filter));
    publishGauge(
      mtuBytes,
      kept.filter((l) => l.mtu !== undefined).map((l) => ({ labels: { device: l.device }, value: l.mtu ?? NaN })),
    );
    publishGauge(
      info,
      kept.map((l) => ({
        labels: { device: l.device, link_type: l.linkType ?? "", operstate: l.operstate ?? "" },
        value: 1,
      })),
    );
    publishGauge(
      kindInfo,
      kept.filter((l) => l.kind !== undefined).map((l) => ({ labels: { device: l.device, kind: l.kind ?? "" }, value: 1 })),
    );
    publishGauge(sourceInfo, [{ labels: { source }, value: 1 }]);
  }

  async function update(): Promise<void> {
    let result: { source: Source; links: NetLink[] };
    try {
      result = await read();
    } catch (err) {
      for (const g of all) g.reset();
      if (err instanceof CollectorError) throw err;
      throw new CollectorError(`mtu: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    publish(result.source, result.links);
  }

  return { name: "mtu", mode: "poll", update, once: update };
}
