/**
 * Steady-state cost of the NCCL follower alone: the real agent (nccl collector only) following 16
 * files that get 20,000 COLL lines/s in total, measured from /proc/<pid>/stat (user+system CPU) and
 * /proc/<pid>/status (RSS). It also checks that every line written was read
 * (ringwatch_nccl_log_lines_total). steady-full.ts measures the same with every collector on.
 */
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collLineRate } from "../test/sim/index.js";
import { startBenchAgent } from "./agent-proc.js";
import { cpuSeconds, memory } from "./proc.js";

export interface SteadyResult {
  linesPerSecond: number;
  seconds: number;
  linesWritten: number;
  linesRead: number;
  cpuPercentOfOneCore: number;
  rssMB: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runSteady(linesPerSecond = 20_000, seconds = 20, nodeArgs: string[] = []): Promise<SteadyResult> {
  const dir = join(tmpdir(), `ringwatch-bench-steady-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  const agent = await startBenchAgent(
    [
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      "--collector.nccl.polling=false",
    ],
    {},
    nodeArgs,
  );
  try {
    await sleep(1500);
    const writing = collLineRate(dir, { files: 16, linesPerSecond, seconds: seconds + 3 });
    await sleep(3000); // warm-up: files created, init blocks read
    const c0 = await cpuSeconds(agent.pid);
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const c1 = await cpuSeconds(agent.pid);
    const elapsed = (performance.now() - t0) / 1000;
    const rss = (await memory(agent.pid)).rssMB;
    const written = await writing;
    await sleep(2000); // let the follower catch up
    const text = await (await fetch(`${agent.url}/metrics`)).text();
    const m = /^ringwatch_nccl_log_lines_total (\d+)/m.exec(text);
    return {
      linesPerSecond,
      seconds: elapsed,
      linesWritten: written.lines,
      linesRead: m ? Number(m[1]) : NaN,
      cpuPercentOfOneCore: ((c1 - c0) / elapsed) * 100,
      rssMB: rss,
    };
  } finally {
    await agent.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("steady.js")) {
  console.log(JSON.stringify(await runSteady(Number(process.argv[2] ?? 20000), Number(process.argv[3] ?? 20)), null, 2));
}
