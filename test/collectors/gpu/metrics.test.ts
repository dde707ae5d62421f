import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { COLUMN_METRICS, GpuMetrics } from "../../../collectors/gpu/metrics.js";
import { parseDmonText } from "../../../collectors/gpu/parse-dmon.js";
import { readCapture } from "../../helpers/fixtures.js";
import { series, value } from "./helpers.js";

const MIB = 1_048_576;

function setup(): { registry: Registry; m: GpuMetrics; collects: number[] } {
  const registry = new Registry();
  const collects: number[] = [];
  const m = new GpuMetrics(registry, () => collects.push(1));
  return { registry, m, collects };
}

function firstRow(file: string): ReturnType<typeof parseDmonText>["rows"][number] {
  const row = parseDmonText(readCapture(`tools/nvidia_smi_dmon/${file}`)).rows[0];
  if (!row) throw new Error(`no row in ${file}`);
  return row;
}

describe("gpu metrics", () => {
  it("converts an 8-GPU -s pcut row to base units and leaves `-` columns without a series", async () => {
    const { registry, m } = setup();
    const row = firstRow("01-slurm-on-aws-s-pcut-8gpu-g7e.txt");
    m.publishRow(row.gpu, row.values);
    const gpu = { gpu: "0" };
    expect(await value(registry, "ringwatch_gpu_utilization_ratio", gpu)).toBeCloseTo(0.99, 10);
    expect(await value(registry, "ringwatch_gpu_memory_utilization_ratio", gpu)).toBeCloseTo(0.58, 10);
    expect(await value(registry, "ringwatch_gpu_power_watts", gpu)).toBe(365);
    expect(await value(registry, "ringwatch_gpu_temperature_celsius", gpu)).toBe(55);
    expect(await value(registry, "ringwatch_gpu_sm_clock_hertz", gpu)).toBe(2415e6);
    expect(await value(registry, "ringwatch_gpu_memory_clock_hertz", gpu)).toBe(12481e6);
    expect(await value(registry, "ringwatch_gpu_encoder_utilization_ratio", gpu)).toBe(0);
    expect(await value(registry, "ringwatch_gpu_pcie_receive_bytes_per_second", gpu)).toBe(21846 * MIB);
    expect(await value(registry, "ringwatch_gpu_pcie_transmit_bytes_per_second", gpu)).toBe(6849 * MIB);
    expect(await series(registry, "ringwatch_gpu_memory_temperature_celsius")).toEqual([]);
    expect(await series(registry, "ringwatch_gpu_framebuffer_used_bytes")).toEqual([]);
  });

  it("converts memory columns (fb, bar1, ccpm) from MiB to bytes", async () => {
    const { registry, m } = setup();
    const row = firstRow("03-xuesongtap-s-mutc-oTD-A10.txt");
    m.publishRow(row.gpu, row.values);
    expect(await value(registry, "ringwatch_gpu_framebuffer_used_bytes", { gpu: "0" })).toBe(239 * MIB);
    expect(await value(registry, "ringwatch_gpu_bar1_used_bytes", { gpu: "0" })).toBe(3 * MIB);
    expect(await value(registry, "ringwatch_gpu_cc_protected_memory_used_bytes", { gpu: "0" })).toBe(0);
    expect(await series(registry, "ringwatch_gpu_power_watts")).toEqual([]);
  });

  it("maps the old `temp`, violation and ECC/PCIe error columns", async () => {
    const { registry, m } = setup();
    m.publishRow("1", { temp: 35, pviol: 12, tviol: 1, sbecc: 3, dbecc: 0, pci: 7 });
    expect(await value(registry, "ringwatch_gpu_temperature_celsius", { gpu: "1" })).toBe(35);
    expect(await value(registry, "ringwatch_gpu_power_violation_ratio", { gpu: "1" })).toBeCloseTo(0.12, 10);
    expect(await value(registry, "ringwatch_gpu_thermal_violation_active", { gpu: "1" })).toBe(1);
    expect(await value(registry, "ringwatch_gpu_ecc_single_bit_errors", { gpu: "1" })).toBe(3);
    expect(await value(registry, "ringwatch_gpu_ecc_double_bit_errors", { gpu: "1" })).toBe(0);
    expect(await value(registry, "ringwatch_gpu_pcie_replay_errors", { gpu: "1" })).toBe(7);
  });

  it("MIG rows: utilization series disappear when a later row has `-`", async () => {
    const { registry, m } = setup();
    m.publishRow("0", firstRow("06-nvgpuexp-h100-80gb-590.48.01-load.txt").values);
    expect(await value(registry, "ringwatch_gpu_utilization_ratio", { gpu: "0" })).toBe(1);
    m.publishRow("0", firstRow("08-nvgpuexp-h100-MIG-590.48.01-load.txt").values);
    expect(await series(registry, "ringwatch_gpu_utilization_ratio")).toEqual([]);
    expect(await value(registry, "ringwatch_gpu_power_watts", { gpu: "0" })).toBe(438);
  });

  it("withdraws one GPU, then all", async () => {
    const { registry, m } = setup();
    m.publishRow("0", { pwr: 100, sm: 50 });
    m.publishRow("1", { pwr: 200, sm: 60 });
    m.withdrawGpu("0");
    expect((await series(registry, "ringwatch_gpu_power_watts")).map((s) => s.labels["gpu"])).toEqual(["1"]);
    m.withdrawAllSamples();
    for (const spec of COLUMN_METRICS) expect(await series(registry, spec.name), spec.name).toEqual([]);
  });

  it("publishes identity as ringwatch_gpu_info and power limit, replacing earlier identity", async () => {
    const { registry, m } = setup();
    m.publishIdentity([
      { index: "3", uuid: "GPU-x", name: "NVIDIA H100 80GB HBM3", pciBusId: "00000000:07:00.0", driverVersion: "550.54.15", powerLimitWatts: 700 },
    ]);
    m.publishIdentity([{ index: "0", name: "NVIDIA L40S" }]);
    expect(await series(registry, "ringwatch_gpu_info")).toEqual([
      { labels: { gpu: "0", uuid: "", name: "NVIDIA L40S", pci_bus_id: "", driver_version: "" }, value: 1 },
    ]);
    expect(await series(registry, "ringwatch_gpu_power_limit_watts")).toEqual([]);
  });

  it("pre-creates ringwatch_gpu_errors_total for every kind and runs the collect hook on scrape", async () => {
    const { registry, m, collects } = setup();
    m.countError("gpu_lost");
    expect(await value(registry, "ringwatch_gpu_errors_total", { kind: "gpu_lost" })).toBe(1);
    expect(await value(registry, "ringwatch_gpu_errors_total", { kind: "driver_unreachable" })).toBe(0);
    expect(collects.length).toBeGreaterThan(0);
    // The hook metric is registered before every sample metric, so it runs first at scrape time.
    expect(registry.getMetricsAsArray()[0]?.name).toBe("ringwatch_gpu_dmon_up");
  });
});
