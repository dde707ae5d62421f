/**
 * A tool that dies in the middle of a line (exit 1 after `Rate: 4` of `Rate: 400`, a module line
 * cut inside its size, JSON cut inside a number): `ringwatch --once` with every tool cutting its
 * output must not publish the cut value. Compared with a clean --once run on the same captures,
 * with no device filter, so the HCA whose line is cut is reported.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent, sample, samplesOf } from "../helpers/agent-process.js";
import { toolReadings } from "./lib/tool-faults.js";
import { FAULTY_DIR, rigEnv } from "./lib/tool-rig.js";

let dir: string;
let clean: string;
let cut: { code: number | null; stdout: string; stderr: string };

function flags(): string[] {
  const procfs = join(dir, "proc");
  const sysfs = join(dir, "sys");
  mkdirSync(procfs, { recursive: true });
  mkdirSync(sysfs, { recursive: true });
  return [
    "--once",
    "--no-collector.nccl",
    `--collector.gpu.nvidia-smi=${join(FAULTY_DIR, "nvidia-smi")}`,
    "--collector.infiniband.source=tools",
    `--collector.infiniband.ibstat=${join(FAULTY_DIR, "ibstat")}`,
    `--collector.infiniband.perfquery=${join(FAULTY_DIR, "perfquery")}`,
    `--path.sysfs=${sysfs}`,
    `--path.procfs=${procfs}`,
    `--collector.gdr.lsmod=${join(FAULTY_DIR, "lsmod")}`,
    `--collector.mtu.ip=${join(FAULTY_DIR, "ip")}`,
  ];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rw-midline-"));
  const faults = {
    FAULT_NVSMI_DMON: "midline",
    FAULT_NVSMI_QUERY: "midline",
    FAULT_IBSTAT: "midline",
    FAULT_PERFQUERY: "midline",
    FAULT_LSMOD: "midline",
    FAULT_IP: "midline",
    FAULT_EXIT: "1",
  };
  const [a, b] = await Promise.all([runAgent(flags(), rigEnv()), runAgent(flags(), rigEnv(faults))]);
  expect(a.code).toBe(0);
  clean = a.stdout;
  cut = b;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("tools that die mid-line (--once)", () => {
  it("the clean run reads every source", () => {
    for (const c of ["gpu", "infiniband", "gdr", "mtu"]) expect(sample(clean, `ringwatch_collector_success{collector="${c}"}`), c).toBe(1);
    expect(samplesOf(clean, "ringwatch_infiniband_rate_bytes_per_second")).toHaveLength(9);
  });

  it("exits 0, reports the one-shot collectors failed, and serves no cut-off value", () => {
    expect(cut.code).toBe(0);
    for (const c of ["infiniband", "gdr", "mtu"]) expect(sample(cut.stdout, `ringwatch_collector_success{collector="${c}"}`), c).toBe(0);
    const allowed = new Set(toolReadings(clean));
    const gpuRows = /^ringwatch_gpu_(?!info)/; // dmon rows: the cut run stops at another sample set
    const wrong = toolReadings(cut.stdout).filter((l) => !gpuRows.test(l) && !allowed.has(l));
    expect(wrong).toEqual([]);
    // ibstat's cut line is `Rate: 4` of mlx5_6: the rates kept are 400 Gb/s ones.
    const rates = samplesOf(cut.stdout, "ringwatch_infiniband_rate_bytes_per_second").map((l) => Number(l.split(" ").pop()));
    expect(rates.length).toBeGreaterThan(0);
    expect(rates.every((r) => r === 50e9)).toBe(true);
  });

  it("dmon rows read before the cut are real samples; the identity line cut in the GPU name is dropped", () => {
    const capture = readFileSync(rigEnv().FAKE_NVSMI_DMON as string, "utf8")
      .split("\n")
      .filter((l) => /^\s+\d/.test(l));
    const watts = new Set(capture.map((l) => Number(l.trim().split(/\s+/)[1])));
    const power = sample(cut.stdout, 'ringwatch_gpu_power_watts{gpu="0"}');
    expect(power !== undefined && watts.has(power)).toBe(true);
    expect(samplesOf(cut.stdout, "ringwatch_gpu_info")).toEqual([]);
  });
});
