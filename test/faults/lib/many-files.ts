/**
 * 10,000 NCCL log files (the follower's cap) laid out as NCCL_DEBUG_FILE=%h/nccl-%p.log: 9,000
 * there when the agent starts, 1,000 more created while it runs, 100 of them then appended to.
 * Scrapes /metrics every 200 ms and samples the agent's RSS and descriptors meanwhile. Used by
 * test/faults/many-files.test.ts (what must hold) and scripts/faults/many-files.mjs (the latency
 * and memory goals, printed with what was measured).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sample, startAgent } from "../../helpers/agent-process.js";
import { manyLogs } from "./many-logs.js";
import { MiB, percentile, watchProcess, type ProcSample } from "./proc.js";
import { scrapeLoop, type TimedScrape } from "./scrape.js";

export const AT_START = 9000;
export const LATER = 1000;

export interface ManyFilesResult {
  filesWritten: number;
  linesWritten: number;
  /** When every line was read and every file followed (ms after start; 0: never). */
  trackedAfterMs: number;
  /** When the nccl collector reported success (ms after start; 0: never). */
  readyAfterMs: number;
  scrapes: TimedScrape[];
  proc: ProcSample[];
  /** The last scrape, after everything was read. */
  final: string;
}

export async function runManyFiles(): Promise<ManyFilesResult> {
  const root = mkdtempSync(join(tmpdir(), "rw-many-"));
  const logs = manyLogs(root);
  logs.write(0, AT_START);
  const t0 = Date.now();
  const agent = await startAgent(
    [
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${root}`,
      "--collector.nccl.check-pids=false",
    ],
    {},
    30_000,
  );
  try {
    const scraper = scrapeLoop(agent.url + "/metrics", 200);
    const watcher = watchProcess(agent.child.pid as number, 250);
    await new Promise((r) => setTimeout(r, 2000));
    logs.write(AT_START, AT_START + LATER);
    await new Promise((r) => setTimeout(r, 1000));
    for (let k = AT_START; k < AT_START + 100; k++) logs.append(k, 20);
    let trackedAfterMs = 0;
    let readyAfterMs = 0;
    for (;;) {
      const t = await agent.scrape();
      if (!trackedAfterMs && sample(t, "ringwatch_nccl_log_lines_total") === logs.lines && sample(t, "ringwatch_nccl_log_files") === logs.files.length)
        trackedAfterMs = Date.now() - t0;
      if (!readyAfterMs && sample(t, 'ringwatch_collector_success{collector="nccl"}') === 1) readyAfterMs = Date.now() - t0;
      if ((trackedAfterMs && readyAfterMs) || Date.now() - t0 > 60_000) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const scrapes = await scraper.stop();
    const proc = watcher.stop();
    const final = await agent.scrape();
    return { filesWritten: logs.files.length, linesWritten: logs.lines, trackedAfterMs, readyAfterMs, scrapes, proc, final };
  } finally {
    await agent.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export const maxScrapeMs = (r: ManyFilesResult): number => Math.max(...r.scrapes.map((s) => s.ms));
export const maxRssMb = (r: ManyFilesResult): number => Math.max(...r.proc.map((p) => p.rss)) / MiB;
export const maxFds = (r: ManyFilesResult): number => Math.max(...r.proc.map((p) => p.fds));

/** What was measured, one line. */
export function manyFilesSummary(r: ManyFilesResult): string {
  const ms = r.scrapes.map((s) => s.ms);
  return (
    `10,000 files: all ${r.linesWritten} lines read ${(r.trackedAfterMs / 1000).toFixed(1)} s after start, nccl success 1 after ${(r.readyAfterMs / 1000).toFixed(1)} s; ${r.scrapes.length} scrapes meanwhile, ` +
    `p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${maxScrapeMs(r).toFixed(0)} ms; ` +
    `RSS max ${maxRssMb(r).toFixed(0)} MB, at the end ${((r.proc.at(-1)?.rss ?? 0) / MiB).toFixed(0)} MB; fds max ${maxFds(r)}`
  );
}
