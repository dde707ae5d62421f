/**
 * The node view's GPU side: a rank's GPU is found by its nvmlDev, else by its NCCL busId against
 * the PCI bus ids of the GPU readings (collectors/nccl/verdict/gpu-readings.ts, the interface the
 * gpu collector satisfies), and read from the latest sample.
 */
import { describe, expect, it } from "vitest";
import type { GpuCollector } from "../../../collectors/gpu/collector.js";
import type { GpuReadings, GpuSampleReading, GpuIdentityReading } from "../../../collectors/nccl/verdict/gpu-readings.js";
import { isGpuReadings } from "../../../collectors/nccl/verdict/gpu-readings.js";
import { createNodeView } from "../../../collectors/nccl/node-view.js";
import { ncclBusIdToPci } from "../../../collectors/nccl/logs/parse/bus-id.js";
import type { RankState } from "../../../collectors/nccl/logs/state/model.js";

// The gpu collector offers exactly what the detector declares (a compile-time check: tsc fails when they drift).
const _offered: (c: GpuCollector) => GpuReadings = (c) => c;

function readings(gpus: Array<GpuIdentityReading & { sample?: GpuSampleReading["values"] }>): GpuReadings {
  return {
    identities: () => new Map(gpus.map((g) => [g.index, g])),
    latestSamples: () => new Map(gpus.filter((g) => g.sample).map((g) => [g.index, { values: g.sample ?? {} }])),
  };
}

const rank = (r: Partial<RankState>): RankState => ({ rank: 0, ...r }) as RankState;

describe("node view: a rank's GPU", () => {
  const gpu = readings([
    { index: "0", pciBusId: "00000000:18:00.0", powerLimitWatts: 700, sample: { sm: 100, pwr: 110, fb: 70_000 } },
    { index: "1", pciBusId: "00000000:C8:00.0", powerLimitWatts: 700, sample: { sm: 0, pwr: 69, fb: 500 } },
    { index: "2", pciBusId: "00000000:DB:00.0", powerLimitWatts: 700 },
  ]);
  const view = createNodeView({ procfsRoot: "/nonexistent", checkPids: false, gpu });

  it("by nvmlDev, with the sample's SM, power and memory and the power limit", () => {
    expect(view.gpuFor(rank({ nvmlDev: 0 }))).toEqual({ gpu: "0", sm: 100, powerW: 110, powerLimitW: 700, fbUsedMiB: 70_000 });
  });

  it("by NCCL's busId (domain, bus, device and function run together) when there is no nvmlDev", () => {
    expect(ncclBusIdToPci("c8000")).toBe("0:c8:00.0");
    // Leading zeros dropped: buses below 0x10, as the real capture nccl/02 logs them (`busId 7000`, `busId b000`).
    expect(ncclBusIdToPci("7000")).toBe("0:07:00.0");
    expect(ncclBusIdToPci("b000")).toBe("0:0b:00.0");
    expect(ncclBusIdToPci("10b3a1")).toBe("1:0b:3a.1");
    expect(ncclBusIdToPci("busy")).toBeUndefined();
    expect(view.gpuFor(rank({ busId: "c8000" }))).toEqual({ gpu: "1", sm: 0, powerW: 69, powerLimitW: 700, fbUsedMiB: 500 });
    expect(view.gpuFor(rank({ busId: "0x1b000" }))).toBeUndefined(); // no such GPU
  });

  it("nothing for a GPU without a fresh sample, a rank without either id, or no GPU readings", () => {
    expect(view.gpuFor(rank({ nvmlDev: 2 }))).toBeUndefined();
    expect(view.gpuFor(rank({}))).toBeUndefined();
    expect(createNodeView({ procfsRoot: "/nonexistent", checkPids: false }).gpuFor(rank({ nvmlDev: 0 }))).toBeUndefined();
  });

  it("tells a collector that offers GPU readings from one that does not", () => {
    expect(isGpuReadings(gpu)).toBe(true);
    expect(isGpuReadings({ name: "mtu", mode: "poll" })).toBe(false);
    expect(isGpuReadings(undefined)).toBe(false);
  });
});
