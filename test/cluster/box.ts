/**
 * A cluster in a box, on loopback: one simulated NCCL job (test/fakes/nccl-ras --cluster: one RAS
 * listener per node, one shared job state, every job-wide collection counted) and one built agent
 * per simulated node, node n at 127.0.1.(n+1) (all of 127.0.0.0/8 is loopback on Linux): its own
 * web port there (the same port on every node, as in a real cluster), its own RAS address, and
 * --collector.nccl.node-address naming it. Optionally Debian's real Prometheus scrapes every agent
 * with the shipped rules, and the real Alertmanager routes (test/e2e/alerting/stack.ts).
 * Each node has its own log folder (<dir>/logs/node-<n>), the only one its agent follows; with
 * `logs`, the job writes its NCCL debug logs there in real time (test/cluster/box-logs.ts: one file
 * per rank process, the RAS fake's ranks, pids and communicator hash), and box.hang() stops both the
 * RAS fake and the logs with one rank behind. jobSeries() counts the NCCL series a Prometheus holds.
 * No vitest import: the figures script (bench/cluster-box.ts) starts it too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { BoxLogs, type BoxLogsOptions, type LogHang } from "./box-logs.js";
import { followAgentOutput, type AgentOutput } from "../helpers/agent-output.js";
import { startRasCluster, type ClusterSpec, type RasCluster } from "../helpers/ras-cluster.js";
import { tempDir, removeTempDir } from "../helpers/temp-dir.js";
import { freePort } from "../e2e/alerting/stack.js";

/** The RAS fake's communicator hash without logs (cluster-job.mjs DEFAULT_HASH; not imported: the bench runs this compiled). */
const RAS_DEFAULT_HASH = "0x49bbd7790311d5eb";

/** The built agent of the repository (found from here, which may run compiled under .bench/). */
function agentMain(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, "dist/agent/main.js");
}

export interface BoxOptions {
  nodes: number;
  ranksPerNode: number;
  version: string;
  /** --collector.nccl.ras-interval, seconds. */
  intervalS: number;
  /** --collector.nccl.ras-settle, seconds. */
  settleS: number;
  /** --collector.nccl.hang-threshold, seconds. */
  thresholdS: number;
  /** Extra flags for every agent. */
  flags?: string[];
  /** The job's listeners open at start (false: at box.cluster.control({listen: true})). */
  listen?: boolean;
  stepMs?: number;
  /** What the job's RAS diagnostics report (NCCL 2.31.2+; render.d.mts RasDiag). */
  diag?: ClusterSpec["diag"];
  /** The job writes its NCCL debug logs (box-logs.ts), each node's into the folder its agent follows. */
  logs?: BoxLogsOptions;
  /** The agent's main.js (default: this repository's dist/agent/main.js), e.g. an older build to compare. */
  agent?: string;
}

export interface BoxAgent {
  node: number;
  host: string;
  url: string;
  child: ChildProcess;
  out: AgentOutput;
}

/** What box.hang() did. */
export interface BoxHang {
  rank: number;
  /** Epoch ms at which the hang was asked for, and at which both the logs and RAS stood still. */
  askedAt: number;
  at: number;
  /** Where the logs stopped (undefined without logs). */
  logs?: LogHang;
}

export interface Box {
  cluster: RasCluster;
  /** The job's log writer (with BoxOptions.logs). */
  logs?: BoxLogs;
  /** The job's communicator as RAS reports it (with logs: the world communicator's commId). */
  commId: string;
  agents: BoxAgent[];
  /** The agents' web port (the same on every node). */
  port: number;
  dir: string;
  hostOf(node: number): string;
  /** The only folder node n's agent follows. */
  logDirOf(node: number): string;
  scrape(node: number): Promise<string>;
  /**
   * Global rank `rank` stops: the logs (with logs) stop with it missing the next world AllReduce the
   * others enter (box-logs.ts), then the RAS fake's job hangs the same way ({"hang": {"rank"}}).
   */
  hang(o: { behind: number }): Promise<BoxHang>;
  /** SIGKILL one agent (its node and the job's processes there stay). */
  kill(node: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts node n's agent; resolves once it listens. */
async function startBoxAgent(node: number, host: string, port: number, rasAddress: string, o: BoxOptions, logDir: string): Promise<BoxAgent> {
  const args = [
    o.agent ?? agentMain(),
    `--web.listen-address=${host}:${port}`,
    "--collector.disable-defaults",
    "--collector.nccl",
    `--collector.nccl.path=${logDir}`,
    "--no-collector.nccl.check-pids", // the simulated ranks' pids are not processes of this machine
    `--collector.nccl.ras-addr=${rasAddress}`,
    `--collector.nccl.ras-interval=${o.intervalS}s`,
    `--collector.nccl.ras-settle=${o.settleS}s`,
    `--collector.nccl.hang-threshold=${o.thresholdS}s`,
    `--collector.nccl.ras-peer-port=${port}`,
    `--collector.nccl.node-address=${host}`,
    "--log.level=info",
    ...(o.flags ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  // 32 agents start at once on a 2-core machine: each gets a minute.
  const out = followAgentOutput(child, 60_000, 5000);
  try {
    await out.listening;
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return { node, host, url: `http://${host}:${port}`, child, out };
}

export async function startBox(o: BoxOptions): Promise<Box> {
  const dir = tempDir("rw-box-");
  const logDir = join(dir, "logs");
  const logDirOf = (node: number): string => join(logDir, `node-${node}`);
  for (let n = 0; n < o.nodes; n++) mkdirSync(logDirOf(n), { recursive: true });
  const logs = o.logs === undefined ? undefined : new BoxLogs(logDir, o.nodes, o.ranksPerNode, o.version, o.logs);
  const spec: ClusterSpec = {
    version: o.version,
    nodes: o.nodes,
    ranksPerNode: o.ranksPerNode,
    port: await freePort(),
    stepMs: o.stepMs ?? 200,
    listen: o.listen ?? true,
    ...(o.diag !== undefined ? { diag: o.diag } : {}),
    ...(logs !== undefined ? { hash: logs.commId } : {}),
  };
  const cluster = await startRasCluster(dir, spec);
  const port = await freePort();
  const agents: BoxAgent[] = [];
  try {
    // A few at a time: all at once would make each wait for the others' start on 2 cores.
    for (let n = 0; n < o.nodes; n += 8) {
      const batch = Array.from({ length: Math.min(8, o.nodes - n) }, (_, i) => n + i);
      const started = await Promise.allSettled(
        batch.map((node) => startBoxAgent(node, cluster.hostOf(node), port, `${cluster.hostOf(node)}:${spec.port}`, o, logDirOf(node))),
      );
      // The batch's agents that did start are stopped with the others if one did not.
      for (const r of started) if (r.status === "fulfilled") agents.push(r.value);
      for (const r of started) if (r.status === "rejected") throw r.reason;
    }
  } catch (err) {
    for (const a of agents) a.child.kill("SIGKILL");
    await cluster.stop();
    throw err;
  }
  // The job starts writing once every agent follows its folder: the INIT lines come first.
  logs?.start();
  const byNode = new Map(agents.map((a) => [a.node, a]));
  const agentOf = (node: number): BoxAgent => {
    const a = byNode.get(node);
    if (a === undefined) throw new Error(`no agent for node ${node}`);
    return a;
  };
  return {
    cluster,
    ...(logs !== undefined ? { logs } : {}),
    commId: logs?.commId ?? RAS_DEFAULT_HASH,
    agents,
    port,
    dir,
    hostOf: (node) => cluster.hostOf(node),
    logDirOf,
    async hang({ behind }) {
      const askedAt = Date.now();
      const stopped = logs === undefined ? undefined : await logs.hang(behind);
      await cluster.control({ hang: { rank: behind } });
      return { rank: behind, askedAt, at: Date.now(), ...(stopped !== undefined ? { logs: stopped } : {}) };
    },
    async scrape(node) {
      const res = await fetch(`${agentOf(node).url}/metrics`);
      if (res.status !== 200) throw new Error(`node ${node}: GET /metrics: ${res.status}`);
      return res.text();
    },
    kill(node) {
      const a = agentOf(node);
      return new Promise((resolve) => {
        if (a.child.exitCode !== null || a.child.signalCode !== null) return resolve();
        a.child.once("exit", () => resolve());
        a.child.kill("SIGKILL");
      });
    },
    async stop() {
      await logs?.stop();
      await Promise.all(
        agents.map(
          (a) =>
            new Promise<void>((resolve) => {
              if (a.child.exitCode !== null || a.child.signalCode !== null) return resolve();
              a.child.once("exit", () => resolve());
              a.child.kill("SIGTERM");
            }),
        ),
      );
      await cluster.stop();
      removeTempDir(dir);
    },
  };
}

/** Collections per interval over [fromMs, toMs): the count of collections the job logged, divided by the intervals. */
export function collectionsPerInterval(
  cluster: RasCluster,
  fromMs: number,
  toMs: number,
  intervalS: number,
): { collections: number; intervals: number; perInterval: number; messages: number } {
  const within = cluster.collections().filter((c) => c.t >= fromMs && c.t < toMs);
  const intervals = (toMs - fromMs) / (intervalS * 1000);
  return {
    collections: within.length,
    intervals,
    perInterval: within.length / intervals,
    messages: within.reduce((s, c) => s + c.messages, 0),
  };
}

/** Every NCCL-related series of the job (the nccl collector's, PyTorch's, the GPU hang signature). */
export const NCCL_SELECTOR = '{__name__=~"ringwatch_nccl_.+|ringwatch_pytorch_.+|ringwatch_gpu_hang_signature"}';

/** NCCL series split by what they are kept for. */
export interface SeriesSplit {
  total: number;
  /** Both comm_id and rank labels: one per (rank, communicator). */
  perRankComm: number;
  /** comm_id (not empty) without rank: one per communicator. */
  perComm: number;
  /** The rest: per process, per node, ... */
  other: number;
  /** Per metric name, most first. */
  byName: [string, number][];
}

export interface JobSeries {
  /** The series Prometheus has a sample of now (the query API). */
  now: SeriesSplit;
  /** Every series Prometheus held in [from, to] (/api/v1/series), those that went included. */
  held?: SeriesSplit & { from: number; to: number };
  /** The head block (/api/v1/status/tsdb): every series of every job, and the NCCL names among the ten largest. */
  head: { numSeries: number; ncclTop: [string, number][] };
}

async function promGet<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`GET ${url}: ${res.status} ${body.error ?? ""}`);
  return body.data;
}

async function promCount(promUrl: string, expr: string): Promise<number> {
  const r = await promGet<{ result: { value: [number, string] }[] }>(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  return Number(r.result[0]?.value[1] ?? 0);
}

function splitOf(labelSets: readonly Record<string, string>[]): SeriesSplit {
  const byName = new Map<string, number>();
  const s: SeriesSplit = { total: 0, perRankComm: 0, perComm: 0, other: 0, byName: [] };
  for (const l of labelSets) {
    s.total++;
    const name = l.__name__ ?? "";
    byName.set(name, (byName.get(name) ?? 0) + 1);
    if ((l.comm_id ?? "") === "") s.other++;
    else if ((l.rank ?? "") !== "") s.perRankComm++;
    else s.perComm++;
  }
  s.byName = [...byName].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return s;
}

/**
 * The NCCL series a Prometheus holds: now (count() over NCCL_SELECTOR, split by labels), over
 * [heldFrom, now] where asked (the series API: series that came and went count too), and the head
 * block's totals. Times are epoch ms.
 */
export async function jobSeries(promUrl: string, o: { heldFrom?: number } = {}): Promise<JobSeries> {
  const sel = NCCL_SELECTOR.slice(1, -1);
  const [total, perRankComm, perComm, names] = await Promise.all([
    promCount(promUrl, `count(${NCCL_SELECTOR})`),
    promCount(promUrl, `count({${sel}, comm_id!="", rank!=""})`),
    promCount(promUrl, `count({${sel}, comm_id!="", rank=""})`),
    promGet<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `${promUrl}/api/v1/query?query=${encodeURIComponent(`count by (__name__) (${NCCL_SELECTOR})`)}`,
    ),
  ]);
  const now: SeriesSplit = {
    total,
    perRankComm,
    perComm,
    other: total - perRankComm - perComm,
    byName: names.result.map((r): [string, number] => [r.metric.__name__ ?? "", Number(r.value[1])]).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
  };
  const tsdb = await promGet<{ headStats: { numSeries: number }; seriesCountByMetricName: { name: string; value: number }[] }>(`${promUrl}/api/v1/status/tsdb`);
  const ncclName = /^(ringwatch_nccl_.+|ringwatch_pytorch_.+|ringwatch_gpu_hang_signature)$/;
  const head = {
    numSeries: tsdb.headStats.numSeries,
    ncclTop: tsdb.seriesCountByMetricName.filter((m) => ncclName.test(m.name)).map((m): [string, number] => [m.name, m.value]),
  };
  if (o.heldFrom === undefined) return { now, head };
  const to = Date.now();
  const sets = await promGet<Record<string, string>[]>(
    `${promUrl}/api/v1/series?match[]=${encodeURIComponent(NCCL_SELECTOR)}&start=${o.heldFrom / 1000}&end=${to / 1000}`,
  );
  return { now, held: { ...splitOf(sets), from: o.heldFrom, to }, head };
}

/** One line of a SeriesSplit. */
export function describeSplit(s: SeriesSplit): string {
  return `${s.total} series: ${s.perRankComm} per (rank, communicator), ${s.perComm} per communicator, ${s.other} other`;
}
