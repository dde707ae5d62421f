/**
 * (c) Steady state with every collector on, on the bench node: the fake dmon prints 8 GPUs every
 * second, 16 NCCL logs get 20,000 COLL lines/s in total (a separate writer process), the
 * infiniband (sysfs, 8 ports), gdr and mtu polls run every --collector.interval, and a
 * Prometheus-like client scrapes /metrics every few seconds. Measures the agent process's own CPU
 * (utime + stime from /proc/<pid>/stat; its children, the fake tools, are not included) as a share
 * of one core, and its RSS (sampled every second; VmHWM for the peak). Checks that every line
 * written was read and that the last scrape covers the whole node.
 */
import { join } from "node:path";
import { Agent } from "node:http";
import { startBenchAgent } from "./agent-proc.js";
import type { BenchConfig } from "./config.js";
import { coverage, plainSample, type Coverage } from "./coverage.js";
import type { BenchNode } from "./node-fixture.js";
import { cpuSeconds, memory } from "./proc.js";
import { bodyText, percentile, scrapeOnce } from "./scrape-client.js";
import { startWriter } from "./writer-proc.js";

export interface SteadyFullResult {
  seconds: number;
  linesPerSecond: number;
  pollInterval: string;
  scrapeEverySeconds: number;
  scrapes: number;
  scrapeP50Ms: number;
  cpuPercentOfOneCore: number;
  /** RSS before the NCCL logs existed (collectors running, 2 s after start). */
  idleRssMB: number;
  rssMedianMB: number;
  rssEndMB: number;
  rssPeakMB: number;
  /** RSS once a second over the measured window, MB. */
  rssSamplesMB: number[];
  heapUsedMB: number;
  heapTotalMB: number;
  externalMB: number;
  linesWritten: number;
  linesRead: number;
  coverage: Coverage;
  profile?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const MB = 1024 * 1024;

export async function runSteadyFull(node: BenchNode, cfg: BenchConfig, outDir: string): Promise<SteadyFullResult> {
  const ncclDir = join(node.root, "nccl-full");
  const profileDir = join(outDir, "profiles");
  // Under BENCH_PROFILE the agent runs with --cpu-prof: its CPU figure is then a little higher.
  const nodeArgs = [...cfg.agentNodeArgs, ...(cfg.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=steady-full.cpuprofile"] : [])];
  const agent = await startBenchAgent(node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir }), node.env, nodeArgs);
  const http = new Agent({ keepAlive: true, maxSockets: 1 });
  const scrapeMs: number[] = [];
  let last = "";
  const scrape = async (): Promise<void> => {
    const s = await scrapeOnce(`${agent.url}/metrics`, http);
    scrapeMs.push(s.ms);
    last = bodyText(s);
  };
  const timer = setInterval(() => void scrape().catch(() => undefined), cfg.scrapeEverySeconds * 1000);
  let writer: ReturnType<typeof startWriter> | undefined;
  try {
    await sleep(2000);
    const idle = await memory(agent.pid);
    writer = startWriter(ncclDir, cfg.fullLinesPerSecond, cfg.fullWarmupSeconds + cfg.fullSeconds + 2);
    await sleep(cfg.fullWarmupSeconds * 1000);
    const scrapesBefore = scrapeMs.length;
    const c0 = await cpuSeconds(agent.pid);
    const t0 = performance.now();
    const rss: number[] = [];
    while (performance.now() - t0 < cfg.fullSeconds * 1000) {
      await sleep(Math.min(1000, cfg.fullSeconds * 1000 - (performance.now() - t0)));
      rss.push((await memory(agent.pid)).rssMB);
    }
    const c1 = await cpuSeconds(agent.pid);
    const elapsed = (performance.now() - t0) / 1000;
    const end = await memory(agent.pid);
    const scrapes = scrapeMs.length - scrapesBefore;
    const written = await writer.done;
    await sleep(2000); // the follower reads hot files every 500 ms
    await scrape();
    const samples = rss.map((x) => Number(x.toFixed(1)));
    rss.sort((a, b) => a - b);
    return {
      seconds: elapsed,
      linesPerSecond: cfg.fullLinesPerSecond,
      pollInterval: cfg.pollInterval,
      scrapeEverySeconds: cfg.scrapeEverySeconds,
      scrapes,
      scrapeP50Ms: percentile(
        [...scrapeMs].sort((a, b) => a - b),
        50,
      ),
      cpuPercentOfOneCore: ((c1 - c0) / elapsed) * 100,
      idleRssMB: idle.rssMB,
      rssMedianMB: percentile(rss, 50),
      rssEndMB: end.rssMB,
      rssPeakMB: end.peakMB,
      rssSamplesMB: samples,
      heapUsedMB: (plainSample(last, "nodejs_heap_size_used_bytes") ?? NaN) / MB,
      heapTotalMB: (plainSample(last, "nodejs_heap_size_total_bytes") ?? NaN) / MB,
      externalMB: (plainSample(last, "nodejs_external_memory_bytes") ?? NaN) / MB,
      linesWritten: written.lines,
      linesRead: plainSample(last, "ringwatch_nccl_log_lines_total") ?? NaN,
      coverage: coverage(last),
      ...(cfg.profile ? { profile: join(profileDir, "steady-full.cpuprofile") } : {}),
    };
  } finally {
    clearInterval(timer);
    http.destroy();
    await writer?.stop().catch(() => undefined);
    await agent.stop();
  }
}
