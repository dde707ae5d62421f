/**
 * `npm run bench`: every figure of docs/performance.md in one run, printed as a table (each row with its
 * goal and PASS / MISS) and written to bench/out/results.json (and results.md, the same table in
 * Markdown). BENCH_QUICK=1 for a short run; BENCH_* variables in config.ts for the rest.
 *   (a) NCCL ingest vs `grep -c opCount`            ingest.ts
 *       NCCL-only steady state (20k lines/s)         steady.ts
 *   (b) /metrics latency vs node_exporter            latency.ts
 *   (c) steady state with every collector on         steady-full.ts
 *   (d) start -> listening, -> first complete scrape  startup.ts
 *   (e) NCCL RAS queries, stall to verdict          ras.ts
 *   (f) NCCL Inspector records: parse, feed, snapshot inspector.ts
 *   (g) PyTorch Flight Recorder dumps: read, analyze  flight-recorder.ts
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg, release, totalmem } from "node:os";
import { join } from "node:path";
import { benchConfig, type BenchPart } from "./config.js";
import { runIngest, type IngestResult } from "./ingest.js";
import { runFlightRecorder, type FlightRecorderBenchResult } from "./flight-recorder.js";
import { runInspector, type InspectorBenchResult } from "./inspector.js";
import { runLatency, type LatencyResult } from "./latency.js";
import { runRas, type RasBenchResult } from "./ras.js";
import { makeBenchNode } from "./node-fixture.js";
import { outDir } from "./paths.js";
import { formatProfile, summarizeProfile } from "./profile-summary.js";
import type { LoadResult } from "./scrape-client.js";
import { runStartup, type StartupResult } from "./startup.js";
import { runSteadyFull, type SteadyFullResult } from "./steady-full.js";
import { runSteady, type SteadyResult } from "./steady.js";
import { formatTable, markdownTable, verdict, type Row } from "./table.js";

const cfg = benchConfig();
await mkdir(outDir, { recursive: true });
const load = (): number[] => loadavg().map((x) => Number(x.toFixed(2)));
const machine = {
  cpus: cpus().length,
  model: cpus()[0]?.model ?? "?",
  memoryGB: Number((totalmem() / 2 ** 30).toFixed(1)),
  kernel: release(),
  node: process.versions.node,
  loadavgAtStart: load(),
};
const log = (s: string): void => console.log(s);
const t0 = performance.now();
const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
const ms = (x: number): string => (x < 10 ? f(x, 2) : f(x, 1));

log(`ringwatch bench${cfg.quick ? " (quick)" : ""} — ${machine.cpus} x ${machine.model}, node ${machine.node}, load ${machine.loadavgAtStart.join(" ")}`);
const node = makeBenchNode();
const partSeconds: Record<string, number> = {};
const errors: Record<string, string> = {};
/** Runs one part; a part that fails is reported (row and exit code) and the others still run. */
async function part<T>(name: BenchPart, title: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (!cfg.parts.has(name)) return undefined;
  log(title);
  const p0 = performance.now();
  try {
    return await fn();
  } catch (err) {
    errors[name] = err instanceof Error ? err.message : String(err);
    log(`  ${name} failed: ${errors[name]}`);
    return undefined;
  } finally {
    partSeconds[name] = Number(((performance.now() - p0) / 1000).toFixed(1));
  }
}
let ingest: IngestResult | undefined;
let steady: SteadyResult | undefined;
let latency: LatencyResult | undefined;
let full: SteadyFullResult | undefined;
let startup: StartupResult | undefined;
let ras: RasBenchResult | undefined;
let inspector: InspectorBenchResult | undefined;
let fr: FlightRecorderBenchResult | undefined;
try {
  ingest = await part("ingest", `(a) NCCL ingest, 16 files x ${cfg.mbPerFile} MB ...`, () => runIngest(cfg.mbPerFile));
  steady = await part("steady", `    NCCL-only steady state, ${cfg.steadySeconds} s ...`, () => runSteady(20_000, cfg.steadySeconds, cfg.agentNodeArgs));
  latency = await part(
    "latency",
    `(b) /metrics latency, ${cfg.requests} requests after ${cfg.warmupRequests} per configuration, NCCL logs growing at ${cfg.latencyLinesPerSecond} lines/s ...`,
    () => runLatency(node, cfg, outDir, log),
  );
  full = await part("full", `(c) steady state, all collectors, ${cfg.fullSeconds} s after ${cfg.fullWarmupSeconds} s ...`, () =>
    runSteadyFull(node, cfg, outDir),
  );
  startup = await part("startup", `(d) start-up, ${cfg.starts} starts ...`, () => runStartup(node, cfg, outDir));
  ras = await part("ras", "(e) production mode: NCCL RAS queries and stall to verdict ...", () => runRas(cfg.quick ? 50 : 200));
  inspector = await part("inspector", "(f) NCCL Inspector records: parse, feed, snapshot ...", () =>
    Promise.resolve(runInspector(cfg.quick ? 20_000 : 200_000)),
  );
  fr = await part("flight-recorder", "(g) PyTorch Flight Recorder dumps: read, analyze ...", () => Promise.resolve(runFlightRecorder(cfg.quick ? 20 : 100)));
} finally {
  node.remove();
}

const rows: Row[] = [];
if (ingest) {
  rows.push({
    what: `(a) NCCL ingest (follow+parse+track), 16 files, ${f(ingest.bytes / 1e6, 0)} MB`,
    measured: `${f(ingest.ingestMBps, 0)} MB/s, ${f(ingest.ingestLinesPerSecond / 1e6, 2)} M lines/s; grep -c opCount ${f(ingest.grepMBps, 0)} MB/s; ratio ${f(ingest.ratio, 3)}`,
    goal: ">= 0.25 x grep",
    status: verdict(ingest.ratio >= 0.25),
  });
}
if (steady) {
  rows.push({
    what: "    steady, nccl collector only: 20k COLL lines/s, 16 files",
    measured: `${f(steady.cpuPercentOfOneCore)} % of one core, RSS ${f(steady.rssMB, 0)} MB; read ${steady.linesRead} lines (${steady.linesWritten} COLL + init)`,
    goal: "< 5 % of one core",
    status: verdict(steady.cpuPercentOfOneCore < 5),
  });
}
if (ras) {
  for (const r of ras.rows) {
    rows.push({
      what: `(e) RAS query, ${r.what}`,
      measured: `${f(r.cpuMsPerQuery, 3)} ms agent CPU, ${f(r.wallMsPerQuery, 2)} ms wall per query${r.bytes > 0 ? `, ${f(r.bytes / 1024, 1)} KiB` : ""}`,
      goal: "< 1 % of one core at the 30 s interval (< 300 ms per query)",
      status: verdict(r.cpuMsPerQuery < 300),
    });
  }
  rows.push({
    what: `(e) RAS stall to verdict, threshold ${ras.thresholdMs / 1000} s, interval ${ras.intervalMs / 1000} s`,
    measured: `${f(ras.stallToVerdictMs / 1000, 2)} s`,
    goal: "<= threshold + one interval",
    status: verdict(ras.stallToVerdictMs <= ras.thresholdMs + ras.intervalMs + 200),
  });
}
if (inspector) {
  for (const r of inspector.rows) {
    const feed = r.what.startsWith("InspectorFeed");
    rows.push({
      what: `(f) ${r.what}`,
      measured: `${f(r.nsPerRecord, 0)} ns per record${r.bytes !== undefined ? ` (${f(r.bytes, 0)} B)` : ""}${feed ? `; ${f(inspector.feedRecordsPerCoreSecond / 1000, 0)}k records/s per core` : ""}`,
      goal: r.what.startsWith("JSON.parse")
        ? "reference"
        : r.what.includes("verbose")
          ? "<= 20,000 ns (NCCL's debug form)"
          : "<= 5,000 ns (10k records/s <= 5 % of one core)",
      status: r.what.startsWith("JSON.parse") ? "—" : verdict(r.nsPerRecord <= (r.what.includes("verbose") ? 20_000 : 5000)),
    });
  }
  rows.push({
    what: "(f) Inspector snapshot(), 128 comms x 8 ranks re-evaluated",
    measured: `${f(inspector.snapshotMs, 2)} ms`,
    goal: "<= 50 ms per scrape",
    status: verdict(inspector.snapshotMs <= 50),
  });
}
if (fr) {
  rows.push({
    what: `(g) Flight Recorder dump read (real H100 dump, ${f(fr.dumpBytes / 1024, 1)} KiB)`,
    measured: `${f(fr.readMsPerDump, 2)} ms per dump, ${f(fr.readMBps, 1)} MB/s`,
    goal: ">= 10 MB/s (a 16 MiB dump under ~1.6 s)",
    status: verdict(fr.readMBps >= 10),
  });
  rows.push({
    what: "(g) Flight Recorder analysis of both dumps",
    measured: `${f(fr.analyzeMs, 3)} ms`,
    goal: "<= 50 ms",
    status: verdict(fr.analyzeMs <= 50),
  });
}
const loadCell = (r: LoadResult): string =>
  `p50 ${ms(r.p50Ms)} / p99 ${ms(r.p99Ms)} / max ${ms(r.maxMs)} ms; ${f(r.requestsPerSecond, 0)} req/s; CPU ${r.serverCpuMsPerRequest === undefined ? "?" : ms(r.serverCpuMsPerRequest)} ms/req; ${r.series} series; ${r.gzip ? `${r.wireBytes} B gzip (${r.bodyBytes} B)` : `${r.bodyBytes} B, no gzip`}${r.errors ? `; ${r.errors} errors` : ""}`;
if (latency) {
  const l = latency;
  l.ringwatch.runs.forEach((r, i) => {
    const scrapers = `${r.concurrency} scraper${r.concurrency === 1 ? "" : "s"}`;
    rows.push({ what: `(b) /metrics ringwatch, ${scrapers}`, measured: loadCell(r), goal: "p99 <= 5 ms", status: verdict(r.p99Ms <= 5 && r.errors === 0) });
    const ne = l.nodeExporter;
    if (!ne) return;
    const d = ne.default.runs[i];
    const s = ne.sysfs.runs[i];
    if (d) rows.push({ what: `    node_exporter ${ne.version}, default collectors, ${scrapers}`, measured: loadCell(d), goal: "reference", status: "—" });
    if (s)
      rows.push({
        what: `    node_exporter, --path.sysfs=<bench tree> (${ne.sysfs.infinibandPorts ?? 0} IB ports), ${scrapers}`,
        measured: loadCell(s),
        goal: "reference",
        status: "—",
      });
    const ratio = l.ratios[i];
    if (ratio) {
      rows.push({
        what: `    p99 ringwatch / node_exporter, ${scrapers}`,
        measured: `${f(ratio.vsDefault, 2)} (default collectors), ${f(ratio.vsSysfs, 2)} (--path.sysfs)`,
        goal: "<= 1",
        status: verdict(ratio.vsDefault <= 1 && ratio.vsSysfs <= 1),
      });
    }
  });
}
if (full) {
  const read = full.linesRead >= full.linesWritten ? "every line read" : `only ${full.linesRead} of ${full.linesWritten} lines read`;
  rows.push({
    what: "(c) steady, all collectors: CPU",
    measured: `${f(full.cpuPercentOfOneCore, 2)} % of one core over ${f(full.seconds, 0)} s (dmon 8 GPUs/1 s, ${full.linesPerSecond} COLL lines/s, polls every ${full.pollInterval}, scrape every ${full.scrapeEverySeconds} s); ${read}`,
    goal: "<= 5 % of one core",
    status: verdict(full.cpuPercentOfOneCore <= 5 && full.coverage.complete),
  });
  rows.push({
    what: "    steady, all collectors: RSS",
    measured: `median ${f(full.rssMedianMB, 0)} MB, peak ${f(full.rssPeakMB, 0)} MB (before the NCCL logs: ${f(full.idleRssMB, 0)} MB; V8 heap ${f(full.heapUsedMB, 0)} used / ${f(full.heapTotalMB, 0)} MB)`,
    goal: "<= 80 MB",
    status: verdict(full.rssMedianMB <= 80),
  });
}
if (startup) {
  const s = startup;
  rows.push({
    what: "(d) start -> first complete scrape",
    measured: `median ${f(s.firstCompleteMedianMs, 0)} ms, max ${f(s.firstCompleteMaxMs, 0)} ms over ${s.starts.length} starts (gpu, infiniband, gdr, mtu, 4 NCCL comms)`,
    goal: "<= 1 s",
    status: verdict(s.firstCompleteMedianMs <= 1000),
  });
  rows.push({
    what: '    start -> "ringwatch listening"',
    measured: `median ${f(s.listeningMedianMs, 0)} ms (node -e 0 alone: ${f(s.nodeBareMs, 0)} ms)`,
    goal: "reference",
    status: "—",
  });
}

for (const [name, message] of Object.entries(errors)) rows.push({ what: `(${name}) failed`, measured: message.split("\n")[0] ?? "", goal: "", status: "MISS" });

const seconds = (performance.now() - t0) / 1000;
const ended = { ...machine, loadavgAtEnd: load() };
log("");
log(formatTable(rows));
log(
  `\n${seconds.toFixed(0)} s (${Object.entries(partSeconds)
    .map(([k, v]) => `${k} ${v} s`)
    .join(", ")}); load average at start ${machine.loadavgAtStart.join(" ")}, at end ${ended.loadavgAtEnd.join(" ")}`,
);
const profiles = [latency?.profile, full?.profile, startup?.profile].filter((p): p is string => p !== undefined).map((p) => summarizeProfile(p, 25));
for (const p of profiles) log(`\n${formatProfile(p)}`);
const results = {
  at: new Date().toISOString(),
  quick: cfg.quick,
  config: { ...cfg, parts: [...cfg.parts] },
  seconds,
  partSeconds,
  errors,
  machine: ended,
  rows,
  ingest,
  steady,
  latency,
  full,
  startup,
  inspector,
  fr,
  profiles,
};
await writeFile(join(outDir, "results.json"), JSON.stringify(results, null, 2) + "\n");
await writeFile(join(outDir, "results.md"), markdownTable(rows) + "\n");
log(`written to ${join(outDir, "results.json")} and results.md`);
if (Object.keys(errors).length > 0) process.exitCode = 1;
