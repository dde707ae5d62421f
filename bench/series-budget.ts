/**
 * The NCCL series budget: how many series, how large a scrape, how fast a scrape and how much RSS
 * the nccl collector costs as the number of communicators grows. For N communicators per rank
 * (SERIES_N=4,16,64,256 by default), one node of a two-node job: 8 ranks here (8 processes, one
 * NCCL_DEBUG_FILE each, nccl-<host>-<pid>.log), 8 more on the other node, every communicator
 * spanning all 16 ranks (nranks 16, nNodes 2, so its ops are numbered by opCount). The logs are
 * rendered by the simulator in test/sim (every line shape copied from a real capture), INIT and
 * COLL subsystems: the world communicator plus N-1 more (alternately ncclCommSplit of the world
 * and ncclCommInitRank with their own commId), then SERIES_COLL (20) COLL lines per rank and
 * communicator. Only this node's 8 files are written.
 *
 * Per N a fresh agent (the built dist/agent/main.js) on the bench node (bench/node-fixture.ts: 8
 * fake GPUs, 8 InfiniBand ports, gdr, mtu; RAS on as by default, nothing listens), with
 * --no-collector.nccl.check-pids (the simulated pids do not run here) and SERIES_AGENT_FLAGS
 * (space-separated extra flags, to measure later flag variants). Once the agent has read every
 * line (ringwatch_nccl_log_lines_total = lines written, and N comm_id values), the agent and
 * Debian's prometheus-node-exporter (default collectors, started once for the whole run) are
 * scraped alternately, SERIES_SCRAPES (50) times each after 5 warm-up scrapes, by a
 * Prometheus-like client (gzip, OpenMetrics Accept). Then it counts the agent's series: total,
 * ringwatch_nccl_*, all NCCL-related (plus ringwatch_pytorch_* and ringwatch_gpu_hang_signature),
 * per (rank, communicator) and per communicator, the families with the most series, and reads the
 * agent's RSS (/proc/<pid>/status and its own process_resident_memory_bytes).
 *
 * SERIES_HANG=1 adds, per N, a second fresh agent with --collector.nccl.hang-threshold=5s and
 * --no-collector.gpu (the fixture's GPUs read busy, and a silent communicator on computing GPUs is
 * not called hung) on the same job plus one more step: a collective on c1 (a split of the world)
 * alone, appended after the rest was read, and nothing after. Every process waits in c1, the other
 * communicators are idle (the agent calls a communicator hung only when its ranks' processes
 * progress on no communicator and their newest collective is on it). It polls until
 * ringwatch_nccl_hang_suspected is 1 and reports the series then.
 *
 *   npm run bench:series
 *   SERIES_N=4,16 SERIES_AGENT_FLAGS="--collector.nccl.max-communicators=512" npm run bench:series
 *
 * Prints a Markdown table and writes JSON to bench/out/series-budget.json (SERIES_OUT to change).
 */
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { cpus, hostname, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { Agent } from "node:http";
import { parsePromText, type Series } from "../test/helpers/exposition.js";
import { Scenario, type PlanOp, type SubCommSpec } from "../test/sim/index.js";
import { startBenchAgent, type BenchAgent } from "./agent-proc.js";
import { benchConfig } from "./config.js";
import { makeBenchNode, type BenchNode } from "./node-fixture.js";
import { startNodeExporter, type NodeExporter } from "./node-exporter.js";
import { outDir } from "./paths.js";
import { memory } from "./proc.js";
import { bodyText, percentile, scrapeOnce } from "./scrape-client.js";

const RANKS_HERE = 8;
const NODES = ["gpu-node-001", "gpu-node-002"];
const HANG_THRESHOLD = "5s";
/** The communicator every rank waits in, in the hang scenario. */
const HUNG_FAMILY = "c1";

function ints(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = raw.split(",").map((s) => Number(s.trim()));
  if (v.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`${name}=${raw}: not a list of positive integers`);
  return v;
}

function int(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name}=${raw}: not a positive integer`);
  return v;
}

const cfg = benchConfig();
const settings = {
  ns: ints("SERIES_N", [4, 16, 64, 256]),
  collPerComm: int("SERIES_COLL", 20),
  scrapes: int("SERIES_SCRAPES", 50),
  warmup: 5,
  hang: process.env.SERIES_HANG === "1" || process.env.SERIES_HANG === "true",
  ncclVersion: process.env.SERIES_NCCL_VERSION ?? "2.23.4",
  extraFlags: (process.env.SERIES_AGENT_FLAGS ?? "").split(" ").filter((a) => a !== ""),
  out: process.env.SERIES_OUT ?? join(outDir, "series-budget.json"),
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The job's logs

/**
 * A two-node job of 16 ranks with N communicators per rank, each over all 16 ranks; one collective
 * per communicator a step. With `hangAtStep`, that step issues only c1's collective and nothing
 * follows: every process's last collective is on c1 (they all wait in it), the others are idle.
 */
function job(n: number, hangAtStep?: number): Scenario {
  const comms: SubCommSpec[] = Array.from({ length: n - 1 }, (_, i) => ({
    name: `c${i + 1}`,
    groupSize: NODES.length * RANKS_HERE,
    layout: "contiguous",
    via: i % 2 === 0 ? "split" : "init",
  }));
  const families = ["world", ...comms.map((c) => c.name)];
  const ops: Omit<PlanOp, "comm">[] = [
    { op: "AllReduce", count: 6553600, datatype: 7 },
    { op: "AllGather", count: 2097152, datatype: 9 },
    { op: "ReduceScatter", count: 2097152, datatype: 9 },
  ];
  const opAt = (k: number): Omit<PlanOp, "comm"> => ops[k % ops.length] ?? { op: "AllReduce", count: 6553600, datatype: 7 };
  const hung = families.includes(HUNG_FAMILY) ? HUNG_FAMILY : "world";
  return new Scenario({
    seed: 17,
    nodes: NODES,
    ranksPerNode: RANKS_HERE,
    ncclVersion: settings.ncclVersion,
    subsystems: ["INIT", "COLL"],
    comms,
    // Init of N communicators one after the other, then the steps. Each rank's init of a
    // communicator starts up to 40 ms late (the simulator's skew) and spans 80 % of its window:
    // 250 ms a communicator keeps a split's Init START after its parent's Init COMPLETE, as in NCCL.
    initMs: 1000 + 250 * n,
    plan: (s) => {
      if (hangAtStep !== undefined && s > hangAtStep) return [];
      return (hangAtStep === s ? [hung] : families).map((comm, i): PlanOp => ({ comm, ...opAt(s + i) }));
    },
  });
}

interface Written {
  files: number;
  lines: number;
  bytes: number;
}

/** This node's files (global ranks 0-7). */
function localFiles(sim: Scenario): Set<string> {
  return new Set(sim.topo.ranks.filter((r) => r.node === 0).map((r) => r.file));
}

/** Appends the lines of the scenario up to simulated time `to` to this node's files. */
async function appendUpTo(sim: Scenario, dir: string, to: number): Promise<Written> {
  const local = localFiles(sim);
  const res = sim.advanceTo(to);
  let lines = 0;
  let bytes = 0;
  for (const [file, list] of res.byFile) {
    if (!local.has(file) || list.length === 0) continue;
    const text = `${list.join("\n")}\n`;
    await appendFile(join(dir, file), text);
    lines += list.length;
    bytes += Buffer.byteLength(text);
  }
  return { files: local.size, lines, bytes };
}

// ---------------------------------------------------------------------------------------------
// Reading the agent's exposition

interface Counts {
  total: number;
  /** ringwatch_nccl_* */
  nccl: number;
  /** ringwatch_nccl_*, ringwatch_pytorch_*, ringwatch_gpu_hang_signature */
  ncclRelated: number;
  /** NCCL-related series with both comm_id and rank labels / with comm_id and no rank / without comm_id (or an empty one). */
  withCommAndRank: number;
  withCommOnly: number;
  withoutComm: number;
  commIds: number;
  /** NCCL-related series per metric name, most first. */
  byName: [string, number][];
}

const isNcclRelated = (name: string): boolean =>
  name.startsWith("ringwatch_nccl_") || name.startsWith("ringwatch_pytorch_") || name === "ringwatch_gpu_hang_signature";

function countSeries(series: readonly Series[]): Counts {
  const byName = new Map<string, number>();
  const commIds = new Set<string>();
  const c: Counts = { total: series.length, nccl: 0, ncclRelated: 0, withCommAndRank: 0, withCommOnly: 0, withoutComm: 0, commIds: 0, byName: [] };
  for (const s of series) {
    if (!isNcclRelated(s.name)) continue;
    c.ncclRelated++;
    if (s.name.startsWith("ringwatch_nccl_")) c.nccl++;
    byName.set(s.name, (byName.get(s.name) ?? 0) + 1);
    const comm = s.labels.comm_id;
    // ringwatch_nccl_ras_role has comm_id="" while this node is no job's RAS querier.
    if (comm === undefined || comm === "") c.withoutComm++;
    else {
      commIds.add(comm);
      if (s.labels.rank !== undefined) c.withCommAndRank++;
      else c.withCommOnly++;
    }
  }
  c.commIds = commIds.size;
  c.byName = [...byName.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return c;
}

const valueOf = (series: readonly Series[], name: string): number | undefined => series.find((s) => s.name === name)?.value;

async function scrapeSeries(url: string): Promise<{ text: string; series: Series[] }> {
  const s = await scrapeOnce(`${url}/metrics`);
  if (s.status !== 200) throw new Error(`GET ${url}/metrics: ${s.status}`);
  const text = bodyText(s);
  return { text, series: parsePromText(text).series };
}

function tail(agent: BenchAgent, n = 15): string {
  return agent.logs().slice(-n).join("\n");
}

/** Polls the scrape until the agent has read every line written and knows `n` communicators. */
async function waitRead(agent: BenchAgent, written: number, n: number, deadlineMs: number): Promise<{ ms: number; counts: Counts }> {
  const t0 = performance.now();
  let last = "no scrape yet";
  for (;;) {
    const { series } = await scrapeSeries(agent.url);
    const lines = valueOf(series, "ringwatch_nccl_log_lines_total") ?? 0;
    const counts = countSeries(series);
    if (lines === written && counts.commIds === n) return { ms: performance.now() - t0, counts };
    if (lines > written) throw new Error(`the agent read ${lines} lines, more than the ${written} written`);
    if (counts.commIds > n) {
      const ids = new Map<string, number>();
      for (const s of series) if (isNcclRelated(s.name) && s.labels.comm_id) ids.set(s.labels.comm_id, (ids.get(s.labels.comm_id) ?? 0) + 1);
      const list = [...ids.entries()].sort((a, b) => a[1] - b[1]).slice(0, 5);
      throw new Error(`N=${n}: ${counts.commIds} comm_id values, more than ${n}; the rarest: ${list.map(([id, k]) => `${id} (${k} series)`).join(", ")}`);
    }
    last = `${lines} of ${written} lines read, ${counts.commIds} of ${n} comm_id values, dropped communicators ${valueOf(series, "ringwatch_nccl_communicators_dropped_total") ?? "?"}`;
    if (performance.now() - t0 > deadlineMs) {
      throw new Error(`N=${n}: the agent did not read everything within ${(deadlineMs / 1000).toFixed(0)} s: ${last}\nagent log:\n${tail(agent)}`);
    }
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------
// Scrape timing, both exporters alternately

interface Timing {
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  /** Last response: bytes on the wire (gzip when the server compresses) and uncompressed. */
  wireBytes: number;
  bodyBytes: number;
  gzip: boolean;
  series: number;
}

function timing(ms: number[], last: { wire: number; body: string; gzip: boolean }): Timing {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    maxMs: sorted.at(-1) ?? NaN,
    wireBytes: last.wire,
    bodyBytes: Buffer.byteLength(last.body),
    gzip: last.gzip,
    series: parsePromText(last.body).series.length,
  };
}

async function alternate(agentUrl: string, ne: NodeExporter | undefined): Promise<{ agent: Timing; agentText: string; nodeExporter?: Timing }> {
  const keepAlive = { a: new Agent({ keepAlive: true, maxSockets: 1 }), n: new Agent({ keepAlive: true, maxSockets: 1 }) };
  const ms = { a: [] as number[], n: [] as number[] };
  let lastA = { wire: 0, body: "", gzip: false };
  let lastN = { wire: 0, body: "", gzip: false };
  try {
    for (let i = 0; i < settings.warmup + settings.scrapes; i++) {
      const a = await scrapeOnce(`${agentUrl}/metrics`, keepAlive.a);
      if (a.status !== 200) throw new Error(`agent scrape: ${a.status}`);
      if (i >= settings.warmup) ms.a.push(a.ms);
      lastA = { wire: a.wireBytes, body: bodyText(a), gzip: a.contentEncoding === "gzip" };
      if (ne === undefined) continue;
      const n = await scrapeOnce(`${ne.url}/metrics`, keepAlive.n);
      if (n.status !== 200) throw new Error(`node_exporter scrape: ${n.status}`);
      if (i >= settings.warmup) ms.n.push(n.ms);
      lastN = { wire: n.wireBytes, body: bodyText(n), gzip: n.contentEncoding === "gzip" };
    }
  } finally {
    keepAlive.a.destroy();
    keepAlive.n.destroy();
  }
  return { agent: timing(ms.a, lastA), agentText: lastA.body, ...(ne === undefined ? {} : { nodeExporter: timing(ms.n, lastN) }) };
}

// ---------------------------------------------------------------------------------------------
// One N

interface HangResult {
  /** comm_id values with ringwatch_nccl_hang_suspected 1. */
  hungCommIds: string[];
  /** The one expected: c1, the first split of the world communicator. */
  expectedCommId: string;
  /** From the agent having read every line to the verdict. */
  secondsToVerdict: number;
  counts: Counts;
  rssMB: number;
}

interface NResult {
  n: number;
  written: Written;
  writeMs: number;
  readMs: number;
  counts: Counts;
  perRankComm: number;
  perComm: number;
  communicatorsDropped: number | undefined;
  agent: Timing;
  nodeExporter?: Timing;
  rssMB: number;
  /** V8's heap in use at the scrape (nodejs_heap_size_used_bytes): what the state holds, without the heap V8 keeps from reading the logs. */
  heapUsedMB: number;
  peakMB: number;
  processResidentMB: number | undefined;
  hang?: HangResult;
}

async function healthy(node: BenchNode, n: number, flags: string[], ne: NodeExporter | undefined): Promise<NResult> {
  const dir = join(node.root, `nccl-${n}`);
  await mkdir(dir, { recursive: true });
  const agent = await startBenchAgent([...node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir: dir }), ...flags], node.env, cfg.agentNodeArgs);
  try {
    const sim = job(n);
    const w0 = performance.now();
    const written = await appendUpTo(sim, dir, sim.stepStart(settings.collPerComm));
    const writeMs = performance.now() - w0;
    const read = await waitRead(agent, written.lines, n, 120_000 + 1000 * n);
    const t = await alternate(agent.url, ne);
    const mem = await memory(agent.pid);
    const series = parsePromText(t.agentText).series;
    const counts = countSeries(series);
    const resident = valueOf(series, "process_resident_memory_bytes");
    return {
      n,
      written,
      writeMs,
      readMs: read.ms,
      counts,
      perRankComm: counts.withCommAndRank / (RANKS_HERE * n),
      perComm: counts.withCommOnly / n,
      communicatorsDropped: valueOf(series, "ringwatch_nccl_communicators_dropped_total"),
      agent: t.agent,
      ...(t.nodeExporter === undefined ? {} : { nodeExporter: t.nodeExporter }),
      rssMB: mem.rssMB,
      peakMB: mem.peakMB,
      processResidentMB: resident === undefined ? undefined : resident / 2 ** 20,
      heapUsedMB: (valueOf(series, "nodejs_heap_size_used_bytes") ?? NaN) / 2 ** 20,
    };
  } finally {
    await agent.stop();
  }
}

/**
 * The same job, then one more step with only a collective on c1 that never completes (nothing is
 * written after it), appended once the agent has read the rest, so that c1's is the newest
 * collective of every process; then polls the scrape until ringwatch_nccl_hang_suspected is 1.
 * The gpu collector is off here: the bench node's GPUs replay a busy dmon capture, and a silent
 * communicator whose GPUs all compute is not called hung.
 */
async function hang(node: BenchNode, n: number, flags: string[]): Promise<HangResult> {
  const dir = join(node.root, `nccl-${n}-hang`);
  await mkdir(dir, { recursive: true });
  const agent = await startBenchAgent(
    [...node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir: dir }), ...flags, "--no-collector.gpu", `--collector.nccl.hang-threshold=${HANG_THRESHOLD}`],
    node.env,
    cfg.agentNodeArgs,
  );
  try {
    const steps = settings.collPerComm;
    const sim = job(n, steps);
    const before = await appendUpTo(sim, dir, sim.stepStart(steps));
    await waitRead(agent, before.lines, n, 120_000 + 1000 * n);
    await sleep(200);
    const last = await appendUpTo(sim, dir, sim.stepStart(steps + 1));
    await waitRead(agent, before.lines + last.lines, n, 60_000);
    // c1 is a ncclCommSplit of the world communicator (no commId of its own): the agent keys it by
    // the world's commId, the split count and the color.
    const expectedCommId = n > 1 ? `${sim.topo.comms[0]?.commId ?? "?"}/split1/color0` : (sim.topo.comms[0]?.commId ?? "?");
    const t0 = performance.now();
    for (;;) {
      const { series } = await scrapeSeries(agent.url);
      const hung = series.filter((s) => s.name === "ringwatch_nccl_hang_suspected" && s.value === 1).map((s) => s.labels.comm_id ?? "");
      if (hung.length > 0) {
        const mem = await memory(agent.pid);
        return { hungCommIds: hung, expectedCommId, secondsToVerdict: (performance.now() - t0) / 1000, counts: countSeries(series), rssMB: mem.rssMB };
      }
      if (performance.now() - t0 > 120_000) throw new Error(`N=${n}: no hang suspected 120 s after the last line\nagent log:\n${tail(agent)}`);
      await sleep(500);
    }
  } finally {
    await agent.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Output

const fmt = (x: number, d = 0): string => (Number.isFinite(x) ? x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }) : "?");
const ms = (t: Timing | undefined): string => (t === undefined ? "—" : `${fmt(t.p50Ms, 1)} / ${fmt(t.p90Ms, 1)}`);

function table(rows: readonly NResult[]): string {
  const head = [
    "N",
    "NCCL series (nccl_* / all NCCL-related)",
    "per (rank,comm)",
    "per comm",
    "other NCCL",
    "total series",
    "scrape bytes (gzip)",
    "agent p50/p90 ms",
    "node_exporter p50/p90 ms",
    "RSS MB (VmRSS / peak)",
  ];
  const lines = rows.map((r) => [
    String(r.n),
    `${fmt(r.counts.nccl)} / ${fmt(r.counts.ncclRelated)}`,
    fmt(r.perRankComm, 2),
    fmt(r.perComm, 2),
    fmt(r.counts.withoutComm),
    fmt(r.counts.total),
    `${fmt(r.agent.bodyBytes)} (${r.agent.gzip ? fmt(r.agent.wireBytes) : "not gzipped"})`,
    ms(r.agent),
    ms(r.nodeExporter),
    `${fmt(r.rssMB, 1)} / ${fmt(r.peakMB, 1)}`,
  ]);
  return [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...lines.map((l) => `| ${l.join(" | ")} |`)].join("\n");
}

function targets(rows: readonly NResult[]): string[] {
  const at = (n: number): NResult | undefined => rows.find((r) => r.n === n);
  const out: string[] = [];
  const check = (what: string, ok: boolean | undefined, measured: string): void => {
    out.push(`- ${what}: ${measured} ${ok === undefined ? "(not measured)" : ok ? "PASS" : "MISS"}`);
  };
  const r64 = at(64);
  const r256 = at(256);
  const r16 = at(16);
  check("NCCL series at N = 64 <= 600", r64 && r64.counts.ncclRelated <= 600, r64 ? fmt(r64.counts.ncclRelated) : "—");
  check("NCCL series at N = 256 <= 2,000", r256 && r256.counts.ncclRelated <= 2000, r256 ? fmt(r256.counts.ncclRelated) : "—");
  check(
    "agent scrape p50 at N = 64 <= node_exporter p50",
    r64?.nodeExporter && r64.agent.p50Ms <= r64.nodeExporter.p50Ms,
    r64 ? `${fmt(r64.agent.p50Ms, 1)} ms vs ${r64.nodeExporter ? fmt(r64.nodeExporter.p50Ms, 1) : "?"} ms` : "—",
  );
  check(
    "RSS at N = 256 <= 110 MB (and <= this run's N = 16)",
    r256 && r256.rssMB <= 110 && (r16 === undefined || r256.rssMB <= r16.rssMB),
    r256 ? `${fmt(r256.rssMB, 1)} MB (N = 16: ${r16 ? fmt(r16.rssMB, 1) : "—"} MB)` : "—",
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Main

const node = makeBenchNode();
const flags = ["--no-collector.nccl.check-pids", ...settings.extraFlags];
let ne: NodeExporter | undefined;
try {
  ne = await startNodeExporter(cfg.nodeExporter);
} catch (err) {
  console.error(`node_exporter (${cfg.nodeExporter}) not started: ${(err as Error).message}; no comparison`);
}
const results: NResult[] = [];
try {
  const shownFlags = [...node.agentFlags({ pollInterval: cfg.pollInterval, ncclDir: "<dir>" }), ...flags].map((f) => f.split(node.root).join("<root>"));
  const header = [
    `# NCCL series budget`,
    "",
    `- machine: ${hostname()}, ${cpus().length} x ${cpus()[0]?.model ?? "?"}, ${fmt(totalmem() / 2 ** 30, 1)} GiB, Linux ${release()}, Node ${process.version}`,
    `- node_exporter: ${ne ? `${ne.version} (${cfg.nodeExporter}, default collectors)` : "not run"}`,
    `- job: ${NODES.length} nodes x ${RANKS_HERE} ranks, this node's ${RANKS_HERE} files written; N communicators per rank, each over all ${NODES.length * RANKS_HERE} ranks (world + alternately split / init); NCCL ${settings.ncclVersion}, NCCL_DEBUG_SUBSYS=INIT,COLL; ${settings.collPerComm} COLL lines per rank and communicator`,
    `- agent: bench node fixture (8 fake GPUs, 8 IB ports, gdr, mtu; RAS default, nothing listening); node ${cfg.agentNodeArgs.join(" ") || "(no options)"}; flags: ${shownFlags.join(" ")}`,
    `- scrapes: ${settings.scrapes} per exporter after ${settings.warmup} warm-up, alternately, one at a time, Prometheus 2.42 headers (gzip)`,
  ];
  console.log(header.join("\n"));
  for (const n of settings.ns) {
    const r = await healthy(node, n, flags, ne);
    console.error(
      `N=${n}: ${fmt(r.written.lines)} lines (${fmt(r.written.bytes / 2 ** 20, 1)} MB) written in ${fmt(r.writeMs)} ms, read in ${fmt(r.readMs)} ms; ${fmt(r.counts.ncclRelated)} NCCL series, ${fmt(r.agent.bodyBytes)} B, agent p50 ${fmt(r.agent.p50Ms, 1)} ms, RSS ${fmt(r.rssMB, 1)} MB`,
    );
    if (settings.hang) {
      r.hang = await hang(node, n, flags);
      console.error(
        `N=${n} hang: ${r.hang.hungCommIds.length} communicator(s) suspected after ${fmt(r.hang.secondsToVerdict, 1)} s (${r.hang.hungCommIds.length === 1 && r.hang.hungCommIds[0] === r.hang.expectedCommId ? "c1 only, as expected" : `NOT c1 alone: ${r.hang.hungCommIds.join(", ")}`}), ${fmt(r.hang.counts.ncclRelated)} NCCL series`,
      );
    }
    results.push(r);
  }
  console.log("");
  console.log(table(results));
  console.log("");
  console.log("Targets (issue): NCCL series = all NCCL-related");
  console.log(targets(results).join("\n"));
  for (const r of results) {
    console.log("");
    console.log(
      `N = ${r.n}: ${fmt(r.written.lines)} lines, ${fmt(r.counts.commIds)} comm_id values, communicators dropped ${r.communicatorsDropped ?? "?"}, process_resident_memory_bytes ${r.processResidentMB === undefined ? "?" : fmt(r.processResidentMB, 1)} MB, V8 heap used ${fmt(r.heapUsedMB, 1)} MB; agent scrape ${fmt(r.agent.bodyBytes)} B, ${r.agent.gzip ? `${fmt(r.agent.wireBytes)} B gzipped` : "sent uncompressed"}; node_exporter ${r.nodeExporter ? `${fmt(r.nodeExporter.series)} series, ${fmt(r.nodeExporter.bodyBytes)} B, ${r.nodeExporter.gzip ? `${fmt(r.nodeExporter.wireBytes)} B gzipped` : "sent uncompressed"}` : "—"}; most NCCL series:`,
    );
    for (const [name, k] of r.counts.byName.slice(0, 12)) console.log(`    ${fmt(k).padStart(7)}  ${name}`);
    if (r.hang) {
      const h = r.hang;
      console.log(
        `  hang scenario (threshold ${HANG_THRESHOLD}, every rank waits in ${HUNG_FAMILY} = ${h.expectedCommId}): suspected ${h.hungCommIds.join(", ")} after ${fmt(h.secondsToVerdict, 1)} s; NCCL series ${fmt(h.counts.nccl)} / ${fmt(h.counts.ncclRelated)} (healthy ${fmt(r.counts.ncclRelated)}), RSS ${fmt(h.rssMB, 1)} MB`,
      );
      const healthyByName = new Map(r.counts.byName);
      const grew = h.counts.byName
        .filter(([name, k]) => k !== (healthyByName.get(name) ?? 0))
        .map(([name, k]) => `${name} ${healthyByName.get(name) ?? 0} -> ${k}`);
      if (grew.length > 0) console.log(`    changed: ${grew.join("; ")}`);
    }
  }
  await mkdir(dirname(settings.out), { recursive: true });
  await writeFile(
    settings.out,
    JSON.stringify(
      {
        machine: { host: hostname(), cpus: cpus().length, model: cpus()[0]?.model, memGiB: totalmem() / 2 ** 30, kernel: release(), node: process.version },
        nodeExporter: ne ? { bin: cfg.nodeExporter, version: ne.version } : null,
        agentFlags: shownFlags,
        agentNodeArgs: cfg.agentNodeArgs,
        settings: { ...settings, out: undefined },
        results,
      },
      null,
      2,
    ),
  );
  console.error(`wrote ${settings.out}`);
} finally {
  await ne?.stop();
  node.remove();
}
