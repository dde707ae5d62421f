/**
 * The gpu collector with real child processes: the real createExec() runs test/fakes/nvidia-smi,
 * which replays real captures. Intervals are 1 s; time bounds are generous.
 */
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { CollectorError } from "../../../collectors/collector.js";
import { createExec, type Exec } from "../../../collectors/exec.js";
import { createGpuCollector, type GpuCollector, type GpuOptions } from "../../../collectors/gpu/collector.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { eventually } from "../../helpers/eventually.js";
import { captureLogger, isAlive, series, sleep, value, type LogLine } from "./helpers.js";

const FAKE = fileURLToPath(new URL("../../fakes/nvidia-smi", import.meta.url));
const DMON = (f: string): string => join(fixturesDir, "tools/nvidia_smi_dmon", f);
const QUERY = (f: string): string => join(fixturesDir, "tools/nvidia_smi_query_csv", f);
const H100_IDLE = DMON("05-nvgpuexp-h100-80gb-590.48.01-idle.txt");
const H100_QUERY = QUERY("04-nvgpuexp-h100-80gb-590.48.01-allfields.txt");
const EIGHT_GPUS = DMON("01-slurm-on-aws-s-pcut-8gpu-g7e.txt");
const TWO_GPUS = DMON("02-slurm-on-aws-s-pt-2gpu.txt");

interface Rig {
  c: GpuCollector;
  registry: Registry;
  exec: Exec;
  lines: LogLine[];
  log: string;
}

let rigs: Rig[] = [];

function rig(env: Record<string, string>, opts: Partial<GpuOptions> = {}): Rig {
  for (const k of Object.keys(process.env)) if (k.startsWith("FAKE_NVSMI_")) delete process.env[k];
  const log = join(tmpdir(), `fake-nvsmi-${process.pid}-${rigs.length}.log`);
  rmSync(log, { force: true });
  Object.assign(process.env, { FAKE_NVSMI_LOG: log, FAKE_NVSMI_QUERY: H100_QUERY, FAKE_NVSMI_PACE_MS: "200", ...env });
  const registry = new Registry();
  const exec = createExec();
  const { logger, lines } = captureLogger();
  const c = createGpuCollector({ registry, logger, exec, now: Date.now }, { nvidiaSmi: FAKE, intervalSeconds: 1, ...opts });
  const r = { c, registry, exec, lines, log };
  rigs.push(r);
  return r;
}

/** Invocations of the fake so far: [pid, args]. */
function invocations(r: Rig): [number, string][] {
  let text = "";
  try {
    text = readFileSync(r.log, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => [Number(l.slice(0, l.indexOf(" "))), l.slice(l.indexOf(" ") + 1)]);
}
const dmonPids = (r: Rig): number[] =>
  invocations(r)
    .filter(([, a]) => a.startsWith("dmon"))
    .map(([p]) => p);
const powerSeries = async (r: Rig): Promise<number> => (await series(r.registry, "ringwatch_gpu_power_watts")).length;
const restarts = async (r: Rig): Promise<number> => (await value(r.registry, "ringwatch_gpu_dmon_restarts_total")) ?? 0;

/** The retry delays (seconds) of the first `n` ended dmon children, from the line the collector logs for each (warn once, then debug). */
async function announcedDelays(r: Rig, n: number): Promise<number[]> {
  const delays = (): number[] => r.lines.flatMap((l) => /^gpu: .*; restarting in (\d+)s$/.exec(l.msg)?.slice(1).map(Number) ?? []);
  await eventually(() => delays().length >= n, { timeoutMs: 15_000, what: `${n} ended children` });
  return delays().slice(0, n);
}

afterEach(async () => {
  for (const r of rigs) {
    await r.c.stop?.();
    await r.exec.killAll(500);
    rmSync(r.log, { force: true });
  }
  rigs = [];
});

describe("gpu collector (stream, real child processes)", () => {
  it("publishes dmon samples and identity on the registry", async () => {
    const r = rig({ FAKE_NVSMI_DMON: H100_IDLE });
    r.c.start?.();
    await eventually(async () => (await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "0" })) === 69, { what: "power sample" });
    await eventually(async () => (await series(r.registry, "ringwatch_gpu_info")).length === 1, { what: "identity" });
    const gpu = { gpu: "0" };
    expect(await value(r.registry, "ringwatch_gpu_utilization_ratio", gpu)).toBe(0);
    expect(await value(r.registry, "ringwatch_gpu_sm_clock_hertz", gpu)).toBe(345e6);
    expect(await value(r.registry, "ringwatch_gpu_memory_clock_hertz", gpu)).toBe(2619e6);
    expect(await value(r.registry, "ringwatch_gpu_temperature_celsius", gpu)).toBe(41);
    expect([47, 48]).toContain(await value(r.registry, "ringwatch_gpu_memory_temperature_celsius", gpu));
    expect(await series(r.registry, "ringwatch_gpu_info")).toEqual([
      {
        labels: {
          gpu: "0",
          uuid: "GPU-00000000-0000-0000-0000-000000000000",
          name: "NVIDIA H100 80GB HBM3",
          pci_bus_id: "00000000:00:09.0",
          driver_version: "590.48.01",
        },
        value: 1,
      },
    ]);
    expect(await value(r.registry, "ringwatch_gpu_power_limit_watts", gpu)).toBe(700);
    expect(await value(r.registry, "ringwatch_gpu_dmon_up")).toBe(1);
    expect(r.c.health?.()).toMatchObject({ ok: true });
    expect(r.c.health?.().lastSuccessMs).toBeGreaterThan(Date.now() - 5000);
    const latest = r.c.latestSamples().get("0");
    expect(latest?.values).toMatchObject({ pwr: 69, sm: 0, pclk: 345 });
    expect(latest?.atMs).toBeGreaterThan(Date.now() - 5000);
    expect(r.c.identities().get("0")).toMatchObject({ pciBusId: "00000000:00:09.0", powerLimitWatts: 700 });
    const args = invocations(r).map(([, a]) => a);
    expect(args).toContain("dmon -s pucvmet -d 1");
    expect(args).toContain("--query-gpu=index,uuid,name,pci.bus_id,driver_version,power.limit --format=csv,noheader,nounits");
    expect(dmonPids(r)).toHaveLength(1);
  });

  it("falls back to dmon's default groups when an old driver rejects the configured ones", async () => {
    const r = rig({ FAKE_NVSMI_DMON: H100_IDLE, FAKE_NVSMI_GROUPS: "puc" });
    r.c.start?.();
    await eventually(async () => (await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "0" })) === 69, { what: "power sample after fallback" });
    const dmonArgs = invocations(r)
      .map(([, a]) => a)
      .filter((a) => a.startsWith("dmon"));
    expect(dmonArgs).toEqual(["dmon -s pucvmet -d 1", "dmon -s puc -d 1"]);
    expect(r.lines.filter((l) => l.msg.includes('falling back to "puc"'))).toHaveLength(1);
  });

  it("publishes every GPU of an 8-GPU node; `-` columns have no series", async () => {
    const r = rig({ FAKE_NVSMI_DMON: EIGHT_GPUS }, { groups: "pcut", intervalSeconds: 2 });
    r.c.start?.();
    await eventually(async () => (await powerSeries(r)) === 8, { what: "8 GPUs" });
    expect(await series(r.registry, "ringwatch_gpu_memory_temperature_celsius")).toEqual([]);
    expect((await series(r.registry, "ringwatch_gpu_pcie_receive_bytes_per_second")).length).toBe(8);
    expect(invocations(r).map(([, a]) => a)).toContain("dmon -s pcut -d 2");
    expect([...r.c.latestSamples().keys()].sort()).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
  });

  it("kills and restarts a stalled child and withdraws its series meanwhile", async () => {
    const r = rig({ FAKE_NVSMI_DMON: TWO_GPUS, FAKE_NVSMI_MODE: "stall" });
    r.c.start?.();
    await eventually(async () => (await powerSeries(r)) === 2, { what: "first samples" });
    const firstPid = dmonPids(r)[0] as number;
    let whileDown: { up: number | undefined; samples: number; ok: boolean | undefined } | undefined;
    let reasonWhileDown = "";
    await eventually(
      async () => {
        const n = await powerSeries(r);
        if (whileDown === undefined && n === 0) {
          // Recorded when first seen, asserted after the wait (a throw here would only be retried).
          whileDown = { up: await value(r.registry, "ringwatch_gpu_dmon_up"), samples: r.c.latestSamples().size, ok: r.c.health?.().ok };
          reasonWhileDown = r.c.health?.().reason ?? "";
        }
        return whileDown !== undefined && n === 2 && (await restarts(r)) >= 1;
      },
      { timeoutMs: 12_000, what: "withdrawal, then restart with fresh samples" },
    );
    expect(whileDown).toEqual({ up: 0, samples: 0, ok: false });
    expect(reasonWhileDown).toMatch(/no sample from nvidia-smi dmon|silent/);
    expect(dmonPids(r).length).toBeGreaterThanOrEqual(2);
    expect(isAlive(firstPid)).toBe(false);
    expect(r.c.health?.().ok).toBe(true);
  });

  it("restarts a child that exits at once with growing delays", async () => {
    const r = rig({ FAKE_NVSMI_DMON: TWO_GPUS, FAKE_NVSMI_MODE: "crash", FAKE_NVSMI_CRASH_ROWS: "0" });
    r.c.start?.();
    // 1 s, 2 s, 4 s: fixed 1 s retries would announce 1, 1, 1.
    expect(await announcedDelays(r, 3)).toEqual([1, 2, 4]);
    expect(dmonPids(r)).toHaveLength(3);
    const h = r.c.health?.();
    expect(h?.ok).toBe(false);
    expect(h?.reason).toMatch(/exited with code 1; restarting in \d+s/);
    expect(r.lines.filter((l) => l.level >= 40 && l.msg.includes("exited with code 1"))).toHaveLength(1);
  });

  it("restarts a child that crashes after delivering samples without growing the delay", async () => {
    const r = rig({ FAKE_NVSMI_DMON: TWO_GPUS, FAKE_NVSMI_MODE: "crash", FAKE_NVSMI_CRASH_ROWS: "4", FAKE_NVSMI_PACE_MS: "100" });
    r.c.start?.();
    // The delay goes back to 1 s after a child that delivered samples; doubling would announce 1, 2, 4.
    expect(await announcedDelays(r, 3)).toEqual([1, 1, 1]);
    expect(await restarts(r)).toBeGreaterThanOrEqual(2);
  });

  it("an identity query failure is logged once and does not stop samples", async () => {
    const r = rig({
      FAKE_NVSMI_DMON: H100_IDLE,
      FAKE_NVSMI_QUERY: join(fixturesDir, "tools/errors/04-nvsmi-device-handle-unknown-error-xxd3vin-workspace-19.txt"),
      FAKE_NVSMI_MODE: "crash",
      FAKE_NVSMI_CRASH_ROWS: "3",
      FAKE_NVSMI_PACE_MS: "100",
    });
    r.c.start?.();
    // One identity query per child start: wait for three (two after restarts).
    await eventually(() => invocations(r).filter(([, a]) => a.startsWith("--query-gpu")).length >= 3, { timeoutMs: 12_000, what: "3 identity queries" });
    await eventually(async () => (await powerSeries(r)) === 1, { what: "samples after restarts" });
    expect(await restarts(r)).toBeGreaterThanOrEqual(2);
    expect(await series(r.registry, "ringwatch_gpu_info")).toEqual([]);
    const warns = r.lines.filter((l) => l.level === 40 && l.msg.includes("identity query"));
    expect(warns.map((l) => l.msg)).toEqual([
      "gpu: identity query incomplete (0 GPUs identified; samples continue): Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
    ]);
  });

  it("survives garbage lines", async () => {
    const r = rig({ FAKE_NVSMI_DMON: DMON("03-xuesongtap-s-mutc-oTD-A10.txt"), FAKE_NVSMI_MODE: "garble", FAKE_NVSMI_PACE_MS: "100" });
    r.c.start?.();
    await eventually(async () => ((await value(r.registry, "ringwatch_gpu_dmon_malformed_lines_total")) ?? 0) >= 3, { what: "malformed lines counted" });
    const fb = await value(r.registry, "ringwatch_gpu_framebuffer_used_bytes", { gpu: "0" });
    expect([239, 74, 7, 478, 67].map((m) => m * 1_048_576)).toContain(fb);
    expect(r.c.health?.().ok).toBe(true);
    expect(await restarts(r)).toBe(0);
    expect(r.lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it("withdraws a GPU that falls off the bus at once and counts the event", async () => {
    // A 60 s interval: staleness (3 intervals) cannot be what withdraws the GPU within this test.
    const r = rig({ FAKE_NVSMI_DMON: H100_IDLE, FAKE_NVSMI_MODE: "lost", FAKE_NVSMI_PACE_MS: "1500" }, { intervalSeconds: 60 });
    r.c.start?.();
    await eventually(async () => (await powerSeries(r)) === 1, { what: "sample" });
    await eventually(async () => (await series(r.registry, "ringwatch_gpu_info")).length === 1, { what: "identity" });
    await eventually(async () => (await value(r.registry, "ringwatch_gpu_errors_total", { kind: "gpu_lost" })) === 1, { what: "gpu_lost counted" });
    expect(await powerSeries(r)).toBe(0);
    expect(r.lines.some((l) => l.level === 40 && l.msg.includes("GPU is lost") && l["pciBusId"] === "0000:00:09.0")).toBe(true);
  });

  it("reports nvidia-smi's failure message as health reason and error metric", async () => {
    const r = rig({ FAKE_NVSMI_MODE: "fail" });
    r.c.start?.();
    await eventually(async () => ((await value(r.registry, "ringwatch_gpu_errors_total", { kind: "driver_unreachable" })) ?? 0) >= 1, {
      what: "driver_unreachable counted",
    });
    await eventually(() => (r.c.health?.().reason ?? "").includes("couldn't communicate"), { what: "reason" });
    expect(r.c.health?.().ok).toBe(false);
    expect(r.c.health?.().reason).toContain("exited with code 9");
    expect(await series(r.registry, "ringwatch_gpu_info")).toEqual([]);
  });

  it("a missing nvidia-smi: health not ok with a clear reason, one info line, no throw", async () => {
    const r = rig({}, { nvidiaSmi: "/nonexistent/bin/nvidia-smi" });
    expect(() => r.c.start?.()).not.toThrow();
    await eventually(() => (r.c.health?.().reason ?? "").includes("not found"), { what: "reason" });
    await sleep(1500);
    const h = r.c.health?.();
    expect(h?.ok).toBe(false);
    expect(h?.reason).toBe("/nonexistent/bin/nvidia-smi not found or not executable (no NVIDIA driver tools on this node?); retrying every 60s");
    expect(r.lines.filter((l) => l.level >= 30).map((l) => [l.level, l.msg])).toEqual([
      [30, "gpu: /nonexistent/bin/nvidia-smi not found; GPU metrics are off until it appears (checked every 60s)"],
    ]);
    expect(JSON.stringify(r.lines)).not.toContain("    at ");
    expect(await value(r.registry, "ringwatch_gpu_dmon_restarts_total")).toBe(0);
    expect(await value(r.registry, "ringwatch_gpu_dmon_up")).toBe(0);
  });

  it("stop() leaves no child running and nothing published", async () => {
    const r = rig({ FAKE_NVSMI_DMON: TWO_GPUS });
    r.c.start?.();
    await eventually(async () => (await powerSeries(r)) === 2, { what: "samples" });
    const pid = dmonPids(r)[0] as number;
    expect(isAlive(pid)).toBe(true);
    await r.c.stop?.();
    expect(r.exec.running()).toBe(0);
    expect(isAlive(pid)).toBe(false);
    expect(await powerSeries(r)).toBe(0);
    expect(await series(r.registry, "ringwatch_gpu_info")).toEqual([]);
    await sleep(1500);
    expect(r.exec.running()).toBe(0);
    expect(dmonPids(r)).toEqual([pid]);
    expect(r.c.health?.().ok).toBe(false);
  });
});

describe("gpu collector once()", () => {
  it("publishes one sample set (-c 1) and identity", async () => {
    const r = rig({ FAKE_NVSMI_DMON: EIGHT_GPUS, FAKE_NVSMI_QUERY: QUERY("01-slurm-on-aws-rtxpro6000-temp-power-ecc.txt") });
    await r.c.once();
    expect(invocations(r).map(([, a]) => a)).toContain("dmon -s pucvmet -c 1 -d 1");
    expect(await powerSeries(r)).toBe(8);
    expect(await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "0" })).toBe(365);
    expect(await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "7" })).toBe(368);
    expect(await value(r.registry, "ringwatch_gpu_power_limit_watts", { gpu: "1" })).toBe(600);
    expect(await value(r.registry, "ringwatch_gpu_info", { gpu: "1", name: "NVIDIA RTX PRO 6000 Blackwell Server Edition", uuid: "" })).toBe(1);
    expect(r.exec.running()).toBe(0);
  });

  it("falls back to dmon's default groups when the driver rejects the configured ones", async () => {
    const r = rig({ FAKE_NVSMI_DMON: EIGHT_GPUS, FAKE_NVSMI_GROUPS: "puc" });
    await r.c.once();
    expect(
      invocations(r)
        .map(([, a]) => a)
        .filter((a) => a.startsWith("dmon")),
    ).toEqual(["dmon -s pucvmet -c 1 -d 1", "dmon -s puc -c 1 -d 1"]);
    expect(await powerSeries(r)).toBe(8);
  });

  it("reports the last value printed for each GPU", async () => {
    const r = rig({ FAKE_NVSMI_DMON: EIGHT_GPUS, FAKE_NVSMI_MODE: "dump" });
    await r.c.once();
    expect(await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "0" })).toBe(364);
    expect(await value(r.registry, "ringwatch_gpu_power_watts", { gpu: "5" })).toBe(379);
    expect(await value(r.registry, "ringwatch_gpu_utilization_ratio", { gpu: "1" })).toBeCloseTo(0.99, 10);
    expect(r.c.latestSamples().get("4")?.values.pwr).toBe(390);
    expect(await value(r.registry, "ringwatch_gpu_dmon_up")).toBe(1);
  });

  it("throws an absent CollectorError when nvidia-smi is missing", async () => {
    const r = rig({}, { nvidiaSmi: "/nonexistent/bin/nvidia-smi" });
    const err = await r.c.once().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CollectorError);
    expect((err as CollectorError).absent).toBe(true);
  });

  it("throws a CollectorError naming nvidia-smi's failure", async () => {
    const r = rig({ FAKE_NVSMI_MODE: "fail", FAKE_NVSMI_FAIL: join(fixturesDir, "tools/errors/16-nvml-version-mismatch-with-library-version-gputil-55.txt") });
    const err = await r.c.once().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CollectorError);
    expect((err as CollectorError).absent).toBe(false);
    expect((err as CollectorError).message).toContain("Failed to initialize NVML: Driver/library version mismatch");
    expect(await powerSeries(r)).toBe(0);
  });
});
