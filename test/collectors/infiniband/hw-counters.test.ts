/**
 * The hw_counters families on the real captures (procfs' mlx5_0 with non-zero retry and error
 * counters; gpud's H100 tree), and the allow-list --collector.infiniband.hw-counters.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseCli } from "../../../agent/config/config.js";
import { createInfinibandCollector } from "../../../collectors/infiniband/collector.js";
import { LEGACY_COUNTERS, PORT_COUNTERS } from "../../../collectors/infiniband/counters.js";
import { HW_COUNTERS, hwCounterAllowList } from "../../../collectors/infiniband/hw-counters.js";
import { makeDeps } from "../../helpers/collector-deps.js";
import { parsePromText } from "../../helpers/exposition.js";
import { exposed, fixedNow, valueOf } from "./helpers.js";
import { counterOracle, GPUD_DUMP, makeTree, PROCFS_TTAR, type Tree } from "./trees.js";

const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => t.remove()));

function tree(rel: typeof PROCFS_TTAR | typeof GPUD_DUMP): Tree {
  const t = makeTree(rel);
  trees.push(t);
  return t;
}

async function scrape(root: string, hwCounters?: ReadonlySet<string>) {
  const deps = makeDeps({ now: fixedNow });
  const c = createInfinibandCollector(deps, { sysfsRoot: root, source: "sysfs", ibstat: "x", perfquery: "y", hwCounters });
  await c.update?.();
  return { series: await exposed(deps), text: await deps.registry.metrics() };
}

describe("named hw_counters families on the real captures", () => {
  it("procfs' mlx5_0: retry, sequence and completion error counters under their own names", async () => {
    const { series: s, text } = await scrape(tree(PROCFS_TTAR).root);
    const p = { device: "mlx5_0", port: "1" };
    expect(valueOf(s, "local_ack_timeout_errors_total", p)).toBe(131);
    expect(valueOf(s, "rnr_nak_retry_errors_total", p)).toBe(0);
    expect(valueOf(s, "packet_sequence_errors_total", p)).toBe(1);
    expect(valueOf(s, "out_of_sequence_packets_received_total", p)).toBe(1);
    expect(valueOf(s, "duplicate_requests_total", p)).toBe(41);
    expect(valueOf(s, "roce_adp_retrans_total", p)).toBe(99);
    expect(valueOf(s, "roce_adp_retrans_timeouts_total", p)).toBe(4);
    expect(valueOf(s, "roce_slow_restart_total", p)).toBe(0);
    expect(valueOf(s, "roce_slow_restart_cnps_total", p)).toBe(131);
    expect(valueOf(s, "req_cqe_errors_total", p)).toBe(3481);
    expect(valueOf(s, "req_cqe_flush_errors_total", p)).toBe(80);
    expect(valueOf(s, "resp_cqe_errors_total", p)).toBe(8109);
    expect(valueOf(s, "resp_cqe_flush_errors_total", p)).toBe(4708);
    expect(valueOf(s, "rx_read_requests_total", p)).toBe(175528982);
    expect(valueOf(s, "rx_write_requests_total", p)).toBe(742114);
    // This kernel has no rx_icrc_encapsulated file, and predates the 6.11 "retries exceeded" ones: absent, not 0.
    expect(valueOf(s, "rx_icrc_encapsulated_errors_total", p)).toBeUndefined();
    expect(valueOf(s, "req_transport_retries_exceeded_total", p)).toBeUndefined();
    expect(valueOf(s, "req_rnr_retries_exceeded_total", p)).toBeUndefined();
    // Every file has a family: nothing is left for the generic metric, and lifespan (a setting) is no counter.
    expect(s.filter((x) => x.name === "ringwatch_infiniband_hw_counters_total")).toEqual([]);
    expect(s.some((x) => x.name.includes("lifespan"))).toBe(false);
    // mlx4_0 and hfi1_0 have no hw_counters: no hw series for them.
    expect(s.some((x) => x.name === "ringwatch_infiniband_local_ack_timeout_errors_total" && x.labels.device !== "mlx5_0")).toBe(false);
    expect(parsePromText(text).types.get("ringwatch_infiniband_local_ack_timeout_errors_total")).toBe("counter");
  });

  it("gpud's H100 tree: the 8 NDR ports and the RoCE bond each get every counter", async () => {
    const { series: s } = await scrape(tree(GPUD_DUMP).root);
    const bond = { device: "mlx5_bond_0", port: "1" };
    expect(valueOf(s, "rx_write_requests_total", bond)).toBe(3809045607);
    expect(valueOf(s, "rx_dct_connect_requests_total", bond)).toBe(422237);
    expect(valueOf(s, "roce_adp_retrans_total", bond)).toBe(3);
    expect(valueOf(s, "rx_icrc_encapsulated_errors_total", bond)).toBe(0);
    expect(s.filter((x) => x.name === "ringwatch_infiniband_rx_read_requests_total")).toHaveLength(9);
  });

  it("the table covers every hw_counters file the real captures show (lifespan aside)", () => {
    const files = new Set([...counterOracle(PROCFS_TTAR), ...counterOracle(GPUD_DUMP)].filter((e) => e.dir === "hw_counters").map((e) => e.name));
    expect(files.size).toBe(26);
    const named = new Set(HW_COUNTERS.map((d) => d.file));
    expect([...files].filter((f) => !named.has(f))).toEqual(["lifespan"]);
    // Beyond the captures: the congestion counters (`rdma stat show`) and kernel 6.11's two "retries exceeded".
    expect([...named].filter((f) => !files.has(f)).sort()).toEqual([
      "np_cnp_sent",
      "np_ecn_marked_roce_packets",
      "req_rnr_retries_exceeded",
      "req_transport_retries_exceeded",
      "rp_cnp_handled",
      "rp_cnp_ignored",
    ]);
  });

  it("a 6.11+ kernel's retries-exceeded files, next to gpud's real ones, get their families on that port only", async () => {
    const t = tree(GPUD_DUMP);
    // mlx5 lists them among the extended error counters since kernel 6.11; the capture's kernel is older.
    const hw = (dev: string) => join(t.root, `class/infiniband/${dev}/ports/1/hw_counters`);
    writeFileSync(join(hw("mlx5_4"), "req_transport_retries_exceeded"), "2\n");
    writeFileSync(join(hw("mlx5_4"), "req_rnr_retries_exceeded"), "0\n");
    writeFileSync(join(hw("mlx5_bond_0"), "req_transport_retries_exceeded"), "4294967295\n");
    const { series: s, text } = await scrape(t.root);
    const p4 = { device: "mlx5_4", port: "1" };
    expect(valueOf(s, "req_transport_retries_exceeded_total", p4)).toBe(2);
    expect(valueOf(s, "req_rnr_retries_exceeded_total", p4)).toBe(0);
    expect(valueOf(s, "req_transport_retries_exceeded_total", { device: "mlx5_bond_0", port: "1" })).toBe(4294967295);
    expect(valueOf(s, "req_rnr_retries_exceeded_total", { device: "mlx5_bond_0", port: "1" })).toBeUndefined();
    // Ports without the files have no series (absent, not 0); the real counters beside them are unchanged.
    expect(
      s
        .filter((x) => x.name === "ringwatch_infiniband_req_transport_retries_exceeded_total")
        .map((x) => x.labels.device)
        .sort(),
    ).toEqual(["mlx5_4", "mlx5_bond_0"]);
    expect(valueOf(s, "rx_dct_connect_requests_total", { device: "mlx5_bond_0", port: "1" })).toBe(422237);
    expect(s.filter((x) => x.name === "ringwatch_infiniband_hw_counters_total")).toEqual([]);
    const types = parsePromText(text).types;
    expect(types.get("ringwatch_infiniband_req_transport_retries_exceeded_total")).toBe("counter");
    expect(text).toContain("# HELP ringwatch_infiniband_req_transport_retries_exceeded_total Times a requester QP ran out of transport retries");
  });

  it("names are unique, end in _total, and never clash with the PortCounters families", () => {
    const metrics = HW_COUNTERS.map((d) => d.metric);
    expect(new Set(metrics).size).toBe(metrics.length);
    expect(new Set(HW_COUNTERS.map((d) => d.file)).size).toBe(HW_COUNTERS.length);
    for (const m of metrics) expect(m).toMatch(/^[a-z][a-z0-9_]*_total$/);
    const others = new Set([...PORT_COUNTERS, ...LEGACY_COUNTERS].map((d) => d.metric));
    expect(metrics.filter((m) => others.has(m) || m === "hw_counters_total")).toEqual([]);
  });
});

describe("the allow-list --collector.infiniband.hw-counters", () => {
  it("a file without a family, once allowed, goes to hw_counters_total; by default it is not even read", async () => {
    const t = tree(GPUD_DUMP);
    // Files no family covers (soft-RoCE rxe's names), written next to the real ones.
    writeFileSync(join(t.root, "class/infiniband/mlx5_0/ports/1/hw_counters/send_err"), "7\n");
    writeFileSync(join(t.root, "class/infiniband/mlx5_0/ports/1/hw_counters/completer_retry_err"), "garbage\n");
    const p = { device: "mlx5_0", port: "1" };

    const byDefault = (await scrape(t.root)).series;
    expect(byDefault.filter((x) => x.name === "ringwatch_infiniband_hw_counters_total")).toEqual([]);
    expect(valueOf(byDefault, "counters_unreadable", p)).toBe(0);

    const extended = (await scrape(t.root, hwCounterAllowList(["named", "send_err", "completer_retry_err"]))).series;
    expect(extended.filter((x) => x.name === "ringwatch_infiniband_hw_counters_total").map((x) => [x.labels.device, x.labels.counter, x.value])).toEqual([
      ["mlx5_0", "send_err", 7],
    ]);
    expect(valueOf(extended, "counters_unreadable", p)).toBe(1);
    expect(valueOf(extended, "local_ack_timeout_errors_total", p)).toBe(0);
  });

  it("a narrower list keeps only those families; an empty one reads no hw_counters at all", async () => {
    const t = tree(PROCFS_TTAR);
    const narrow = (await scrape(t.root, hwCounterAllowList(["local_ack_timeout_err", "rnr_nak_retry_err"]))).series;
    const hwFamilies = new Set(HW_COUNTERS.map((d) => `ringwatch_infiniband_${d.metric}`));
    expect([...new Set(narrow.filter((x) => hwFamilies.has(x.name)).map((x) => x.name))].sort()).toEqual([
      "ringwatch_infiniband_local_ack_timeout_errors_total",
      "ringwatch_infiniband_rnr_nak_retry_errors_total",
    ]);
    const none = (await scrape(t.root, hwCounterAllowList([]))).series;
    expect(none.some((x) => hwFamilies.has(x.name))).toBe(false);
    expect(valueOf(none, "port_errors_received_total", { device: "mlx5_0", port: "1" })).toBeDefined();
  });

  it("the flag: `named` by default, lists extend it, and a name that is no file name is a start-up error", () => {
    const run = (argv: string[]) => {
      const a = parseCli(argv, {});
      if (a.kind !== "run") throw new Error(a.kind);
      return a.config.collectors.infiniband.hwCounters;
    };
    expect([...run([])].sort()).toEqual(HW_COUNTERS.map((d) => d.file).sort());
    const extended = run(["--collector.infiniband.hw-counters=named,send_err"]);
    expect(extended.size).toBe(HW_COUNTERS.length + 1);
    expect(run(["--collector.infiniband.hw-counters=named,req_transport_retries_exceeded"]).size).toBe(HW_COUNTERS.length);
    expect([...run(["--collector.infiniband.hw-counters=rnr_nak_retry_err", "--collector.infiniband.hw-counters=local_ack_timeout_err"])].sort()).toEqual([
      "local_ack_timeout_err",
      "rnr_nak_retry_err",
    ]);
    expect(run(["--collector.infiniband.hw-counters="]).size).toBe(0);
    expect(() => run(["--collector.infiniband.hw-counters=../counters/x"])).toThrow(/--collector.infiniband.hw-counters/);
    expect(() => run(["--collector.infiniband.hw-counters=lifespan"])).toThrow(/hw_counters file names/);
  });
});
