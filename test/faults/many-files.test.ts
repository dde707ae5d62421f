/**
 * 10,000 NCCL log files (the follower's cap) laid out as NCCL_DEBUG_FILE=%h/nccl-%p.log: 9,000
 * there when the agent starts, 1,000 more created while it runs, 100 of them then appended to.
 * The agent starts, answers /metrics in under a second throughout, follows every file and reads
 * every line, with bounded memory. Prints what it measured.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { manyLogs, type ManyLogs } from "./lib/many-logs.js";
import { MiB, percentile, watchProcess, type ProcSample } from "./lib/proc.js";
import { scrapeLoop, type TimedScrape } from "./lib/scrape.js";

const AT_START = 9000;
const LATER = 1000;

let root: string;
let agent: RunningAgent | undefined;
let logs: ManyLogs;
let scrapes: TimedScrape[] = [];
let proc: ProcSample[] = [];
let final = "";
let trackedAfterMs = 0;
let readyAfterMs = 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rw-many-"));
  logs = manyLogs(root);
  logs.write(0, AT_START);
  const t0 = Date.now();
  agent = await startAgent(["--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", `--collector.nccl.path=${root}`, "--collector.nccl.check-pids=false"], {}, 30_000);
  const a = agent;
  const scraper = scrapeLoop(a.url + "/metrics", 200);
  const watcher = watchProcess(a.child.pid as number, 250);
  await new Promise((r) => setTimeout(r, 2000));
  logs.write(AT_START, AT_START + LATER);
  await new Promise((r) => setTimeout(r, 1000));
  for (let k = AT_START; k < AT_START + 100; k++) logs.append(k, 20);
  for (;;) {
    const t = await a.scrape();
    if (!trackedAfterMs && sample(t, "ringwatch_nccl_log_lines_total") === logs.lines && sample(t, "ringwatch_nccl_log_files") === logs.files.length) trackedAfterMs = Date.now() - t0;
    if (!readyAfterMs && sample(t, 'ringwatch_collector_success{collector="nccl"}') === 1) readyAfterMs = Date.now() - t0;
    if ((trackedAfterMs && readyAfterMs) || Date.now() - t0 > 60_000) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 1000));
  scrapes = await scraper.stop();
  proc = watcher.stop();
  final = await a.scrape();
  const ms = scrapes.map((s) => s.ms);
  console.log(
    `10,000 files: all ${logs.lines} lines read ${(trackedAfterMs / 1000).toFixed(1)} s after start, nccl success 1 after ${(readyAfterMs / 1000).toFixed(1)} s; ${scrapes.length} scrapes meanwhile, ` +
      `p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms; ` +
      `RSS max ${(Math.max(...proc.map((p) => p.rss)) / MiB).toFixed(0)} MB, at the end ${((proc.at(-1)?.rss ?? 0) / MiB).toFixed(0)} MB; fds max ${Math.max(...proc.map((p) => p.fds))}`,
  );
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("10,000 log files in %h/%p directories", () => {
  it("follows every file and reads every line, dropping none", () => {
    expect(trackedAfterMs).toBeGreaterThan(0);
    expect(sample(final, "ringwatch_nccl_log_files")).toBe(AT_START + LATER);
    expect(sample(final, "ringwatch_nccl_log_lines_total")).toBe(logs.lines);
    expect(sample(final, "ringwatch_nccl_log_files_dropped_total")).toBe(0);
    expect(sample(final, "ringwatch_nccl_log_read_errors_total")).toBe(0);
    expect(sample(final, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
  });

  it("answers every scrape in under a second while it walks, reads and watches them", () => {
    expect(scrapes.length).toBeGreaterThan(10);
    expect(scrapes.filter((s) => s.status !== 200)).toEqual([]);
    expect(Math.max(...scrapes.map((s) => s.ms))).toBeLessThan(1000);
  });

  it("holds memory and descriptors bounded (no descriptor per file)", () => {
    expect(Math.max(...proc.map((p) => p.rss))).toBeLessThan(400 * MiB);
    expect(Math.max(...proc.map((p) => p.fds))).toBeLessThan(200);
  });
});
