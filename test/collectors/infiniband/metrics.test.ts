import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { isSaturated, PERFQUERY_TO_SYSFS, PMA_WIDTH, PORT_COUNTERS } from "../../../collectors/infiniband/counters.js";
import { createLimiter } from "../../../collectors/infiniband/limit.js";
import { buildSamples, createInfinibandMetrics } from "../../../collectors/infiniband/metrics.js";
import { emptyPort, type IbDevice } from "../../../collectors/infiniband/types.js";

function device(overrides: Partial<ReturnType<typeof emptyPort>> = {}): IbDevice {
  return { name: "mlx5_0", ports: [{ ...emptyPort(1), ...overrides }] };
}

describe("buildSamples", () => {
  it("absent values give no series (absent ≠ 0)", () => {
    const set = buildSamples([device()]);
    expect([...set.keys()]).toEqual(["info"]);
    expect(set.get("info")).toEqual([{ labels: { device: "mlx5_0", port: "1" }, value: 1 }]);
  });

  it("saturation is exact: 2^width - 1 only, for fixed-width counters only", () => {
    const set = buildSamples([
      device({
        counters: { symbol_error: 65535, port_rcv_errors: 65534, link_downed: 255, local_link_integrity_errors: 15, unicast_rcv_packets: 4294967295 },
        fixedWidth: ["symbol_error", "port_rcv_errors", "link_downed", "local_link_integrity_errors", "unicast_rcv_packets"],
      }),
    ]);
    const sat: Record<string, number> = {};
    for (const s of set.get("counters_saturated") ?? []) sat[s.labels.counter ?? ""] = s.value;
    expect(sat).toEqual({ symbol_error: 1, port_rcv_errors: 0, link_downed: 1, local_link_integrity_errors: 1 });
  });

  it("counters_unreadable only where the source counts files (sysfs)", () => {
    expect(buildSamples([device({ unreadable: 3 })]).get("counters_unreadable")?.[0]?.value).toBe(3);
  });

  it("data counters are words × 4; legacy counters_ext too", () => {
    const set = buildSamples([device({ counters: { port_xmit_data: 10 }, countersExt: { port_rcv_data_64: 3 } })]);
    expect(set.get("port_data_transmitted_bytes_total")?.[0]?.value).toBe(40);
    expect(set.get("legacy_data_received_bytes_total")?.[0]?.value).toBe(12);
  });
});

describe("counter tables", () => {
  it("PortCounters widths follow the IBA / kernel table", () => {
    expect(isSaturated("symbol_error", 2 ** 16 - 1)).toBe(true);
    expect(isSaturated("link_error_recovery", 255)).toBe(true);
    expect(isSaturated("excessive_buffer_overrun_errors", 15)).toBe(true);
    expect(isSaturated("port_xmit_wait", 2 ** 32 - 1)).toBe(true);
    expect(isSaturated("port_xmit_wait", 2 ** 32)).toBe(false);
    expect(isSaturated("unicast_xmit_packets", 2 ** 64 - 1)).toBe(false);
    expect(Object.keys(PMA_WIDTH)).toHaveLength(17);
  });

  it("every perfquery name maps onto a sysfs counter that is exported", () => {
    const files = new Set(PORT_COUNTERS.map((d) => d.file));
    for (const file of Object.values(PERFQUERY_TO_SYSFS)) expect(files.has(file), file).toBe(true);
  });
});

describe("createInfinibandMetrics", () => {
  it("publish replaces, clear withdraws", async () => {
    const registry = new Registry();
    const m = createInfinibandMetrics(registry);
    m.publish([device({ state: 4 }), { name: "mlx5_1", ports: [{ ...emptyPort(1), state: 1 }] }]);
    expect(await registry.metrics()).toMatch(/ringwatch_infiniband_state_id\{device="mlx5_1",port="1"\} 1/);
    m.publish([device({ state: 4 })]);
    expect(await registry.metrics()).not.toMatch(/mlx5_1/);
    m.clear();
    expect(await registry.metrics()).not.toMatch(/device=/);
  });
});

describe("createLimiter", () => {
  it("caps concurrency and survives tasks that throw synchronously", async () => {
    const limit = createLimiter(2);
    let active = 0;
    let max = 0;
    const task = async (): Promise<number> => {
      active++;
      max = Math.max(max, active);
      await new Promise((r) => setTimeout(r, 5));
      active--;
      return 1;
    };
    const boom = (): Promise<number> => {
      throw new Error("boom");
    };
    const results = await Promise.allSettled([limit(task), limit(boom), limit(task), limit(task), limit(task)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
    expect(max).toBe(2);
  });
});
