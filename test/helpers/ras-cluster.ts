/**
 * Starts test/fakes/nccl-ras --cluster (test/fakes/ras/cluster-job.mjs: a simulated NCCL job of several
 * nodes in one process, one RAS client listener per node on its own loopback address) and drives it through
 * its stdin. No vitest import: the bench may start it too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ClusterCollection, ClusterControl, ClusterSpec, ClusterStats } from "../fakes/ras/cluster-job.mjs";

export type { ClusterCollection, ClusterControl, ClusterSpec, ClusterStats } from "../fakes/ras/cluster-job.mjs";

/** The repository's root: the nearest directory up from here with a package.json (this file may also run compiled). */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const fakeRas = join(repoRoot(), "test/fakes/nccl-ras");
/** Imported from the repository (not next to this file): the bench runs this helper compiled under .bench/. */
const clusterJob = (): Promise<typeof import("../fakes/ras/cluster-job.mjs")> => import(pathToFileURL(join(repoRoot(), "test/fakes/ras/cluster-job.mjs")).href);

export interface RasCluster {
  child: ChildProcess;
  /** The spec as the fake read it (collectionsLog filled in). */
  spec: ClusterSpec & { collectionsLog: string };
  specFile: string;
  /** Node n's address (its RAS listener's host and the host its ranks are named under). */
  hostOf(node: number): string;
  /** Node n's RAS port, as last reported on "listening" (or the spec's fixed port before that). */
  portOf(node: number): number;
  /** "host:port" of node n's RAS listener. */
  addressOf(node: number): string;
  /** Applies a control line; resolves once the fake acknowledged it (applied, events written). */
  control(msg: ClusterControl): Promise<void>;
  /** The fake's counters ({"stats": true}). */
  stats(): Promise<ClusterStats>;
  /** The collections logged so far (collectionsLog, parsed). */
  collections(): ClusterCollection[];
  /** What the fake wrote to stderr (errors only). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Writes `spec` to <dir>/ras-cluster.json (collectionsLog defaulting to <dir>/ras-collections.jsonl) and
 * starts the fake on it; resolves once it is listening (spec.listen false: once it runs). startTimeoutMs is
 * generous by default: tests must hold on a busy 2-core machine.
 */
export async function startRasCluster(dir: string, spec: ClusterSpec, opts: { startTimeoutMs?: number } = {}): Promise<RasCluster> {
  const full = { ...spec, collectionsLog: spec.collectionsLog ?? join(dir, "ras-collections.jsonl") };
  const specFile = join(dir, "ras-cluster.json");
  writeFileSync(specFile, JSON.stringify(full));
  const child = spawn(process.execPath, [fakeRas, "--cluster", specFile], { stdio: ["pipe", "pipe", "pipe"] });
  const { stdin, stdout, stderr } = child;
  if (stdin === null || stdout === null || stderr === null) throw new Error("nccl-ras without stdio pipes");
  let out = "";
  let err = "";
  stdout.setEncoding("utf8");
  stderr.setEncoding("utf8");
  stderr.on("data", (d: string) => (err += d));
  const waiters: (() => void)[] = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  stdout.on("data", (d: string) => {
    out += d;
    wake();
  });
  child.once("exit", wake);
  /** Complete stdout lines (a chunk may end mid-line). */
  const lines = (): string[] => out.split("\n").slice(0, -1);

  /** Resolves with the index of the first stdout line `pick` accepts. */
  const waitLine = (what: string, pick: (line: string) => boolean, timeoutMs?: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined ? undefined : setTimeout(() => reject(new Error(`nccl-ras --cluster: no ${what} in ${timeoutMs} ms: ${err}`)), timeoutMs);
      const check = (): void => {
        const i = lines().findIndex(pick);
        if (i >= 0) {
          clearTimeout(timer);
          resolve(i);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          clearTimeout(timer);
          reject(new Error(`nccl-ras --cluster exited (${String(child.exitCode ?? child.signalCode)}) before ${what}: ${err}`));
        } else waiters.push(check);
      };
      check();
    });

  try {
    const started = full.listen === false ? (l: string): boolean => l === "ready" : (l: string): boolean => l.startsWith("listening ");
    await waitLine(full.listen === false ? '"ready"' : '"listening"', started, opts.startTimeoutMs ?? 60_000);
  } catch (e) {
    child.kill("SIGKILL");
    throw e;
  }

  const fixedPort = full.port ?? 0;
  const portOf = (node: number): number => {
    const last = lines()
      .filter((l) => l.startsWith("listening "))
      .pop();
    const port = last === undefined ? fixedPort : (JSON.parse(last.slice("listening ".length)) as Record<string, number>)[String(node)];
    if (port === undefined || port === 0) throw new Error(`node ${node} has no port yet`);
    return port;
  };
  const { nodeAddressOf } = await clusterJob();
  const hostOf = (node: number): string => nodeAddressOf(full, node);

  let sent = 0;
  const control = async (msg: ClusterControl): Promise<number> => {
    const n = ++sent;
    await new Promise<void>((resolve, reject) => stdin.write(`${JSON.stringify(msg)}\n`, (e) => (e ? reject(e) : resolve())));
    return waitLine(`ack of control line ${n}`, (l) => l === `ctl ${n}`);
  };

  return {
    child,
    spec: full,
    specFile,
    hostOf,
    portOf,
    addressOf: (node) => `${hostOf(node)}:${portOf(node)}`,
    control: async (msg) => {
      await control(msg);
    },
    stats: async () => {
      const ack = await control({ stats: true });
      const line = lines()
        .slice(0, ack)
        .filter((l) => l.startsWith("stats "))
        .pop();
      if (line === undefined) throw new Error(`nccl-ras --cluster printed no stats: ${err}`);
      return JSON.parse(line.slice("stats ".length)) as ClusterStats;
    },
    collections: () => {
      if (!existsSync(full.collectionsLog)) return [];
      return readFileSync(full.collectionsLog, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as ClusterCollection);
    },
    stderr: () => err,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
