/**
 * The real agent, as users run it: the built binary as a child process, fake tools replaying real
 * captures as its children, real fixture trees, real HTTP scrapes and real signals.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { GPUD_DUMP, makeTree, type Tree } from "../collectors/infiniband/trees.js";
import { eventually, fakesDir, processesMatching, processesWithEnv, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { parsePromText } from "../helpers/exposition.js";
import { callLog, fakeEnv, fakeFlags, tempDir } from "./env.js";

let tree: Tree;
const agents: RunningAgent[] = [];
beforeAll(() => {
  tree = makeTree(GPUD_DUMP);
});
afterAll(() => tree.remove());
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop("SIGTERM");
});

async function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningAgent> {
  const a = await startAgent(args, env);
  agents.push(a);
  return a;
}

const dmonStarts = (log: string): number =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.includes(" dmon ")).length;

describe("agent end to end", () => {
  it("serves every collector's metrics over HTTP from real-format sources", async () => {
    const a = await start(fakeFlags(tree.root), fakeEnv());
    const text = await eventually(async () => {
      const t = await a.scrape();
      // Every collector's first poll done (each reports collector_success once it has run), not only gpu's and mtu's.
      const polled = ["gpu", "infiniband", "gdr", "mtu"].every((c) => sample(t, `ringwatch_collector_success{collector="${c}"}`) !== undefined);
      // The GPU's identity comes from its own --query-gpu run, beside the dmon stream: wait for both.
      const identified = samplesOf(t, "ringwatch_gpu_info").length > 0;
      return polled && identified && sample(t, 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined ? t : undefined;
    });
    // gpu: the H100 gpu-burn capture prints pwr 631..636 W, sm 100 %, mclk 2619 MHz, pclk 1980 MHz.
    expect(sample(text, 'ringwatch_gpu_power_watts{gpu="0"}')).toBeGreaterThanOrEqual(631);
    expect(sample(text, 'ringwatch_gpu_power_watts{gpu="0"}')).toBeLessThanOrEqual(636);
    expect(sample(text, 'ringwatch_gpu_utilization_ratio{gpu="0"}')).toBe(1);
    expect(sample(text, 'ringwatch_gpu_memory_clock_hertz{gpu="0"}')).toBe(2619e6);
    expect(sample(text, 'ringwatch_gpu_sm_clock_hertz{gpu="0"}')).toBe(1980e6);
    expect(samplesOf(text, "ringwatch_gpu_info")[0]).toMatch(
      /gpu="0".*name="NVIDIA H100 80GB HBM3".*pci_bus_id="00000000:00:09.0".*driver_version="590.48.01"/,
    );
    expect(sample(text, 'ringwatch_collector_success{collector="gpu"}')).toBe(1);
    expect(sample(text, "ringwatch_gpu_dmon_up")).toBe(1);
    // infiniband: gpud's H100 tree, 8 CX-7 HCAs at NDR 400 Gb/s, ACTIVE / LinkUp.
    expect(sample(text, 'ringwatch_collector_success{collector="infiniband"}')).toBe(1);
    expect(sample(text, 'ringwatch_infiniband_state_id{device="mlx5_0",port="1"}')).toBe(4);
    expect(sample(text, 'ringwatch_infiniband_physical_state_id{device="mlx5_0",port="1"}')).toBe(5);
    expect(sample(text, 'ringwatch_infiniband_rate_bytes_per_second{device="mlx5_0",port="1"}')).toBe(400 * 125_000_000);
    // gdr: /proc/modules with nvidia_peermem used by ib_core.
    expect(sample(text, "ringwatch_gdr_peermem_loaded")).toBe(1);
    expect(sample(text, 'ringwatch_collector_success{collector="gdr"}')).toBe(1);
    // mtu: old iproute2 (no -j) on an Azure HPC VM: IPoIB at 4092, eth0 at 1500.
    expect(sample(text, 'ringwatch_network_mtu_bytes{device="ibP257s71127"}')).toBe(4092);
    expect(sample(text, 'ringwatch_network_mtu_bytes{device="eth0"}')).toBe(1500);
    expect(sample(text, 'ringwatch_network_info{device="ibP257s71127",link_type="infiniband",operstate="DOWN"}')).toBe(1);
    expect(sample(text, 'ringwatch_network_source_info{source="ip-text"}')).toBe(1);
    // self
    expect(samplesOf(text, "ringwatch_build_info")).toHaveLength(1);
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(0);

    expect(await a.scrape("/healthz")).toBe("ok\n");
    expect(await a.scrape("/")).toContain('href="/metrics"');
    expect((await fetch(a.url + "/nope")).status).toBe(404);
    expect(a.stderr()).toBe("");
  });

  it("--collector.disable-defaults --collector.mtu: only the mtu collector runs, and only its series and the agent's own are served", async () => {
    const mtuOnly = fakeFlags(tree.root).filter((f) => /^--collector\.(mtu\.|interval=|timeout=)/.test(f));
    const a = await start(["--collector.disable-defaults", "--collector.mtu", ...mtuOnly], fakeEnv());
    const text = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, 'ringwatch_collector_success{collector="mtu"}') === 1 ? t : undefined;
    });
    const series = parsePromText(text).series;
    expect(new Set(series.flatMap((s) => (s.labels.collector !== undefined ? [s.labels.collector] : [])))).toEqual(new Set(["mtu"]));
    // The agent's own families and the mtu collector's (ringwatch_network_*); no other collector's.
    const families = new Set(series.map((s) => s.name).filter((n) => n.startsWith("ringwatch_")));
    expect([...families].filter((n) => !/^ringwatch_(build_info|config_|web_|collector_|network_)/.test(n))).toEqual([]);
    expect(sample(text, 'ringwatch_network_mtu_bytes{device="eth0"}')).toBe(1500);
    const listening = a
      .logs()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "ringwatch listening");
    expect(listening?.collectors).toEqual(["mtu"]);
    expect(a.stderr()).toBe("");
  });

  it("on a machine without GPUs, InfiniBand or tools: serves, reports 0 and logs each absence once", async () => {
    const empty = tempDir();
    const missing = join(empty, "missing");
    const a = await start([
      `--collector.gpu.nvidia-smi=${missing}`,
      "--collector.gpu.interval=1s",
      `--path.sysfs=${empty}`,
      `--path.procfs=${empty}`,
      `--collector.infiniband.ibstat=${missing}`,
      `--collector.gdr.lsmod=${missing}`,
      `--collector.mtu.ip=${missing}`,
      "--collector.interval=1s",
    ]);
    await new Promise((r) => setTimeout(r, 3500)); // three more polls of every collector
    const text = await a.scrape();
    for (const c of ["gpu", "infiniband", "gdr", "mtu"]) expect(sample(text, `ringwatch_collector_success{collector="${c}"}`)).toBe(0);
    expect(samplesOf(text, "ringwatch_gpu_utilization_ratio")).toEqual([]);
    const logs = a.logs().map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const c of ["gpu", "infiniband", "gdr", "mtu"]) {
      const about = logs.filter((l) => l.collector === c && (l.level as number) >= 30);
      expect(about.length, `${c}: ${JSON.stringify(about)}`).toBe(1);
      expect(about[0]?.level).toBe(30); // info: absence is normal
    }
    expect(logs.some((l) => JSON.stringify(l).includes("    at "))).toBe(false); // no stack traces
    expect(a.stderr()).toBe("");
  });

  it("kills a silent dmon, withdraws its series meanwhile and restarts it", async () => {
    const log = callLog();
    const a = await start(fakeFlags(tree.root), fakeEnv({ FAKE_NVSMI_MODE: "stall", FAKE_NVSMI_LOG: log, FAKE_NVSMI_DMON_TOKEN: log }));
    await eventually(async () => (sample(await a.scrape(), 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined ? true : undefined));
    // Silent for 3 intervals (3 s): the series go, the gpu collector reports failure. Waits for dmon_up 0, not
    // for GPU 0's series alone: the rows of one sample set arrive ms apart, so GPU 0 can go stale a moment
    // before the child's last row does (one GPU withdrawn while dmon still delivers is a state of its own).
    const withdrawn = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, "ringwatch_gpu_dmon_up") === 0 ? t : undefined;
    });
    expect(sample(withdrawn, 'ringwatch_gpu_power_watts{gpu="0"}')).toBeUndefined();
    expect(samplesOf(withdrawn, "ringwatch_gpu_power_watts")).toEqual([]);
    expect(sample(withdrawn, 'ringwatch_collector_success{collector="gpu"}')).toBe(0);
    // ...then the child is killed and a new one started, which delivers again.
    const again = await eventually(async () => {
      const t = await a.scrape();
      return (sample(t, "ringwatch_gpu_dmon_restarts_total") ?? 0) >= 1 && sample(t, 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined ? t : undefined;
    }, 20_000);
    expect(sample(again, 'ringwatch_collector_success{collector="gpu"}')).toBe(1);
    expect(dmonStarts(log)).toBeGreaterThanOrEqual(2);
    // The old child is gone: one dmon of this agent's left.
    const mine = new Set(await processesWithEnv(`FAKE_NVSMI_DMON_TOKEN=${log}`));
    expect((await processesMatching(`${fakesDir}/nvidia-smi dmon`)).filter((p) => mine.has(p))).toHaveLength(1);
  });

  it("restarts a crashing dmon with growing delays", async () => {
    const log = callLog();
    const a = await start(fakeFlags(tree.root), fakeEnv({ FAKE_NVSMI_MODE: "crash", FAKE_NVSMI_CRASH_ROWS: "0", FAKE_NVSMI_LOG: log }));
    await new Promise((r) => setTimeout(r, 6000));
    // Backoff 1 s, 2 s, 4 s...: about 3-4 starts in 6 s, never one per few ms.
    const starts = dmonStarts(log);
    expect(starts).toBeGreaterThanOrEqual(2);
    expect(starts).toBeLessThanOrEqual(5);
    const text = await a.scrape();
    expect(sample(text, 'ringwatch_collector_success{collector="gpu"}')).toBe(0);
    expect(samplesOf(text, "ringwatch_gpu_power_watts")).toEqual([]);
    const warns = a.logs().filter((l) => l.includes('"collector":"gpu"') && l.includes('"level":40'));
    expect(warns.length).toBe(1); // the same crash is not logged at warn again and again
  });

  it("survives garbled tool output", async () => {
    const a = await start(fakeFlags(tree.root), fakeEnv({ FAKE_NVSMI_MODE: "garble", FAKE_IP_MODE: "garble" }));
    const text = await eventually(async () => {
      const t = await a.scrape();
      const ready =
        (sample(t, "ringwatch_gpu_dmon_malformed_lines_total") ?? 0) > 0 &&
        sample(t, 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined &&
        sample(t, 'ringwatch_collector_success{collector="mtu"}') !== undefined;
      return ready ? t : undefined;
    });
    expect(sample(text, 'ringwatch_collector_success{collector="gpu"}')).toBe(1);
    expect(sample(text, 'ringwatch_collector_success{collector="mtu"}')).toBe(0);
    expect(samplesOf(text, "ringwatch_network_mtu_bytes")).toEqual([]);
    expect(a.child.exitCode).toBeNull();
  });

  it("ends within 5 s of SIGTERM with exit 0 and no child left, even with a tool hanging", async () => {
    const token = `RINGWATCH_TEST_TOKEN=${process.pid}-${Date.now()}`;
    const [key, value] = token.split("=") as [string, string];
    const a = await start(fakeFlags(tree.root), fakeEnv({ FAKE_IP_MODE: "hang", [key]: value }));
    await eventually(async () => (sample(await a.scrape(), 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined ? true : undefined));
    await eventually(async () => ((await processesMatching(`${fakesDir}/ip`)).length > 0 ? true : undefined));
    const { code, ms } = await a.stop("SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(5000);
    expect(await processesWithEnv(token)).toEqual([]);
  });
});
