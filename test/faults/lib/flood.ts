/**
 * Scrape flood: a pool of keep-alive connections paces GET /metrics at a target rate while a
 * simulated job appends COLL lines at a steady rate over 16 files. Measures what the agent
 * achieved and whether it lost a line. Used by test/faults/scrape-flood.test.ts (short) and
 * scripts/faults/scrape-flood.mjs (30 s).
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { samplesOf, sample, startAgent } from "../../helpers/agent-process.js";
import { eventually } from "../../helpers/eventually.js";
import { collLineRate } from "../../sim/index.js";
import { MiB, percentile, rssBytes } from "./proc.js";

export interface FloodOptions {
  seconds: number;
  /** Target scrapes per second (default 1000). */
  rate?: number;
  /** Keep-alive connections (default 16). */
  pool?: number;
  /** COLL lines per second over all files (default 20,000). */
  linesPerSecond?: number;
  files?: number;
}

export interface FloodResult {
  seconds: number;
  targetRate: number;
  sent: number;
  ok: number;
  failed: number;
  /** Ticks skipped because every connection was busy (the client never queues without bound). */
  skipped: number;
  achievedRate: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  rssMaxMb: number;
  /** COLL lines written. */
  collWritten: number;
  /**
   * The collectives the agent says the ranks entered: ringwatch_nccl_rank_progress summed over
   * every (communicator, rank) (--collector.nccl.rank-series=always). Each rank's progress is
   * opCount + 1 of its last COLL line where its communicator numbers its operations (the simulator
   * numbers them from 0, one per collective) and its COLL lines counted where it does not (a
   * single-node communicator from NCCL 2.27): so, every line read, the COLL lines written.
   */
  collCounted: number;
  linesInFiles: number;
  linesRead: number;
  unresolved: number;
  /** The agent was still running when the flood and the catch-up were over (it is stopped after). */
  aliveAtEnd: boolean;
  firstFailure?: string;
}

/** How long the agent may take to read every line after the flood (a bound for a bug; on a busy machine it trails further). */
const CATCH_UP_LIMIT_MS = 60_000;

const collectivesCounted = (text: string): number => samplesOf(text, "ringwatch_nccl_rank_progress").reduce((a, l) => a + Number(l.split(" ").pop()), 0);

/** Newlines in every file of dir (the lines that were written). */
function countLines(files: string[]): number {
  let n = 0;
  for (const f of files) {
    const b = readFileSync(f);
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  }
  return n;
}

export async function runScrapeFlood(o: FloodOptions): Promise<FloodResult> {
  const rate = o.rate ?? 1000;
  const pool = o.pool ?? 16;
  const dir = mkdtempSync(join(tmpdir(), "rw-flood-"));
  let agent: Awaited<ReturnType<typeof startAgent>> | undefined;
  try {
    agent = await startAgent(
      [
        "--no-collector.gpu",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        `--collector.nccl.path=${dir}`,
        "--collector.nccl.check-pids=false",
        // Every rank's progress (collCounted), though the job is healthy.
        "--collector.nccl.rank-series=always",
      ],
      {},
      30_000,
    );
    const a = agent;
    const pid = a.child.pid as number;
    // Warm: the nccl follower is up, and the RSS before the flood is the idle agent's.
    await eventually(async () => sample(await a.scrape(), 'ringwatch_collector_success{collector="nccl"}') === 1, {
      timeoutMs: 30_000,
      what: "the nccl collector up",
    });
    const rssBefore = rssBytes(pid) ?? 0;
    let rssMax = rssBefore;
    const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssBytes(pid) ?? 0)), 250);

    const http = new Agent({ keepAlive: true, maxSockets: pool });
    const lat: number[] = [];
    let sent = 0;
    let ok = 0;
    let failed = 0;
    let skipped = 0;
    let inflight = 0;
    let firstFailure: string | undefined;
    const fail = (why: string): void => {
      failed++;
      firstFailure ??= why;
    };
    const one = (): void => {
      sent++;
      inflight++;
      const t0 = performance.now();
      const req = request(a.url + "/metrics", { agent: http }, (res) => {
        let got = 0;
        res.on("data", (c: Buffer) => (got += c.length));
        res.on("end", () => {
          inflight--;
          lat.push(performance.now() - t0);
          const want = Number(res.headers["content-length"] ?? -1);
          if (res.statusCode === 200 && got === want && got > 0) ok++;
          else fail(`status ${res.statusCode ?? "?"}, ${got} of ${want} bytes`);
        });
        res.on("error", (err) => {
          inflight--;
          fail(err.message);
        });
      });
      req.on("error", (err) => {
        inflight--;
        fail(err.message);
      });
      req.end();
    };

    const writing = collLineRate(dir, { files: o.files ?? 16, linesPerSecond: o.linesPerSecond ?? 20_000, seconds: o.seconds, tickMs: 50 });
    const start = performance.now();
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const elapsed = (performance.now() - start) / 1000;
        if (elapsed >= o.seconds) {
          clearInterval(tick);
          resolve();
          return;
        }
        const due = Math.floor(elapsed * rate);
        while (sent + skipped < due) {
          if (inflight >= pool * 2) skipped++;
          else one();
        }
      }, 5);
    });
    const seconds = (performance.now() - start) / 1000;
    const written = await writing;
    while (inflight > 0) await new Promise((r) => setTimeout(r, 20));
    http.destroy();

    // Every line written must be read and every collective counted: wait until the agent has caught
    // up (it trails, the more so on a busy machine), then a second more, so that anything counted
    // twice late shows.
    const linesInFiles = countLines(written.files);
    let text = "";
    const t0 = Date.now();
    do {
      text = await a.scrape();
      if ((sample(text, "ringwatch_nccl_log_lines_total") ?? 0) >= linesInFiles && collectivesCounted(text) >= written.lines) break;
      await new Promise((r) => setTimeout(r, 250));
    } while (Date.now() - t0 < CATCH_UP_LIMIT_MS);
    await new Promise((r) => setTimeout(r, 1000));
    text = await a.scrape();
    const aliveAtEnd = a.child.exitCode === null && a.child.signalCode === null;
    clearInterval(rssTimer);
    const collCounted = collectivesCounted(text);
    return {
      seconds,
      targetRate: rate,
      sent,
      ok,
      failed,
      skipped,
      achievedRate: ok / seconds,
      p50Ms: percentile(lat, 50),
      p99Ms: percentile(lat, 99),
      maxMs: Math.max(...lat),
      rssBeforeMb: rssBefore / MiB,
      rssAfterMb: (rssBytes(pid) ?? 0) / MiB,
      rssMaxMb: rssMax / MiB,
      collWritten: written.lines,
      collCounted,
      linesInFiles,
      linesRead: sample(text, "ringwatch_nccl_log_lines_total") ?? -1,
      unresolved: sample(text, "ringwatch_nccl_unresolved_collectives_total") ?? -1,
      aliveAtEnd,
      ...(firstFailure === undefined ? {} : { firstFailure }),
    };
  } finally {
    await agent?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The result as a two-column table, for scripts and test logs. */
export function floodTable(r: FloodResult): string {
  const rows: [string, string][] = [
    ["duration", `${r.seconds.toFixed(1)} s`],
    ["target rate", `${r.targetRate} req/s`],
    ["achieved rate", `${r.achievedRate.toFixed(0)} req/s (${r.ok} ok of ${r.sent} sent, ${r.skipped} skipped: all connections busy)`],
    ["failed responses", String(r.failed) + (r.firstFailure ? ` (first: ${r.firstFailure})` : "")],
    ["latency p50 / p99 / max", `${r.p50Ms.toFixed(1)} / ${r.p99Ms.toFixed(1)} / ${r.maxMs.toFixed(1)} ms`],
    ["agent RSS before / after / max", `${r.rssBeforeMb.toFixed(0)} / ${r.rssAfterMb.toFixed(0)} / ${r.rssMaxMb.toFixed(0)} MB`],
    ["COLL lines written / collectives counted", `${r.collWritten} / ${r.collCounted}`],
    ["log lines in files / read", `${r.linesInFiles} / ${r.linesRead}`],
    ["unresolved collectives", String(r.unresolved)],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n");
}
