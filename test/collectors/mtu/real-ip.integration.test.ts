/**
 * The mtu collector with the real `ip` of this machine (iproute2, from the PATH), through the real
 * process runner (createExec): what every Linux machine has (the loopback), and every device that
 * `ip -j -d link show` lists, compared with this test's own reading of that JSON. Skipped (and
 * said) without ip on a developer machine; with CI set a missing ip is a failure.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createMtuCollector } from "../../../collectors/mtu/collector.js";
import { DEFAULT_DEVICE_EXCLUDE } from "../../../collectors/mtu/filter.js";
import { gate } from "../../deploy/binaries.js";
import { makeDeps, series } from "./deps.js";

const tools = gate(["ip"]);

interface IpLink {
  ifname: string;
  mtu?: number;
  link_type?: string;
  operstate?: string;
  linkinfo?: { info_kind?: string };
}

/** What this machine's ip says, read here independently of the collector's parser. */
function ipLinks(ip: string): IpLink[] {
  return JSON.parse(execFileSync(ip, ["-j", "-d", "link", "show"], { encoding: "utf8" })) as IpLink[];
}

describe.skipIf(tools.skip)(`mtu collector with the real ip${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  it("ip is installed", () => {
    expect(tools.missing, tools.message).toEqual([]);
  });

  it.skipIf(tools.fail)("publishes the loopback as every Linux machine has it: lo, mtu 65536, loopback, UNKNOWN", async () => {
    const deps = makeDeps();
    const c = createMtuCollector(deps, { ip: tools.path.ip });
    await c.update?.();
    const mtu = await series(deps.registry, "ringwatch_network_mtu_bytes");
    expect(mtu.find((s) => s.labels.device === "lo")?.value).toBe(65536);
    const info = await series(deps.registry, "ringwatch_network_info");
    expect(info.filter((s) => s.labels.device === "lo")).toEqual([{ labels: { device: "lo", link_type: "loopback", operstate: "UNKNOWN" }, value: 1 }]);
    expect(await series(deps.registry, "ringwatch_network_source_info")).toEqual([{ labels: { source: "ip-json" }, value: 1 }]);
  });

  it.skipIf(tools.fail)("publishes every device ip lists, with its mtu, link type, operstate and kind (no device left out)", async () => {
    const deps = makeDeps();
    const c = createMtuCollector(deps, { ip: tools.path.ip, deviceExclude: /(?!)/ }); // exclude nothing
    await c.update?.();
    const links = ipLinks(tools.path.ip);
    expect(links.length).toBeGreaterThan(0);
    const byDevice = <T>(xs: T[], key: (x: T) => string): T[] => [...xs].sort((a, b) => key(a).localeCompare(key(b)));
    const mtu = await series(deps.registry, "ringwatch_network_mtu_bytes");
    expect(byDevice(mtu, (s) => String(s.labels.device))).toEqual(
      byDevice(
        links.filter((l) => l.mtu !== undefined),
        (l) => l.ifname,
      ).map((l) => ({ labels: { device: l.ifname }, value: l.mtu })),
    );
    const info = await series(deps.registry, "ringwatch_network_info");
    expect(byDevice(info, (s) => String(s.labels.device))).toEqual(
      byDevice(links, (l) => l.ifname).map((l) => ({ labels: { device: l.ifname, link_type: l.link_type ?? "", operstate: l.operstate ?? "" }, value: 1 })),
    );
    const kinds = await series(deps.registry, "ringwatch_network_link_kind_info");
    expect(byDevice(kinds, (s) => String(s.labels.device))).toEqual(
      byDevice(
        links.filter((l) => l.linkinfo?.info_kind !== undefined),
        (l) => l.ifname,
      ).map((l) => ({ labels: { device: l.ifname, kind: l.linkinfo?.info_kind }, value: 1 })),
    );
  });

  it.skipIf(tools.fail)("with the default filter, every device but the per-pod and overlay ones", async () => {
    const deps = makeDeps();
    const c = createMtuCollector(deps, { ip: tools.path.ip });
    await c.update?.();
    const want = ipLinks(tools.path.ip)
      .map((l) => l.ifname)
      .filter((d) => !DEFAULT_DEVICE_EXCLUDE.test(d))
      .sort();
    expect(want).toContain("lo");
    const got = (await series(deps.registry, "ringwatch_network_info")).map((s) => String(s.labels.device)).sort();
    expect(got).toEqual(want);
  });
});
