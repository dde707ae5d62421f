/**
 * The checks of `ringwatch check` on series as the collectors publish them (agent/check-judge*.ts,
 * check-result.ts), and what is printed of them (check-output.ts): every decision and its words.
 */
import { describe, expect, it } from "vitest";
import { parseCheckArgs } from "../../agent/check-args.js";
import { readExpectations, type Expectations } from "../../agent/check-expect.js";
import { CHECK_NAMES, judge } from "../../agent/check-judge.js";
import { exitCode, formatJson, formatText, summary } from "../../agent/check-output.js";
import type { CheckResult, NodeView } from "../../agent/check-result.js";
import type { MetricFamily, Source, SourceState } from "../../agent/check-run.js";
import { Samples } from "../../agent/check-samples.js";

const NOW = Date.parse("2025-10-01T12:00:00Z");

type Series = [name: string, labels: Record<string, string>, value: number];

/** A node whose collectors all ran (unless `sources` says otherwise) and published `series`. */
function node(series: Series[], sources: Partial<Record<string, SourceState | [SourceState, string]>> = {}, sysfsGpus?: string[]): NodeView {
  const byName = new Map<string, MetricFamily>();
  for (const [name, labels, value] of series) {
    const f = byName.get(name) ?? ({ name, help: "", type: "gauge", aggregator: "sum", values: [] } as unknown as MetricFamily);
    f.values.push({ labels, value });
    byName.set(name, f);
  }
  const all: Record<string, SourceState | [SourceState, string]> = {
    gpu: "ok",
    infiniband: "ok",
    gdr: "ok",
    mtu: "ok",
    nccl: "off",
    job: "off",
    kmsg: "ok",
    ...sources,
  };
  const map = new Map<string, Source>(
    Object.entries(all).map(([collector, s]) => {
      const [state, reason] = typeof s === "string" ? [s, undefined] : (s ?? ["off", undefined]);
      return [collector, { collector, state, ...(reason !== undefined ? { reason } : {}) }];
    }),
  );
  return { samples: new Samples([...byName.values()]), sources: map, sysfsGpus, nowMs: NOW };
}

const expect_ = (argv: string[] = []): Expectations => readExpectations(parseCheckArgs(argv).raw);

function result(v: NodeView, name: string, argv: string[] = []): CheckResult {
  const r = judge(v, expect_(argv)).find((x) => x.name === name);
  if (r === undefined) throw new Error(`no check ${name}`);
  return r;
}

const gpu = (i: number, bus: string): Series => [
  "ringwatch_gpu_info",
  { gpu: String(i), uuid: `GPU-${i}`, name: "NVIDIA H100", pci_bus_id: bus, driver_version: "570" },
  1,
];
const port = (device: string, state: number, phys: number, gbps: number, p = "1"): Series[] => [
  ["ringwatch_infiniband_state_id", { device, port: p }, state],
  ["ringwatch_infiniband_physical_state_id", { device, port: p }, phys],
  ["ringwatch_infiniband_rate_bytes_per_second", { device, port: p }, gbps * 125_000_000],
];
const xid = (g: string, code: number, action: string, count: number, agoS: number): Series[] => [
  ["ringwatch_gpu_xid_errors_total", { gpu: g, xid: String(code) }, count],
  ["ringwatch_gpu_xid_last_timestamp_seconds", { gpu: g, xid: String(code) }, NOW / 1000 - agoS],
  ["ringwatch_gpu_xid_info", { xid: String(code), meaning: `meaning ${code}`, cause: "hardware", action }, 1],
];

describe("judge: the rules on sources", () => {
  it("lists every check, in the order of CHECK_NAMES", () => {
    expect(judge(node([]), expect_()).map((r) => r.name)).toEqual(CHECK_NAMES);
  });

  it("a collector that is off: skip when nothing is expected of it, error when something is", () => {
    const v = node([], { gpu: "off" });
    expect(result(v, "gpu.count")).toMatchObject({ status: "skip", message: "the gpu collector is off" });
    expect(result(v, "gpu.count", ["--check.gpu.count=8"])).toMatchObject({ status: "error", message: "could not check: the gpu collector is off" });
  });

  it("a source not on this node: skip when nothing is expected of it, error when something is", () => {
    const v = node([], { infiniband: ["absent", "no InfiniBand here"] });
    expect(result(v, "ib.port.state")).toMatchObject({ status: "skip", message: "not on this node: no InfiniBand here" });
    for (const flag of ["--check.ib.ports=8", "--check.ib.rate=400", "--check.ib.devices=mlx5_0"]) {
      expect(result(v, "ib.port.state", [flag])).toMatchObject({ status: "error", message: "could not check: no InfiniBand here" });
    }
  });

  it("a source that failed: error, expected or not, and its series are not judged", () => {
    const v = node([...port("mlx5_0", 1, 2, 400)], { infiniband: ["failed", "ibstat: ibpanic: [1] main: stat of IB device 'mlx5_an0' failed"] });
    expect(result(v, "ib.port.state")).toMatchObject({
      status: "error",
      message: "could not check: ibstat: ibpanic: [1] main: stat of IB device 'mlx5_an0' failed",
    });
  });
});

describe("gpu.count", () => {
  it("counts the GPUs of nvidia-smi's identity and of its samples", () => {
    const v = node([gpu(0, "00000000:3B:00.0"), ["ringwatch_gpu_power_watts", { gpu: "0" }, 300], ["ringwatch_gpu_power_watts", { gpu: "1" }, 310]]);
    expect(result(v, "gpu.count")).toMatchObject({ status: "ok", message: "2 GPUs (no count expected)" });
    expect(result(v, "gpu.count", ["--check.gpu.count=2"])).toMatchObject({ status: "ok", message: "2 GPUs (expected 2)" });
    expect(result(v, "gpu.count", ["--check.gpu.count=8"])).toMatchObject({ status: "fail", message: "2 GPUs, expected 8" });
    expect(result(node([]), "gpu.count", ["--check.gpu.count=1"])).toMatchObject({ status: "fail", message: "0 GPUs, expected 1" });
  });

  it("nvidia-smi's own failure messages are an unhealthy node, even with no count expected; any other failure could not be checked", () => {
    const broken = node(
      [
        ["ringwatch_gpu_errors_total", { kind: "driver_unreachable" }, 1],
        ["ringwatch_gpu_errors_total", { kind: "gpu_lost" }, 0],
      ],
      {
        gpu: ["failed", "gpu: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."],
      },
    );
    expect(result(broken, "gpu.count")).toEqual({
      name: "gpu.count",
      status: "fail",
      message: "nvidia-smi: gpu: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
      details: ["cannot communicate with the NVIDIA driver"],
    });
    const tool = node([["ringwatch_gpu_errors_total", { kind: "command_failed" }, 1]], { gpu: ["failed", "gpu: Failed to process command line"] });
    expect(result(tool, "gpu.count")).toMatchObject({ status: "error", message: "could not check: gpu: Failed to process command line" });
  });
});

describe("gpu.bus", () => {
  it("compares sysfs's nvidia GPUs with nvidia-smi's bus ids in any printed form", () => {
    const v = node([gpu(0, "00000000:3B:00.0"), gpu(1, "00000000:B3:00.0")], {}, ["0000:3b:00.0", "0000:b3:00.0", "0000:d1:00.0"]);
    expect(result(v, "gpu.bus")).toMatchObject({ status: "fail", message: "0000:d1:00.0: bound to nvidia in sysfs, not listed by nvidia-smi" });
    const all = node([gpu(0, "00000000:3B:00.0")], {}, ["0000:3b:00.0"]);
    expect(result(all, "gpu.bus")).toMatchObject({ status: "ok", message: "no GPU off the bus (nvidia-smi, sysfs, kernel log)" });
  });

  it("without nvidia-smi's identity there is nothing to compare sysfs with", () => {
    const v = node([], { gpu: ["failed", "gpu: nvidia-smi dmon printed no samples"] }, ["0000:3b:00.0"]);
    expect(result(v, "gpu.bus")).toMatchObject({ status: "ok", message: "no GPU off the bus (kernel log)" });
  });

  it("nvidia-smi's lost GPU, and Xid 79 within the window", () => {
    const lost = node([["ringwatch_gpu_errors_total", { kind: "gpu_lost" }, 2]], {
      gpu: ["failed", "gpu: Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost"],
    });
    expect(result(lost, "gpu.bus")).toMatchObject({ status: "fail", message: "nvidia-smi: a GPU is lost" });
    const v = node([...xid("3", 79, "reboot_node", 1, 7200)]);
    expect(result(v, "gpu.bus")).toMatchObject({ status: "fail", message: "GPU 3: Xid 79 (fallen off the bus) at 2025-10-01T10:00:00Z" });
    expect(result(v, "gpu.bus", ["--check.xid.window=1h"])).toMatchObject({ status: "ok" });
  });

  it("with no source read: error when one failed, skip when none is here", () => {
    expect(result(node([], { gpu: ["failed", "gpu: timed out"], kmsg: ["absent", "no kernel log"] }), "gpu.bus")).toMatchObject({
      status: "error",
      message: "could not check: gpu: timed out",
    });
    expect(result(node([], { gpu: ["absent", "nvidia-smi not found"], kmsg: ["absent", "no kernel log"] }), "gpu.bus")).toMatchObject({ status: "skip" });
  });
});

describe("gpu.xid, nvswitch.sxid, gpu.recovery", () => {
  it("fails on the actions asked for, names the others, and keeps to the window", () => {
    const v = node([...xid("0", 48, "reset_gpu", 2, 600), ...xid("1", 13, "restart_job", 1, 60), ...xid("2", 999, "unknown", 1, 60)]);
    expect(result(v, "gpu.xid")).toEqual({
      name: "gpu.xid",
      status: "fail",
      message: "GPU 0: Xid 48 (meaning 48; reset_gpu) x2, last at 2025-10-01T11:50:00Z",
      details: ["GPU 0: Xid 48 (meaning 48; reset_gpu) x2, last at 2025-10-01T11:50:00Z"],
    });
    expect(result(v, "gpu.xid", ["--check.xid.window=5m"])).toMatchObject({
      status: "ok",
      message:
        "no Xid that needs action in the last 5m; 2 other Xids: GPU 1: Xid 13 (meaning 13; restart_job), last at 2025-10-01T11:59:00Z, GPU 2: Xid 999 (meaning 999; unknown), last at 2025-10-01T11:59:00Z",
    });
    expect(result(v, "gpu.xid", ["--check.xid.window=5m", "--check.xid.actions=unknown"])).toMatchObject({
      status: "fail",
      message: "GPU 2: Xid 999 (meaning 999; unknown), last at 2025-10-01T11:59:00Z",
    });
    // The window's edge: 10 minutes ago is inside 10m.
    expect(result(v, "gpu.xid", ["--check.xid.window=10m"]).status).toBe("fail");
    expect(result(v, "gpu.xid", ["--check.xid.window=9m"]).status).toBe("ok");
  });

  it("an Xid code without ringwatch_gpu_xid_info is unknown", () => {
    const v = node([["ringwatch_gpu_xid_errors_total", { gpu: "0", xid: "201" }, 1]]);
    expect(result(v, "gpu.xid", ["--check.xid.actions=unknown"])).toMatchObject({ status: "fail", message: "GPU 0: Xid 201 (not in the catalogue; unknown)" });
  });

  it("an SXid fails when fatal", () => {
    const sx = (fatality: string, code: string): Series[] => [
      ["ringwatch_nvswitch_sxid_errors_total", { nvswitch: "1", sxid: code, fatality }, 1],
      ["ringwatch_nvswitch_sxid_last_timestamp_seconds", { nvswitch: "1", sxid: code, fatality }, NOW / 1000 - 30],
    ];
    expect(result(node(sx("non_fatal", "22013")), "nvswitch.sxid")).toMatchObject({
      status: "ok",
      message: "no fatal SXid since boot; 1 non-fatal SXid: NVSwitch 1: SXid 22013 (non-fatal), last at 2025-10-01T11:59:30Z",
    });
    expect(result(node([...sx("non_fatal", "22013"), ...sx("fatal", "20034")]), "nvswitch.sxid")).toMatchObject({
      status: "fail",
      message: "NVSwitch 1: SXid 20034 (fatal), last at 2025-10-01T11:59:30Z",
    });
  });

  it("gpu.recovery: any recovery action the driver asks for", () => {
    const v = node([
      ["ringwatch_gpu_recovery_action", { gpu: "0" }, 0],
      ["ringwatch_gpu_recovery_action", { gpu: "1" }, 2],
      ["ringwatch_gpu_recovery_action", { gpu: "2" }, 4],
    ]);
    expect(result(v, "gpu.recovery")).toMatchObject({ status: "fail", message: "GPU 1: node reboot required (Xid 154), GPU 2: drain and reset (Xid 154)" });
    expect(result(node([["ringwatch_gpu_recovery_action", { gpu: "0" }, 0]]), "gpu.recovery").status).toBe("ok");
  });

  it("a window or actions given make the kernel log required", () => {
    const v = node([], { kmsg: ["absent", "/dev/kmsg: not present"] });
    expect(result(v, "gpu.xid").status).toBe("skip");
    expect(result(v, "gpu.xid", ["--check.xid.window=1h"])).toMatchObject({ status: "error", message: "could not check: /dev/kmsg: not present" });
    expect(result(v, "nvswitch.sxid", ["--check.xid.actions=drain_node"]).status).toBe("error");
  });
});

describe("ib.port.*", () => {
  const ports = [...port("mlx5_0", 4, 5, 400), ...port("mlx5_1", 4, 5, 400), ...port("mlx5_10", 1, 2, 400), ...port("mlx5_bond_0", 4, 5, 200)];

  it("ib.port.state: every port ACTIVE and LinkUp, each offender named", () => {
    expect(result(node(ports), "ib.port.state")).toMatchObject({ status: "fail", message: "mlx5_10/1 DOWN (Polling)" });
    expect(result(node(ports), "ib.port.state", ["--check.ib.devices=mlx5_?"])).toMatchObject({ status: "ok", message: "2 ports ACTIVE, LinkUp" });
    expect(result(node(port("mlx5_0", 3, 7, 400)), "ib.port.state")).toMatchObject({ status: "fail", message: "mlx5_0/1 ARMED (Phy Test)" });
    expect(result(node(port("mlx5_0", 9, 8, 400)), "ib.port.state")).toMatchObject({ status: "fail", message: "mlx5_0/1 state 9 (physical state 8)" });
  });

  it("a device pattern names a device or a device/port", () => {
    const two = [...port("mlx4_0", 4, 5, 56, "1"), ...port("mlx4_0", 1, 3, 56, "2")];
    expect(result(node(two), "ib.port.state", ["--check.ib.devices=mlx4_0/1"])).toMatchObject({ status: "ok", message: "1 port ACTIVE, LinkUp" });
    expect(result(node(two), "ib.port.state", ["--check.ib.devices=mlx4_0"])).toMatchObject({ status: "fail", message: "mlx4_0/2 DOWN (Disabled)" });
    expect(result(node(two), "ib.port.state", ["--check.ib.devices=mlx4_0/1,mlx5_0"])).toMatchObject({ status: "fail", message: "mlx5_0: no such port" });
  });

  it("ib.port.rate: the ACTIVE ports at the rate expected", () => {
    expect(result(node(ports), "ib.port.rate", ["--check.ib.rate=400"])).toEqual({
      name: "ib.port.rate",
      status: "fail",
      message: "mlx5_bond_0/1 at 200 Gb/s, expected 400",
      details: ["mlx5_bond_0/1 at 200 Gb/s"],
    });
    expect(result(node(ports), "ib.port.rate", ["--check.ib.rate=400", "--check.ib.devices=mlx5_?,mlx5_10"])).toMatchObject({
      status: "ok",
      message: "2 ACTIVE ports at 400 Gb/s",
    });
    expect(result(node(port("qib0", 4, 5, 2.5)), "ib.port.rate", ["--check.ib.rate=2.5"]).status).toBe("ok");
    expect(result(node(port("mlx5_0", 1, 2, 400)), "ib.port.rate", ["--check.ib.rate=400"])).toMatchObject({
      status: "fail",
      message: "no ACTIVE port, expected 400 Gb/s",
    });
  });

  it("ib.port.count: the ports present, whatever their state", () => {
    expect(result(node(ports), "ib.port.count", ["--check.ib.ports=4"])).toMatchObject({ status: "ok", message: "4 ports (expected 4)" });
    expect(result(node(ports), "ib.port.count", ["--check.ib.ports=8", "--check.ib.devices=mlx5_?"])).toMatchObject({
      status: "fail",
      message: "2 ports matching mlx5_?, expected 8",
      details: ["mlx5_0/1", "mlx5_1/1"],
    });
  });
});

describe("gdr.peermem, net.mtu, nccl.ras", () => {
  it("gdr.peermem names the module loaded", () => {
    const loaded = node([
      ["ringwatch_gdr_peermem_loaded", {}, 1],
      ["ringwatch_gdr_module_loaded", { module: "nvidia_peermem" }, 0],
      ["ringwatch_gdr_module_loaded", { module: "nv_peer_mem" }, 1],
    ]);
    expect(result(loaded, "gdr.peermem", ["--check.gdr.peermem"])).toMatchObject({ status: "ok", message: "nv_peer_mem loaded" });
    expect(result(node([["ringwatch_gdr_peermem_loaded", {}, 0]]), "gdr.peermem", ["--check.gdr.peermem"]).status).toBe("fail");
    expect(result(node([["ringwatch_gdr_peermem_loaded", {}, 0]]), "gdr.peermem").status).toBe("skip");
  });

  it("net.mtu: names and patterns, every interface a pattern matches", () => {
    const v = node([
      ["ringwatch_network_mtu_bytes", { device: "ib0" }, 4092],
      ["ringwatch_network_mtu_bytes", { device: "ib1" }, 2044],
      ["ringwatch_network_mtu_bytes", { device: "ib0.8001" }, 4092],
      ["ringwatch_network_mtu_bytes", { device: "eth0" }, 9000],
    ]);
    expect(result(v, "net.mtu", ["--check.mtu=eth0=9000,ib?=4092"])).toEqual({
      name: "net.mtu",
      status: "fail",
      message: "ib1 2044, expected 4092",
      details: ["ib1 2044, expected 4092"],
    });
    expect(result(v, "net.mtu", ["--check.mtu=ib*.*=4092,eth0=9000"])).toMatchObject({ status: "ok", message: "ib0.8001 4092, eth0 9000" });
    expect(result(v, "net.mtu", ["--check.mtu=bond0=9000"])).toMatchObject({ status: "fail", message: "bond0: no such interface" });
  });

  it("nccl.ras: the problems of the running agent's RAS diagnostics, or why it could not be asked", () => {
    const url = ["--check.agent-url=http://127.0.0.1:9742/metrics"];
    const diag = (labels: Record<string, string>, value = 1) => ({ labels, value });
    const answer = (...samples: ReturnType<typeof diag>[]): NodeView => ({
      ...node([]),
      agent: { samples: new Map([["ringwatch_nccl_ras_diagnostic", samples]]) },
    });
    expect(result(answer(diag({ check: "xid", comm_id: "abc", detail: "79", host: "node3" })), "nccl.ras", url)).toMatchObject({
      status: "fail",
      message: "xid 79 on node3 (comm abc)",
    });
    // A series at 0 is no problem; none at all is a healthy answer.
    expect(result(answer(diag({ check: "ecc", comm_id: "abc", detail: "", host: "" }, 0)), "nccl.ras", url)).toMatchObject({ status: "ok" });
    expect(result({ ...node([]), agent: { error: "cannot ask the agent at x: ECONNREFUSED" } }, "nccl.ras", url)).toMatchObject({
      status: "error",
      message: "could not check: cannot ask the agent at x: ECONNREFUSED",
    });
    expect(result(node([]), "nccl.ras")).toMatchObject({
      status: "skip",
      message: "no running agent asked (--check.agent-url): a check never asks NCCL RAS itself",
    });
  });
});

describe("output", () => {
  const r = (name: string, status: CheckResult["status"], message = "m"): CheckResult => ({ name, status, message, details: [] });

  it("exit code: 1 when a check failed, else 2 when one could not be judged, else 0", () => {
    expect(exitCode([r("a", "ok"), r("b", "skip")])).toBe(0);
    expect(exitCode([r("a", "ok"), r("b", "error")])).toBe(2);
    expect(exitCode([r("a", "error"), r("b", "fail")])).toBe(1);
    expect(exitCode([])).toBe(0);
  });

  it("the summary names what failed and what could not be checked", () => {
    expect(summary([r("a", "ok"), r("b", "skip")])).toBe("ringwatch check: healthy (1 ok, 1 skipped)");
    expect(summary([r("a", "fail"), r("b", "error"), r("c", "fail")])).toBe("ringwatch check: unhealthy: a, c failed; could not check b (0 ok, 0 skipped)");
    expect(summary([r("b", "error")])).toBe("ringwatch check: unknown: could not check b (0 ok, 0 skipped)");
  });

  it("text: aligned columns, controls escaped; JSON: the same results", () => {
    const results = [r("gpu.count", "ok", "1 GPU"), r("net.mtu", "fail", "ib\u001b[31m0 2044")];
    expect(formatText(results)).toBe(
      "ok    gpu.count      1 GPU\nFAIL  net.mtu        ib\\x1b[31m0 2044\nringwatch check: unhealthy: net.mtu failed (1 ok, 0 skipped)\n",
    );
    const doc = JSON.parse(
      formatJson({ version: "1.2.3", nowMs: NOW, results, sources: [{ collector: "gpu", state: "ok" }], expectations: { "gpu.count": 1 } }),
    ) as Record<string, unknown>;
    expect(doc).toEqual({
      version: "1.2.3",
      time: "2025-10-01T12:00:00.000Z",
      status: "unhealthy",
      exit_code: 1,
      checks: results,
      sources: [{ collector: "gpu", state: "ok" }],
      expectations: { "gpu.count": 1 },
    });
  });
});
