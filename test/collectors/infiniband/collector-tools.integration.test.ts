/** Tools source with the REAL exec running the fake ibstat / perfquery as child processes. */
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { CollectorError, type CollectorDeps } from "../../../collectors/collector.js";
import { createExec } from "../../../collectors/exec.js";
import { createInfinibandCollector, type InfinibandOptions } from "../../../collectors/infiniband/collector.js";
import { expandPathDump, makeTempDir, removeTree } from "../../helpers/ttar.js";
import { FAKE_TOOL_TIMEOUT_MS, makeDeps, withTimeToStart } from "../../helpers/collector-deps.js";
import { exposed, fixedNow, portsOf, valueOf } from "./helpers.js";
import * as T from "./tools-env.js";

const exec = createExec();
let tmp: string;
let argsLog: string;
beforeEach(() => {
  tmp = makeTempDir("ringwatch-ibtools-");
  argsLog = join(tmp, "args.log");
});
afterEach(() => {
  T.setFakeEnv({});
  removeTree(tmp);
});
afterAll(() => exec.killAll());

const IB8 = ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9"];

/** The collector on the real exec (or `via`, a wrapper of it); every fake is given the time to start unless the test says otherwise. */
function make(opts: Partial<InfinibandOptions> = {}, via: typeof exec = exec) {
  const deps: CollectorDeps = makeDeps({ exec: via, now: fixedNow });
  const collector = createInfinibandCollector(deps, {
    sysfsRoot: join(tmp, "no-sys"),
    source: "tools",
    ibstat: T.FAKE_IBSTAT,
    perfquery: T.FAKE_PERFQUERY,
    timeoutMs: FAKE_TOOL_TIMEOUT_MS,
    ...opts,
  });
  return { deps, collector };
}

async function failure(p: Promise<void> | undefined): Promise<CollectorError> {
  const err = await p?.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CollectorError);
  return err as CollectorError;
}

// A test here runs up to 20 fakes, node scripts, a few at a time: on a busy machine that takes
// tens of seconds, longer than vitest's default limit (these limits are for a test that hangs).
const MANY_FAKES = { timeout: 120_000 };

describe("tools source: ibstat once, then perfquery -x -C <ca> -P <port> per IB port", MANY_FAKES, () => {
  it("H100 node: 8 IB ports with counters, the RoCE bond with state only", async () => {
    const dir = T.linkCaptures(tmp, { "mlx5_0-1.x.txt": T.PQ_01, "mlx5_1-1.x.txt": T.PQ_02, "mlx5_4-1.x.txt": T.PQ_03 });
    for (const ca of IB8.slice(3)) T.linkCaptures(tmp, { [`${ca}-1.x.txt`]: T.PQ_01 });
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY_DIR: dir, FAKE_IB_ARGS_LOG: argsLog });
    const { deps, collector } = make();
    await collector.update?.();
    const s = await exposed(deps);
    expect(portsOf(s)).toEqual([...IB8, "mlx5_bond_0"].map((d) => `${d}/1`));
    const p0 = { device: "mlx5_0", port: "1" };
    expect([valueOf(s, "state_id", p0), valueOf(s, "physical_state_id", p0), valueOf(s, "rate_bytes_per_second", p0)]).toEqual([4, 5, 50e9]);
    expect(valueOf(s, "info", { ...p0, link_layer: "InfiniBand", firmware_version: "28.41.1000", hca_type: "MT4129", node_guid: "0x58a2e10300a7820e" })).toBe(
      1,
    );
    expect(valueOf(s, "port_data_transmitted_bytes_total", p0)).toBe(178791657177235 * 4);
    expect(valueOf(s, "port_data_received_bytes_total", p0)).toBe(178762341961629 * 4);
    expect(valueOf(s, "link_downed_total", p0)).toBe(1);
    expect(valueOf(s, "port_discards_transmitted_total", p0)).toBe(20046);
    expect(valueOf(s, "port_receive_switch_relay_errors_total", p0)).toBe(7);
    expect(valueOf(s, "unicast_packets_received_total", p0)).toBe(387648134400);
    expect(valueOf(s, "port_transmit_wait_total", { device: "mlx5_1", port: "1" })).toBe(0);
    expect(valueOf(s, "port_transmit_wait_total", { device: "mlx5_4", port: "1" })).toBe(22730501);
    const bond = { device: "mlx5_bond_0", port: "1" };
    expect(valueOf(s, "rate_bytes_per_second", bond)).toBe(25e9);
    expect(valueOf(s, "symbol_error_total", bond)).toBeUndefined();
    // 64-bit -x counters do not saturate: no hint series.
    expect(s.some((x) => x.name === "ringwatch_infiniband_counters_saturated")).toBe(false);
    expect(s.some((x) => x.name === "ringwatch_infiniband_counters_unreadable")).toBe(false);
    const runs = T.loggedRuns(argsLog);
    expect(runs.filter((r) => r.tool === "ibstat").map((r) => r.args)).toEqual([[]]);
    expect(
      runs
        .filter((r) => r.tool === "perfquery")
        .map((r) => r.args.join(" "))
        .sort(),
    ).toEqual(IB8.map((ca) => `-x -C ${ca} -P 1`));
    expect(exec.running()).toBe(0);
  });

  it("falls back to the fixed-width PortCounters when -x has no error counters", async () => {
    const dir = T.linkCaptures(tmp, { "mlx5_0-1.x.txt": T.PQ_E_01, "mlx5_0-1.txt": T.PQ_01 });
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY_DIR: dir, FAKE_IB_ARGS_LOG: argsLog });
    const { deps, collector } = make({ deviceInclude: /^mlx5_0$/ });
    await collector.update?.();
    const s = await exposed(deps);
    const p0 = { device: "mlx5_0", port: "1" };
    expect(valueOf(s, "link_downed_total", p0)).toBe(1);
    expect(valueOf(s, "counters_saturated", { ...p0, counter: "link_downed" })).toBe(0);
    expect(valueOf(s, "counters_saturated", { ...p0, counter: "unicast_rcv_packets" })).toBeUndefined();
    expect(
      T.loggedRuns(argsLog)
        .filter((r) => r.tool === "perfquery")
        .map((r) => r.args.join(" ")),
    ).toEqual(["-x -C mlx5_0 -P 1", "-C mlx5_0 -P 1"]);
  });

  it("ports that vanish from ibstat's output lose their series", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_12CA_DOWN, FAKE_PERFQUERY: T.PQ_01 });
    const { deps, collector } = make();
    await collector.update?.();
    expect(portsOf(await exposed(deps))).toContain("mlx5_10/1");
    // Down Ethernet ports are reported, but not asked for counters.
    expect(valueOf(await exposed(deps), "state_id", { device: "mlx5_2", port: "1" })).toBe(1);
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY: T.PQ_01 });
    await collector.update?.();
    const s = await exposed(deps);
    expect(portsOf(s)).toEqual([...IB8, "mlx5_bond_0"].map((d) => `${d}/1`));
    expect(s.some((x) => x.labels.device === "mlx5_10" || x.labels.device === "mlx5_2")).toBe(false);
  });

  it("auto falls back to the tools when sysfs has no class/infiniband", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY: T.PQ_01 });
    const { deps, collector } = make({ source: "auto" });
    await collector.once();
    expect(portsOf(await exposed(deps))).toHaveLength(9);
  });
});

describe("tools source failures", MANY_FAKES, () => {
  it("ibpanic after partial output: the 8 CAs stay published AND the panic is reported", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_A100_PANIC, FAKE_PERFQUERY: T.PQ_01 });
    const { deps, collector } = make();
    const err = await failure(collector.update?.());
    expect(err.absent).toBe(false);
    expect(err.message).toBe(`${T.FAKE_IBSTAT}: ibpanic: main: stat of IB device 'mlx5_8' failed: No such file or directory`);
    const s = await exposed(deps);
    expect(portsOf(s)).toHaveLength(8);
    expect(valueOf(s, "link_downed_total", { device: "mlx5_7", port: "1" })).toBe(1);
  });

  it("ibpanic with no CA (errors/09) withdraws what an earlier update published", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY: T.PQ_01 });
    const { deps, collector } = make();
    await collector.update?.();
    T.setFakeEnv({ FAKE_IBSTAT: T.ERR_IBSTAT_PANIC });
    const err = await failure(collector.update?.());
    expect(err.message).toBe(`${T.FAKE_IBSTAT}: ibpanic: main: stat of IB device 'mlx5_an0' failed: No such file or directory`);
    expect(await exposed(deps)).toEqual([]);
  });

  it("a hanging ibstat is killed by the timeout", async () => {
    T.setFakeEnv({ FAKE_IBSTAT_MODE: "hang" });
    const { deps, collector } = make({ timeoutMs: 400 });
    const t0 = Date.now();
    const err = await failure(collector.update?.());
    expect(err.message).toMatch(/timed out and was killed$/);
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(exec.running()).toBe(0);
    expect(await exposed(deps)).toEqual([]);
  });

  it("a hanging perfquery is killed; states stay, counters do not", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY_MODE: "hang" });
    // ibstat must answer: it has the time to start; perfquery runs keep the 400 ms under test.
    const { deps, collector } = make(
      { timeoutMs: 400 },
      withTimeToStart(exec, (file) => file === T.FAKE_IBSTAT),
    );
    const err = await failure(collector.update?.());
    expect(err.message).toMatch(/^\S+perfquery -x -C mlx5_\d -P 1: timed out and was killed \(and 7 more\)$/);
    const s = await exposed(deps);
    expect(portsOf(s)).toHaveLength(9);
    expect(s.some((x) => x.name === "ringwatch_infiniband_symbol_error_total")).toBe(false);
    expect(exec.running()).toBe(0);
  });

  it("perfquery without ib_umad: one clear line", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_PERFQUERY: T.ERR_UMAD });
    const { collector } = make();
    const err = await failure(collector.update?.());
    expect(err.message).toMatch(
      /^\S+perfquery -x -C mlx5_0 -P 1: ibwarn: umad_init: can't read ABI version from \/sys\/class\/infiniband_mad\/abi_version \(No such file or directory\): is ib_umad module loaded\? \(and 7 more\)$/,
    );
  });

  it("garbled ibstat output is reported, what parsed is kept", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.IBSTAT_H100_9CA, FAKE_IBSTAT_MODE: "garble", FAKE_PERFQUERY: T.PQ_01 });
    const { deps, collector } = make();
    const err = await failure(collector.update?.());
    expect(err.message).toMatch(/: unexpected line in ibstat output: /);
    expect(portsOf(await exposed(deps)).length).toBeGreaterThanOrEqual(1);
  });

  it("ibstat failing outright (exit 255, everything on stderr) is a failure", async () => {
    T.setFakeEnv({ FAKE_IBSTAT: T.ERR_UMAD, FAKE_IBSTAT_MODE: "fail" });
    const err = await failure(make().collector.update?.());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/ibwarn: umad_init: .*is ib_umad module loaded\?$/);
  });

  it("missing ibstat and no sysfs class: absent (no IB here)", async () => {
    const err = await failure(make({ ibstat: join(tmp, "missing-ibstat") }).collector.update?.());
    expect(err.absent).toBe(true);
    expect(err.message).toMatch(/^no InfiniBand here: /);
    const auto = await failure(make({ source: "auto", ibstat: join(tmp, "missing-ibstat") }).collector.update?.());
    expect(auto.absent).toBe(true);
  });

  it("missing ibstat while sysfs shows devices: a real failure, not absent", async () => {
    const root = expandPathDump("mlx5_0/ports/1/state:4: ACTIVE\n", makeTempDir(), "class/infiniband");
    try {
      const err = await failure(make({ sysfsRoot: root, ibstat: join(tmp, "missing-ibstat") }).collector.update?.());
      expect(err.absent).toBe(false);
      expect(err.message).toMatch(/missing-ibstat: not found or not executable$/);
    } finally {
      removeTree(root);
    }
  });
});
