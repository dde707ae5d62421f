/**
 * A cluster in a box, on loopback: one simulated NCCL job (test/fakes/nccl-ras --cluster: one RAS
 * listener per node, one shared job state, every job-wide collection counted) and one built agent
 * per simulated node, node n at 127.0.1.(n+1) (all of 127.0.0.0/8 is loopback on Linux): its own
 * web port there (the same port on every node, as in a real cluster), its own RAS address, and
 * --collector.nccl.node-address naming it. Optionally Debian's real Prometheus scrapes every agent
 * with the shipped rules, and the real Alertmanager routes (test/e2e/alerting/stack.ts).
 * No vitest import: the figures script (bench/cluster-box.ts) starts it too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { followAgentOutput, type AgentOutput } from "../helpers/agent-output.js";
import { startRasCluster, type ClusterSpec, type RasCluster } from "../helpers/ras-cluster.js";
import { tempDir, removeTempDir } from "../helpers/temp-dir.js";
import { freePort } from "../e2e/alerting/stack.js";

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
}

export interface BoxAgent {
  node: number;
  host: string;
  url: string;
  child: ChildProcess;
  out: AgentOutput;
}

export interface Box {
  cluster: RasCluster;
  agents: BoxAgent[];
  /** The agents' web port (the same on every node). */
  port: number;
  dir: string;
  hostOf(node: number): string;
  scrape(node: number): Promise<string>;
  /** SIGKILL one agent (its node and the job's processes there stay). */
  kill(node: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts node n's agent; resolves once it listens. */
async function startBoxAgent(node: number, host: string, port: number, rasAddress: string, o: BoxOptions, logDir: string): Promise<BoxAgent> {
  const args = [
    agentMain(),
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
  await out.listening;
  return { node, host, url: `http://${host}:${port}`, child, out };
}

export async function startBox(o: BoxOptions): Promise<Box> {
  const dir = tempDir("rw-box-");
  const logDir = join(dir, "logs");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(logDir);
  const spec: ClusterSpec = {
    version: o.version,
    nodes: o.nodes,
    ranksPerNode: o.ranksPerNode,
    port: await freePort(),
    stepMs: o.stepMs ?? 200,
    listen: o.listen ?? true,
    ...(o.diag !== undefined ? { diag: o.diag } : {}),
  };
  const cluster = await startRasCluster(dir, spec);
  const port = await freePort();
  const agents: BoxAgent[] = [];
  try {
    // A few at a time: all at once would make each wait for the others' start on 2 cores.
    for (let n = 0; n < o.nodes; n += 8) {
      const batch = Array.from({ length: Math.min(8, o.nodes - n) }, (_, i) => n + i);
      agents.push(
        ...(await Promise.all(batch.map((node) => startBoxAgent(node, cluster.hostOf(node), port, `${cluster.hostOf(node)}:${spec.port}`, o, logDir)))),
      );
    }
  } catch (err) {
    for (const a of agents) a.child.kill("SIGKILL");
    await cluster.stop();
    throw err;
  }
  const byNode = new Map(agents.map((a) => [a.node, a]));
  const agentOf = (node: number): BoxAgent => {
    const a = byNode.get(node);
    if (a === undefined) throw new Error(`no agent for node ${node}`);
    return a;
  };
  return {
    cluster,
    agents,
    port,
    dir,
    hostOf: (node) => cluster.hostOf(node),
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
