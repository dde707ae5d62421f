/**
 * (d) Start-up on the bench node (NCCL logs already there: 16 ranks' init blocks and some COLL
 * lines): time from spawn() to the "ringwatch listening" log line, and to the first /metrics
 * response that covers the whole node (8 GPUs, 8 InfiniBand ports, gdr, mtu, the 4 NCCL
 * communicators), polling /metrics back to back (one request at a time, 10 ms apart) once the
 * agent listens. Also when each part first appeared, and, for scale, how long Node.js itself
 * takes to start and exit.
 */
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import { join } from "node:path";
import { startBenchAgent } from "./agent-proc.js";
import type { BenchConfig } from "./config.js";
import { coverage } from "./coverage.js";
import { prewriteJob } from "./nccl-job.js";
import type { BenchNode } from "./node-fixture.js";
import { bodyText, percentile, scrapeOnce } from "./scrape-client.js";

export interface StartRun {
  listeningMs: number;
  firstCompleteMs: number;
  /** ms from spawn() to the first scrape that had each part. */
  firstSeenMs: { gpu: number; infiniband: number; gdr: number; mtu: number; nccl: number };
  scrapes: number;
}

export interface StartupResult {
  starts: StartRun[];
  listeningMedianMs: number;
  firstCompleteMedianMs: number;
  firstCompleteMaxMs: number;
  /** `node -e 0` spawn to exit, median. */
  nodeBareMs: number;
  profile?: string;
}

const median = (xs: number[]): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

function nodeBare(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    c.once("error", reject);
    c.once("exit", () => resolve(performance.now() - t0));
  });
}

async function oneStart(node: BenchNode, cfg: BenchConfig, ncclDir: string, nodeArgs: string[]): Promise<StartRun> {
  const agent = await startBenchAgent(node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir }), node.env, nodeArgs);
  const http = new Agent({ keepAlive: true, maxSockets: 1 });
  const seen: Partial<StartRun["firstSeenMs"]> = {};
  let scrapes = 0;
  try {
    for (;;) {
      const s = await scrapeOnce(`${agent.url}/metrics`, http);
      const at = performance.now() - agent.spawnedAt;
      scrapes++;
      const c = coverage(bodyText(s));
      if (c.gpus > 0) seen.gpu ??= at;
      if (c.hcaPorts > 0) seen.infiniband ??= at;
      if (c.gdr) seen.gdr ??= at;
      if (c.mtuDevices > 0) seen.mtu ??= at;
      if (c.communicators > 0) seen.nccl ??= at;
      if (c.complete) {
        return {
          listeningMs: agent.listeningMs,
          firstCompleteMs: at,
          firstSeenMs: { gpu: seen.gpu ?? NaN, infiniband: seen.infiniband ?? NaN, gdr: seen.gdr ?? NaN, mtu: seen.mtu ?? NaN, nccl: seen.nccl ?? NaN },
          scrapes,
        };
      }
      if (at > 20_000) throw new Error(`no complete scrape 20 s after start: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    http.destroy();
    await agent.stop();
  }
}

export async function runStartup(node: BenchNode, cfg: BenchConfig, outDir: string): Promise<StartupResult> {
  const ncclDir = join(node.root, "nccl-startup");
  await prewriteJob(ncclDir, 500);
  const bare: number[] = [];
  for (let i = 0; i < cfg.starts; i++) bare.push(await nodeBare());
  const starts: StartRun[] = [];
  const profileDir = join(outDir, "profiles");
  for (let i = 0; i < cfg.starts + (cfg.profile ? 1 : 0); i++) {
    // Under BENCH_PROFILE, one more start runs with --cpu-prof (slower, so not in the figures).
    const profiled = i === cfg.starts;
    const args = [...cfg.agentNodeArgs, ...(profiled ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-name=startup.cpuprofile"] : [])];
    const run = await oneStart(node, cfg, ncclDir, args);
    if (!profiled) starts.push(run);
  }
  const complete = starts.map((s) => s.firstCompleteMs);
  return {
    starts,
    listeningMedianMs: median(starts.map((s) => s.listeningMs)),
    firstCompleteMedianMs: median(complete),
    firstCompleteMaxMs: Math.max(...complete),
    nodeBareMs: median(bare),
    ...(cfg.profile ? { profile: join(profileDir, "startup.cpuprofile") } : {}),
  };
}
