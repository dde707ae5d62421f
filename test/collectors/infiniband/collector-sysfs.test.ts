import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CollectorError } from "../../../collectors/collector.js";
import type { Exec } from "../../../collectors/exec.js";
import { createInfinibandCollector, deviceFilter, type InfinibandOptions } from "../../../collectors/infiniband/collector.js";
import { makeDeps } from "../../helpers/collector-deps.js";
import { exposed, fixedNow, portsOf, valueOf } from "./helpers.js";
import { parsePromText } from "../../helpers/exposition.js";
import { GPUD_DUMP, makeTree, PROCFS_TTAR, type Tree } from "./trees.js";

let tree: Tree;
beforeEach(() => {
  tree = makeTree(GPUD_DUMP);
});
afterEach(() => tree.remove());

const IB8 = ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"];

/** An Exec that must not be used (sysfs needs no fork). */
function noExec(calls: string[]): Exec {
  const fail = (what: string): never => {
    calls.push(what);
    throw new Error(`unexpected ${what}`);
  };
  return { run: (f) => fail(`run ${f}`), stream: (f) => fail(`stream ${f}`), killAll: () => Promise.resolve(), running: () => 0 };
}

function make(opts: Partial<InfinibandOptions> = {}, calls: string[] = []) {
  const deps = makeDeps({ exec: noExec(calls), now: fixedNow });
  const collector = createInfinibandCollector(deps, {
    sysfsRoot: tree.root,
    source: "auto",
    ibstat: "/nonexistent/ibstat",
    perfquery: "/nonexistent/perfquery",
    ...opts,
  });
  return { deps, collector };
}

describe("sysfs source on gpud's H100 tree", () => {
  it("auto picks sysfs, forks nothing, and publishes states, rates, info and counters", async () => {
    const calls: string[] = [];
    const { deps, collector } = make({}, calls);
    expect(collector.mode).toBe("poll");
    expect(collector.name).toBe("infiniband");
    await collector.update?.();
    expect(calls).toEqual([]);
    const s = await exposed(deps);
    expect(portsOf(s)).toEqual([...IB8, "mlx5_bond_0"].map((d) => `${d}/1`));
    const p = { device: "mlx5_0", port: "1" };
    expect(valueOf(s, "state_id", p)).toBe(4);
    expect(valueOf(s, "physical_state_id", p)).toBe(5);
    expect(valueOf(s, "rate_bytes_per_second", p)).toBe(50e9);
    expect(valueOf(s, "rate_bytes_per_second", { device: "mlx5_bond_0", port: "1" })).toBe(25e9);
    expect(valueOf(s, "info", { ...p, link_layer: "InfiniBand", board_id: "MT_0000000838", firmware_version: "28.41.1000", hca_type: "MT4129" })).toBe(1);
    expect(valueOf(s, "port_data_received_bytes_total", p)).toBe(230539874932483 * 4);
    expect(valueOf(s, "port_data_transmitted_bytes_total", p)).toBe(230442669431839 * 4);
    expect(valueOf(s, "port_errors_received_total", p)).toBe(14);
    expect(valueOf(s, "port_receive_switch_relay_errors_total", p)).toBe(1);
    expect(valueOf(s, "port_transmit_wait_total", p)).toBe(2489603687);
    expect(valueOf(s, "rx_write_requests_total", p)).toBe(3809045607);
    expect(valueOf(s, "roce_adp_retrans_total", p)).toBe(3);
    expect(s.some((x) => x.name === "ringwatch_infiniband_hw_counters_total")).toBe(false);
    expect(valueOf(s, "counters_unreadable", p)).toBe(0);
    const types = parsePromText(await deps.registry.metrics()).types;
    expect(types.get("ringwatch_infiniband_symbol_error_total")).toBe("counter");
    expect(types.get("ringwatch_infiniband_rx_write_requests_total")).toBe("counter");
    expect(types.get("ringwatch_infiniband_state_id")).toBe("gauge");
  });

  it("flags fixed-width counters sitting at their maximum (4-bit 15, 8-bit 255)", async () => {
    const { deps, collector } = make();
    await collector.once();
    const sat = (await exposed(deps)).filter((x) => x.name === "ringwatch_infiniband_counters_saturated");
    const on = sat.filter((x) => x.value === 1).map((x) => `${x.labels.device}:${x.labels.counter}`);
    expect(on.sort()).toEqual([...[...IB8, "mlx5_bond_0"].map((d) => `${d}:excessive_buffer_overrun_errors`), "mlx5_1:link_downed"].sort());
    expect(sat.find((x) => x.labels.device === "mlx5_0" && x.labels.counter === "symbol_error")?.value).toBe(0);
    expect(sat.some((x) => x.labels.counter === "unicast_rcv_packets")).toBe(false);
  });

  it("device include / exclude select HCAs", async () => {
    const inc = make({ deviceInclude: /^mlx5_[01]$/g });
    await inc.collector.update?.();
    await inc.collector.update?.();
    expect(portsOf(await exposed(inc.deps))).toEqual(["mlx5_0/1", "mlx5_1/1"]);
    const exc = make({ deviceExclude: /bond/ });
    await exc.collector.update?.();
    expect(portsOf(await exposed(exc.deps))).toEqual(IB8.map((d) => `${d}/1`));
  });

  it("series of a vanished device or counter file disappear on the next update", async () => {
    const { deps, collector } = make();
    await collector.update?.();
    expect(valueOf(await exposed(deps), "symbol_error_total", { device: "mlx5_1", port: "1" })).toBe(0);
    rmSync(join(tree.root, "class/infiniband/mlx5_9"), { recursive: true });
    rmSync(join(tree.root, "class/infiniband/mlx5_1/ports/1/counters/symbol_error"));
    await collector.update?.();
    const s = await exposed(deps);
    expect(portsOf(s)).not.toContain("mlx5_9/1");
    expect(s.some((x) => x.labels.device === "mlx5_9")).toBe(false);
    expect(valueOf(s, "symbol_error_total", { device: "mlx5_1", port: "1" })).toBeUndefined();
    expect(valueOf(s, "link_downed_total", { device: "mlx5_1", port: "1" })).toBe(255);
  });

  it("node_guid joins the info labels when sysfs has it (procfs tree)", async () => {
    const procfs = makeTree(PROCFS_TTAR);
    try {
      const deps = makeDeps({ exec: noExec([]), now: fixedNow });
      const c = createInfinibandCollector(deps, { sysfsRoot: procfs.root, source: "sysfs", ibstat: "x", perfquery: "y" });
      await c.update?.();
      const info = (await exposed(deps)).find((x) => x.name === "ringwatch_infiniband_info" && x.labels.device === "mlx5_0");
      expect(info?.labels).toEqual({
        device: "mlx5_0",
        port: "1",
        link_layer: "InfiniBand",
        board_id: "SM_2001000001034",
        firmware_version: "14.28.2006",
        hca_type: "MT4118",
        node_guid: "0x0a7fbc1245efd23b",
      });
    } finally {
      procfs.remove();
    }
  });
});

describe("sysfs source failures", () => {
  it("source=sysfs without class/infiniband is absent, and earlier series are withdrawn", async () => {
    const { deps, collector } = make({ source: "sysfs" });
    await collector.update?.();
    expect((await exposed(deps)).length).toBeGreaterThan(100);
    rmSync(join(tree.root, "class"), { recursive: true });
    const err = await collector.update?.().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CollectorError);
    expect((err as CollectorError).absent).toBe(true);
    expect((err as CollectorError).message).toMatch(/class\/infiniband does not exist$/);
    expect(await exposed(deps)).toEqual([]);
  });

  it("source=sysfs with an empty class directory is absent too", async () => {
    for (const d of [...IB8, "mlx5_bond_0"]) rmSync(join(tree.root, "class/infiniband", d), { recursive: true });
    const { collector } = make({ source: "sysfs" });
    await expect(collector.update?.()).rejects.toMatchObject({ absent: true, message: expect.stringMatching(/is empty$/) as unknown });
  });
});

describe("deviceFilter", () => {
  it("applies include then exclude, statelessly even with /g", () => {
    const f = deviceFilter(/^mlx5_/g, /bond/);
    expect(["mlx5_0", "mlx5_0", "mlx5_bond_0", "irdma0"].map(f)).toEqual([true, true, false, false]);
    expect(deviceFilter()("anything")).toBe(true);
  });
});
