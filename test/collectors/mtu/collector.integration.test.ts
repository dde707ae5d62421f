import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CollectorDeps } from "../../../collectors/collector.js";
import type { Exec } from "../../../collectors/exec.js";
import { createMtuCollector } from "../../../collectors/mtu/collector.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { fakesDir, makeDeps, series, valueOf } from "./deps.js";
import { byLabel, collectorError, useToolRig, withTimeToStart } from "../../helpers/collector-deps.js";
const IP = join(fakesDir, "ip");
const JSON_IFB = "90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt";
const TEXT_IPOIB = "06-lkml-ip-d-link-mlx5_ib0-ipoib-details-UNATTRIB.txt";

const rig = useToolRig("ringwatch-mtu-");
const calls = rig.calls;
let tmp: string;
let deps: CollectorDeps;
/** Whether ip runs get the time to start (withTimeToStart); a test of the timeout turns it off for the run it tests. */
let timeToStart: boolean;
const timed = (d: CollectorDeps): CollectorDeps => ({ ...d, exec: withTimeToStart(d.exec, () => timeToStart) });

beforeEach(() => {
  timeToStart = true;
  deps = timed(rig.deps());
  tmp = rig.tmp();
});

const mtus = (): Promise<Record<string, number>> => byLabel(deps.registry, "ringwatch_network_mtu_bytes", "device");

describe("mtu collector", () => {
  it("reads ip -j -d link show", async () => {
    vi.stubEnv("FAKE_IP_JSON", JSON_IFB);
    const c = createMtuCollector(deps, { ip: IP });
    expect(c.mode).toBe("poll");
    expect(c.name).toBe("mtu");
    await c.update?.();
    expect(calls()).toEqual(["ip -j -d link show"]);
    expect(await mtus()).toEqual({ lo: 65536, ifb0: 1500, ifb1: 1500, eth0: 1400 });
    expect(await valueOf(deps.registry, "ringwatch_network_info", { device: "eth0", link_type: "ether", operstate: "UP" })).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_network_info", { device: "lo", link_type: "loopback", operstate: "UNKNOWN" })).toBe(1);
    expect(await series(deps.registry, "ringwatch_network_info")).toHaveLength(4);
    expect(await series(deps.registry, "ringwatch_network_link_kind_info")).toEqual([
      { labels: { device: "ifb0", kind: "ifb" }, value: 1 },
      { labels: { device: "ifb1", kind: "ifb" }, value: 1 },
    ]);
    expect(await series(deps.registry, "ringwatch_network_source_info")).toEqual([{ labels: { source: "ip-json" }, value: 1 }]);
  });

  it("reads pretty-printed JSON; the overlay device is excluded by default", async () => {
    vi.stubEnv("FAKE_IP_JSON", "07-usernetes-azure-ip-json-pretty-flannel.txt");
    const byDefault = createMtuCollector(deps, { ip: IP });
    await byDefault.once();
    expect(await mtus()).toEqual({});
    deps = timed(makeDeps());
    const everything = createMtuCollector(deps, { ip: IP, deviceExclude: /^$/ });
    await everything.once();
    expect(await mtus()).toEqual({ "flannel.1": 1450 });
    expect(await valueOf(deps.registry, "ringwatch_network_info", { device: "flannel.1", link_type: "ether", operstate: "UNKNOWN" })).toBe(1);
    expect(await series(deps.registry, "ringwatch_network_link_kind_info")).toEqual([]);
  });

  it("old iproute2 without -j: falls back to ip -d link show, and stops asking for JSON", async () => {
    vi.stubEnv("FAKE_IP_MODE", "no-json");
    vi.stubEnv("FAKE_IP_JSON", JSON_IFB); // must not be used
    vi.stubEnv("FAKE_IP_TEXT", TEXT_IPOIB);
    const c = createMtuCollector(deps, { ip: IP });
    await c.update?.();
    expect(calls()).toEqual(["ip -j -d link show", "ip -d link show"]);
    expect(await mtus()).toEqual({ mlx5_ib0: 2044 });
    expect(await series(deps.registry, "ringwatch_network_info")).toEqual([
      { labels: { device: "mlx5_ib0", link_type: "infiniband", operstate: "UP" }, value: 1 },
    ]);
    expect(await series(deps.registry, "ringwatch_network_link_kind_info")).toEqual([{ labels: { device: "mlx5_ib0", kind: "ipoib" }, value: 1 }]);
    expect(await valueOf(deps.registry, "ringwatch_network_source_info", { source: "ip-text" })).toBe(1);
    await c.update?.();
    expect(calls()).toEqual(["ip -j -d link show", "ip -d link show", "ip -d link show"]);
  });

  it("text fallback on an ip addr capture: IPoIB 4092 next to Ethernet 1500", async () => {
    vi.stubEnv("FAKE_IP_MODE", "no-json");
    vi.stubEnv("FAKE_IP_TEXT", "02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt");
    const c = createMtuCollector(deps, { ip: IP });
    await c.update?.();
    expect(await mtus()).toEqual({ lo: 65536, eth0: 1500, enP27815s1: 1500, ibP257s71127: 4092, docker0: 1500 });
    expect(await valueOf(deps.registry, "ringwatch_network_info", { device: "ibP257s71127", link_type: "infiniband", operstate: "DOWN" })).toBe(1);
  });

  it("grep'd header lines without link/ lines: empty link_type label", async () => {
    vi.stubEnv("FAKE_IP_MODE", "no-json");
    vi.stubEnv("FAKE_IP_TEXT", "05-trinity-187-old-iproute-ip-a-grep-mtu-ib0-4092.txt");
    const c = createMtuCollector(deps, { ip: IP });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_network_mtu_bytes", { device: "ib0" })).toBe(4092);
    expect(await valueOf(deps.registry, "ringwatch_network_info", { device: "ib0", link_type: "", operstate: "DOWN" })).toBe(1);
  });

  it("applies device include and exclude to every metric", async () => {
    vi.stubEnv("FAKE_IP_JSON", JSON_IFB);
    const c = createMtuCollector(deps, { ip: IP, deviceInclude: /^(eth|ifb)/, deviceExclude: /^ifb1$/ });
    await c.update?.();
    expect(await mtus()).toEqual({ ifb0: 1500, eth0: 1400 });
    expect((await series(deps.registry, "ringwatch_network_info")).map((s) => s.labels.device)).toEqual(["ifb0", "eth0"]);
    expect((await series(deps.registry, "ringwatch_network_link_kind_info")).map((s) => s.labels.device)).toEqual(["ifb0"]);
  });

  it("a hung ip is killed by the timeout; the failure withdraws earlier series", async () => {
    vi.stubEnv("FAKE_IP_JSON", JSON_IFB);
    const c = createMtuCollector(deps, { ip: IP, timeoutMs: 300 });
    await c.update?.(); // with the time to start: it must answer
    expect(Object.keys(await mtus())).toHaveLength(4);
    vi.stubEnv("FAKE_IP_MODE", "hang");
    timeToStart = false; // the collector's 300 ms
    const t0 = Date.now();
    const err = await collectorError(c.update!());
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/timed out/);
    expect(deps.exec.running()).toBe(0);
    expect(await mtus()).toEqual({});
    expect(await series(deps.registry, "ringwatch_network_info")).toEqual([]);
    expect(await series(deps.registry, "ringwatch_network_source_info")).toEqual([]);
  });

  it("a hang is not mistaken for old iproute2 (no text fallback)", async () => {
    vi.stubEnv("FAKE_IP_MODE", "hang");
    timeToStart = false; // the collector's 300 ms
    // The runs as the collector asked for them: one killed at 300 ms may not have started, and so
    // not logged its call (calls()), on a busy machine; a timeout is a timeout either way.
    const ran: string[] = [];
    const exec: Exec = {
      ...deps.exec,
      run: (file, args, o) => {
        ran.push(["ip", ...args].join(" "));
        return deps.exec.run(file, args, o);
      },
    };
    const c = createMtuCollector({ ...deps, exec }, { ip: IP, timeoutMs: 300 });
    const err = await collectorError(c.update!());
    expect(err.message).toMatch(/timed out/);
    expect(ran).toEqual(["ip -j -d link show"]);
  });

  it("a missing ip binary is absent", async () => {
    const c = createMtuCollector(deps, { ip: join(tmp, "no-such-ip") });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(true);
  });

  it("garbled JSON output is a failure", async () => {
    vi.stubEnv("FAKE_IP_MODE", "garble");
    const c = createMtuCollector(deps, { ip: IP });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/ip JSON/);
  });

  it("text output that is not ip's is a failure", async () => {
    vi.stubEnv("FAKE_IP_MODE", "no-json");
    vi.stubEnv("FAKE_IP_TEXT", join(fixturesDir, "tools", "lsmod", "03-gpud-pr39-lsmod-peermem-h100.txt"));
    const c = createMtuCollector(deps, { ip: IP });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/no interface line/);
  });

  it("an empty JSON array is a failure (every namespace has lo)", async () => {
    const file = join(tmp, "empty.txt");
    writeFileSync(file, "# source: synthetic\n[]\n");
    vi.stubEnv("FAKE_IP_JSON", file);
    const c = createMtuCollector(deps, { ip: IP });
    const err = await collectorError(c.update!());
    expect(err.message).toMatch(/no interface/);
  });

  it("another ip error is a failure, not a reason to try text", async () => {
    // FAKE_IP_JSON unset: the fake exits 2 with a message that is not an unknown-option error
    const c = createMtuCollector(deps, { ip: IP });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/exit code 2/);
    expect(calls()).toEqual(["ip -j -d link show"]);
  });
});
