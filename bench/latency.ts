/**
 * (b) /metrics latency on the bench node (8 GPUs, 8 HCA ports, 16 ranks in 4 communicators, gdr,
 * mtu; NCCL logs growing at a steady rate the whole time) with 1 and with 10 concurrent scrapers:
 * ringwatch, then Debian's prometheus-node-exporter with its default collectors, then the same
 * node_exporter with --path.sysfs at the bench node's sysfs tree (its infiniband collector sees
 * the same 8 ports). Same client, same requests, same machine, one exporter at a time.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startBenchAgent } from "./agent-proc.js";
import type { BenchConfig } from "./config.js";
import { coverage, type Coverage } from "./coverage.js";
import type { BenchNode } from "./node-fixture.js";
import { startNodeExporter } from "./node-exporter.js";
import { bodyText, loadTest, scrapeOnce, type LoadResult } from "./scrape-client.js";
import { startWriter } from "./writer-proc.js";

export interface LatencyTarget {
  name: string;
  args: string[];
  /** One per concurrency setting. */
  runs: LoadResult[];
  /** node_exporter only: InfiniBand ports it reported. */
  infinibandPorts?: number;
}

export interface LatencyResult {
  linesPerSecond: number;
  warmupRequests: number;
  requests: number;
  ringwatch: LatencyTarget & { coverage: Coverage };
  nodeExporter?: { version: string; default: LatencyTarget; sysfs: LatencyTarget };
  /** ringwatch p99 / node_exporter p99, per concurrency. */
  ratios: { concurrency: number; vsDefault: number; vsSysfs: number }[];
  profile?: string;
}

async function waitComplete(url: string, timeoutMs: number): Promise<Coverage> {
  const t0 = Date.now();
  let last: Coverage | undefined;
  while (Date.now() - t0 < timeoutMs) {
    const s = await scrapeOnce(`${url}/metrics`).catch(() => undefined);
    if (s?.status === 200) {
      last = coverage(bodyText(s));
      if (last.complete) return last;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the agent never covered the bench node: ${JSON.stringify(last)}`);
}

async function measure(url: string, pid: number, cfg: BenchConfig, log: (s: string) => void, name: string): Promise<LoadResult[]> {
  const out: LoadResult[] = [];
  for (const c of cfg.concurrency) {
    const r = await loadTest(`${url}/metrics`, { concurrency: c, requests: cfg.requests, warmup: cfg.warmupRequests, serverPid: pid });
    log(
      `  ${name}, ${c} scraper(s): p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, max ${r.maxMs.toFixed(1)} ms, ${r.requestsPerSecond.toFixed(0)} req/s, server CPU ${r.serverCpuMsPerRequest?.toFixed(2) ?? "?"} ms/request, ${r.series} series, ${r.wireBytes} B (gzip ${r.gzip ? "yes" : "no"})`,
    );
    out.push(r);
  }
  return out;
}

export async function runLatency(node: BenchNode, cfg: BenchConfig, outDir: string, log: (s: string) => void): Promise<LatencyResult> {
  const ncclDir = join(node.root, "nccl-latency");
  const profileDir = join(outDir, "profiles");
  const nodeArgs = [...cfg.agentNodeArgs, ...(cfg.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=latency.cpuprofile"] : [])];
  const agent = await startBenchAgent(node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir }), node.env, nodeArgs);
  const writer = startWriter(ncclDir, cfg.latencyLinesPerSecond, 3600);
  try {
    const cov = await waitComplete(agent.url, 30_000);
    const ringwatch = { name: "ringwatch", args: [], runs: await measure(agent.url, agent.pid, cfg, log, "ringwatch"), coverage: cov };
    await agent.stop();
    const result: LatencyResult = {
      linesPerSecond: cfg.latencyLinesPerSecond,
      warmupRequests: cfg.warmupRequests,
      requests: cfg.requests,
      ringwatch,
      ratios: [],
      ...(cfg.profile ? { profile: join(profileDir, "latency.cpuprofile") } : {}),
    };
    const targets: LatencyTarget[] = [];
    let version = "?";
    const installed = existsSync(cfg.nodeExporter);
    if (!installed) log(`  ${cfg.nodeExporter} not found: no node_exporter comparison (apt-get install prometheus-node-exporter)`);
    for (const [name, args] of installed
      ? ([
          ["node_exporter", []],
          ["node_exporter --path.sysfs", [`--path.sysfs=${node.sysfs}`]],
        ] as const)
      : []) {
      const ne = await startNodeExporter(cfg.nodeExporter, [...args]);
      version = ne.version;
      try {
        const first = bodyText(await scrapeOnce(`${ne.url}/metrics`));
        const infinibandPorts = first.split("\n").filter((l) => l.startsWith("node_infiniband_port_data_received_bytes_total{")).length;
        targets.push({ name, args: [...args], runs: await measure(ne.url, ne.pid, cfg, log, name), infinibandPorts });
      } finally {
        await ne.stop();
      }
    }
    const [def, sysfs] = targets;
    if (def && sysfs) {
      result.nodeExporter = { version, default: def, sysfs };
      result.ratios = ringwatch.runs.map((r, i) => ({
        concurrency: r.concurrency,
        vsDefault: r.p99Ms / (def.runs[i]?.p99Ms ?? NaN),
        vsSysfs: r.p99Ms / (sysfs.runs[i]?.p99Ms ?? NaN),
      }));
    }
    return result;
  } finally {
    await writer.stop().catch(() => undefined);
    await agent.stop();
  }
}
