/**
 * Bench settings from BENCH_* environment variables. BENCH_QUICK=1 picks short defaults (the whole
 * run in about a minute, for development); without it the defaults give the figures in
 * docs/performance.md (about five minutes). Any single variable overrides either set of defaults.
 */
export type BenchPart = "ingest" | "steady" | "latency" | "full" | "startup" | "ras" | "inspector" | "flight-recorder";

export const ALL_PARTS: readonly BenchPart[] = ["ingest", "steady", "latency", "full", "startup", "ras", "inspector", "flight-recorder"];

export interface BenchConfig {
  quick: boolean;
  /** Parts to run (BENCH_ONLY=latency,startup); default all. */
  parts: ReadonlySet<BenchPart>;
  /** (a) MB per file of the 16 ingest files. */
  mbPerFile: number;
  /** Nccl-only steady state: measured seconds. */
  steadySeconds: number;
  /** (b) measured requests per configuration, after warmupRequests. */
  requests: number;
  warmupRequests: number;
  /** (b) concurrent scrapers, one configuration each. */
  concurrency: number[];
  /** (b) COLL lines/s written to the 16 NCCL logs while the scrapers run (both exporters). */
  latencyLinesPerSecond: number;
  /** (c) measured seconds, after fullWarmupSeconds. */
  fullSeconds: number;
  fullWarmupSeconds: number;
  /** (c) COLL lines/s over the 16 files. */
  fullLinesPerSecond: number;
  /** (c) seconds between two Prometheus-like scrapes. */
  scrapeEverySeconds: number;
  /** --collector.interval of the infiniband, gdr and mtu polls in (b), (c) and (d); the agent's default. */
  pollInterval: string;
  /** (d) number of starts (the median is reported). */
  starts: number;
  /** node_exporter binary. */
  nodeExporter: string;
  /** Run the agent under --cpu-prof in (b) and (d) and summarise the profiles. */
  profile: boolean;
  /** Node options for every agent start: those the systemd unit and the image set, unless BENCH_AGENT_NODE_ARGS says otherwise ("" for none). */
  agentNodeArgs: string[];
}

/** NODE_OPTIONS of systemd/ringwatch.service and the Dockerfile: the bench runs the agent as they do. */
export const SHIPPED_NODE_OPTIONS = "--max-semi-space-size=2";

/**
 * UV_THREADPOOL_SIZE of the unit, the image (and so the DaemonSet): libuv's file-system threads.
 * 8 lets the file-system gate (collectors/job-fs-gate.ts) give 3 calls to each mount and 6 in all,
 * where the default 4 gives 1 and 2 (10,000 files' heads read in 2.4 s instead of 1.7 s).
 */
export const SHIPPED_UV_THREADPOOL_SIZE = "8";

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name}=${raw}: not a non-negative number`);
  return v;
}

function list(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = raw.split(",").map((s) => Number(s.trim()));
  if (v.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`${name}=${raw}: not a list of positive integers`);
  return v;
}

function parts(): Set<BenchPart> {
  const raw = process.env.BENCH_ONLY;
  if (raw === undefined || raw === "") return new Set(ALL_PARTS);
  const out = new Set<BenchPart>();
  for (const p of raw.split(",").map((s) => s.trim())) {
    if (!(ALL_PARTS as readonly string[]).includes(p)) throw new Error(`BENCH_ONLY: unknown part ${p} (one of ${ALL_PARTS.join(", ")})`);
    out.add(p as BenchPart);
  }
  return out;
}

export function benchConfig(): BenchConfig {
  const quick = process.env.BENCH_QUICK === "1" || process.env.BENCH_QUICK === "true";
  return {
    quick,
    parts: parts(),
    mbPerFile: num("BENCH_MB_PER_FILE", quick ? 4 : 16),
    steadySeconds: num("BENCH_STEADY_SECONDS", quick ? 5 : 20),
    requests: num("BENCH_REQUESTS", quick ? 150 : 2000),
    warmupRequests: num("BENCH_WARMUP_REQUESTS", quick ? 20 : 200),
    concurrency: list("BENCH_CONCURRENCY", [1, 10]),
    latencyLinesPerSecond: num("BENCH_LATENCY_LINES_PER_SECOND", 20_000),
    fullSeconds: num("BENCH_FULL_SECONDS", quick ? 10 : 60),
    fullWarmupSeconds: num("BENCH_FULL_WARMUP_SECONDS", quick ? 3 : 8),
    fullLinesPerSecond: num("BENCH_FULL_LINES_PER_SECOND", 20_000),
    scrapeEverySeconds: num("BENCH_SCRAPE_EVERY_SECONDS", 5),
    pollInterval: process.env.BENCH_POLL_INTERVAL ?? "15s",
    starts: num("BENCH_STARTS", 5),
    nodeExporter: process.env.BENCH_NODE_EXPORTER ?? "/usr/bin/prometheus-node-exporter",
    profile: process.env.BENCH_PROFILE === "1",
    agentNodeArgs: (process.env.BENCH_AGENT_NODE_ARGS ?? SHIPPED_NODE_OPTIONS).split(" ").filter((a) => a !== ""),
  };
}
