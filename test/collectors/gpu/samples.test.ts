/**
 * The latest dmon sample per GPU and its series: rows from real dmon captures, published into a
 * real registry; stale GPUs withdrawn by the clock given, one GPU or all at once on demand.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GpuMetrics } from "../../../collectors/gpu/metrics.js";
import { lastRowPerGpu, parseDmonText, type DmonRow } from "../../../collectors/gpu/parse-dmon.js";
import { LatestSamples } from "../../../collectors/gpu/samples.js";
import { readCapture } from "../../helpers/fixtures.js";
import { series } from "./helpers.js";

/** 2 GPUs, -s pt; their last rows: pwr 30 W and 27 W. */
const TWO = lastRowPerGpu(parseDmonText(readCapture("tools/nvidia_smi_dmon/02-slurm-on-aws-s-pt-2gpu.txt")).rows);

function row(gpu: string): DmonRow {
  const r = TWO.get(gpu);
  if (r === undefined) throw new Error(`no row of GPU ${gpu}`);
  return r;
}

function setup(staleMs = 3000): { registry: Registry; samples: LatestSamples; power: () => Promise<Record<string, number>> } {
  const registry = new Registry();
  const samples = new LatestSamples(new GpuMetrics(registry, () => undefined), staleMs);
  const power = async (): Promise<Record<string, number>> =>
    Object.fromEntries((await series(registry, "ringwatch_gpu_power_watts")).map((s) => [String(s.labels["gpu"]), s.value]));
  return { registry, samples, power };
}

describe("LatestSamples", () => {
  it("keeps each GPU's latest row with its time and publishes it", async () => {
    const { samples, power } = setup();
    samples.put("0", row("0").values, 1000);
    samples.put("1", row("1").values, 1000);
    samples.put("0", { ...row("0").values, pwr: 31 }, 2000);
    expect(await power()).toEqual({ "0": 31, "1": 27 });
    expect([...samples.all.entries()].map(([gpu, s]) => [gpu, s.atMs, s.values["pwr"]])).toEqual([
      ["0", 2000, 31],
      ["1", 1000, 27],
    ]);
  });

  it("withdraws a GPU whose row is older than staleMs, and keeps one exactly staleMs old", async () => {
    const { samples, power } = setup(3000);
    samples.put("0", row("0").values, 1000);
    samples.put("1", row("1").values, 2000);
    samples.withdrawStale(5000);
    expect(await power()).toEqual({ "1": 27 });
    expect([...samples.all.keys()]).toEqual(["1"]);
    samples.withdrawStale(5001);
    expect(await power()).toEqual({});
    expect(samples.all.size).toBe(0);
  });

  it("withdraws the GPUs named at once, and every GPU with withdrawAll()", async () => {
    const { samples, power } = setup();
    samples.put("0", row("0").values, 1000);
    samples.put("1", row("1").values, 1000);
    samples.withdraw(["1", "7"]);
    expect(await power()).toEqual({ "0": 30 });
    samples.withdrawAll();
    expect(await power()).toEqual({});
    expect(samples.all.size).toBe(0);
  });

  it("replaces every sample with a snapshot's rows (--once), and is always the same map", async () => {
    const { samples, power } = setup();
    const map = samples.all;
    samples.put("5", row("0").values, 1000);
    samples.replaceAll(TWO, 9000);
    expect(await power()).toEqual({ "0": 30, "1": 27 });
    expect([...samples.all.values()].map((s) => s.atMs)).toEqual([9000, 9000]);
    expect(samples.all).toBe(map);
  });
});
