/**
 * The cluster in a box's NCCL debug logs (test/cluster/box.ts, BoxOptions.logs): the job the RAS fake
 * simulates, rendered by the log simulator in test/sim (every line shape copied from a real capture)
 * and appended in real time, one file per rank process as NCCL_DEBUG_FILE=%h.%p names them, each
 * node's files in its own folder (<root>/node-<n>) that only that node's agent follows.
 *
 * The job matches the RAS fake's (test/fakes/ras/cluster-job.mjs): global rank r on node
 * floor(r / ranksPerNode), pid 4000 + r, cudaDev = nvmlDev = r % ranksPerNode; the world
 * communicator's commId is the hash the RAS fake reports (box.ts passes it as ClusterSpec.hash), so
 * both sources speak of one communicator. Hosts are named node-<n> (NCCL prints a host name, not the
 * address RAS gives). On top of the world: tp (contiguous groups of ranksPerNode: one per node) and dp
 * (strided: one rank of every node, ranksPerNode of them), and `comms` more families, alternately
 * contiguous (one more communicator per node) and strided (ranksPerNode more per node), alternately
 * ncclCommSplit and ncclCommInitRank, each with one AllReduce a step. A step: 2 x (tp AllGather + tp
 * ReduceScatter), 4 dp AllReduce buckets, the extra families' AllReduces, and last a 1-element world
 * AllReduce (the sim's default recipe, test/sim/coll.ts makePlan, plus the extras).
 *
 * NCCL versions: the simulator knows 2.19 to 2.29; a later version is written as 2.29.7 (the newest
 * release it has shapes for), an earlier one as 2.19.3.
 *
 * The hang (hang(rank)): the scenario is rebuilt with test/sim's rankStopsBeforeCollective at the
 * first world AllReduce no rank has entered yet, and replayed to the current time (the simulator is
 * deterministic: the lines up to the fault are the same; checked by their count). Rank `rank` never
 * writes that AllReduce's COLL line, every other rank writes it, and then nobody writes anything:
 * the RAS fake's `{"hang": {"rank": r}}` (rank r never enters its next AllReduce, the others do).
 * No vitest import: the bench starts it too.
 */
import { mkdirSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { parseVersion, rankStopsBeforeCollective, Scenario, type JobSpec, type PlanOp, type SubCommSpec } from "../sim/index.js";

/** What BoxOptions.logs asks for. */
export interface BoxLogsOptions {
  /** Communicator families on top of world, tp and dp: each adds one communicator per rank. Default 0. */
  comms?: number;
  /** Simulated step length (ms); one step writes (9 + comms) COLL lines per rank. Default 1500. */
  stepMs?: number;
  /** How often the writer appends what the job wrote since (ms of wall time). Default 500. */
  tickMs?: number;
  seed?: number;
}

/** Where a hang stopped the logs. */
export interface LogHang {
  rank: number;
  step: number;
  /** The collective's index in the step's plan, and what it is. */
  k: number;
  op: string;
  /** The communicator family it runs on ("world"). */
  comm: string;
  /** Simulated ms at which every line of the step has been written. */
  doneMs: number;
}

export const PID_BASE = 4000;

/** The NCCL version the simulator writes for the box's version (2.19 to 2.29; closest release otherwise). */
export function simVersion(version: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  const minor = Number(m?.[2] ?? 29);
  if (minor > 29) return "2.29.7";
  if (minor < 19) return "2.19.3";
  parseVersion(version); // throws where the simulator cannot write it
  return version;
}

/** The extra families: alternately contiguous / strided, split / init. */
export function extraFamilies(n: number, nodes: number, ranksPerNode: number): SubCommSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `x${i + 1}`,
    groupSize: i % 2 === 0 ? ranksPerNode : nodes,
    layout: i % 2 === 0 ? "contiguous" : "strided",
    via: i % 4 < 2 ? "split" : "init",
  }));
}

/** The job's spec for the simulator (without faults). */
export function boxJobSpec(nodes: number, ranksPerNode: number, version: string, o: BoxLogsOptions = {}): JobSpec {
  const extra = extraFamilies(o.comms ?? 0, nodes, ranksPerNode);
  const comms: SubCommSpec[] = [{ name: "tp", groupSize: ranksPerNode, layout: "contiguous" }, { name: "dp", groupSize: nodes, layout: "strided" }, ...extra];
  const base: JobSpec = {
    seed: o.seed ?? 29,
    nodes: Array.from({ length: nodes }, (_, n) => `node-${n}`),
    ranksPerNode,
    ncclVersion: simVersion(version),
    comms,
    pids: Array.from({ length: nodes }, (_, n) => Array.from({ length: ranksPerNode }, (_, l) => PID_BASE + n * ranksPerNode + l)),
    stepMs: o.stepMs ?? 1500,
    startTime: Date.now(),
  };
  if (extra.length === 0) return base;
  // The default recipe, with one AllReduce per extra family before the closing world AllReduce.
  const recipe = new Scenario(base);
  const extraOps: PlanOp[] = extra.map((f) => ({ comm: f.name, op: "AllReduce", count: 262144, datatype: 7 }));
  return {
    ...base,
    plan: (s) => {
      const ops = recipe.plan(s);
      return [...ops.slice(0, -1), ...extraOps, ...ops.slice(-1)];
    },
  };
}

/** The index of the step's world AllReduce (the last one). */
function worldAllReduce(sim: Scenario, step: number): number {
  const ops = sim.plan(step);
  for (let k = ops.length - 1; k >= 0; k--) if (ops[k]?.comm === "world" && ops[k]?.op === "AllReduce") return k;
  throw new Error(`step ${step} has no world AllReduce`);
}

export class BoxLogs {
  private sim: Scenario;
  private readonly spec: JobSpec;
  private readonly handles = new Map<string, Promise<FileHandle>>();
  /** File name of the simulator -> the node's path of it. */
  private readonly paths = new Map<string, string>();
  private t0 = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Ticks and hangs run one after another. */
  private queue: Promise<void> = Promise.resolve();
  private written = 0;
  private bytes = 0;
  private error: Error | undefined;
  private stopped = false;
  hung: LogHang | undefined;

  constructor(
    readonly root: string,
    readonly nodes: number,
    readonly ranksPerNode: number,
    version: string,
    private readonly o: BoxLogsOptions = {},
  ) {
    this.spec = boxJobSpec(nodes, ranksPerNode, version, o);
    this.sim = new Scenario(this.spec);
    for (let n = 0; n < nodes; n++) mkdirSync(this.dirOf(n), { recursive: true });
    for (const r of this.sim.topo.ranks) this.paths.set(r.file, join(this.dirOf(r.node), `${r.host}.${r.pid}`));
  }

  /** The world communicator's commId (the hash RAS reports for the job). */
  get commId(): string {
    const id = this.sim.topo.comms[0]?.commId;
    if (id === undefined) throw new Error("the world communicator has no commId");
    return id;
  }

  /** The NCCL version the logs say. */
  get version(): string {
    return this.sim.spec.version.full;
  }

  /** Node n's log folder (its agent follows only this one). */
  dirOf(node: number): string {
    return join(this.root, `node-${node}`);
  }

  /** The communicators with a rank on node n. */
  commsOn(node: number): number {
    return this.sim.topo.comms.filter((c) => c.members.some((r) => this.sim.topo.rank(r).node === node)).length;
  }

  /** Distinct communicators of the job. */
  get commCount(): number {
    return this.sim.topo.comms.length;
  }

  /** The host name the logs give node n. */
  hostOf(node: number): string {
    return this.sim.topo.ranks[node * this.ranksPerNode]?.host ?? `node-${node}`;
  }

  stats(): { lines: number; bytes: number; simMs: number; files: number } {
    return { lines: this.written, bytes: this.bytes, simMs: this.sim.nowMs, files: this.paths.size };
  }

  /** Starts appending in real time: simulated time 0 is now (the INIT lines come first). */
  start(): void {
    this.t0 = Date.now();
    const tick = this.o.tickMs ?? 500;
    this.timer = setInterval(() => {
      void this.enqueue(() => this.writeUpTo(Date.now() - this.t0));
    }, tick);
    this.timer.unref();
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    const p = this.queue.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
      } catch (e) {
        this.error ??= e instanceof Error ? e : new Error(String(e));
      }
    });
    this.queue = p;
    return p;
  }

  private handle(file: string): Promise<FileHandle> {
    let h = this.handles.get(file);
    if (h === undefined) {
      const path = this.paths.get(file);
      if (path === undefined) throw new Error(`no node for ${file}`);
      h = open(path, "a");
      this.handles.set(file, h);
    }
    return h;
  }

  private async writeUpTo(simMs: number): Promise<void> {
    if (simMs <= this.sim.nowMs) return;
    const res = this.sim.advanceTo(simMs);
    await Promise.all(
      [...res.byFile].map(async ([file, lines]) => {
        // No watchdog: PyTorch's stderr stays empty.
        if (file.startsWith("stderr-") || lines.length === 0) return;
        const text = `${lines.join("\n")}\n`;
        this.written += lines.length;
        this.bytes += Buffer.byteLength(text);
        await (await this.handle(file)).write(text);
      }),
    );
  }

  /**
   * Global rank `rank` never enters the next world AllReduce no rank has entered yet; every other
   * rank does, and then the job writes nothing more. Resolves once every line of that step is
   * written (at most about two steps from now).
   */
  hang(rank: number): Promise<LogHang> {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.nodes * this.ranksPerNode) return Promise.reject(new Error(`no rank ${rank}`));
    if (this.hung !== undefined) return Promise.reject(new Error(`the logs already hang (rank ${this.hung.rank})`));
    let hang: LogHang | undefined;
    const planned = this.enqueue(async () => {
      const now = Date.now() - this.t0;
      await this.writeUpTo(now);
      const at = this.sim.nowMs;
      // The first step whose world AllReduce no rank can have entered by `at`: a step's k-th of K
      // collectives starts at 15 % + 75 % k/K of it, plus 0-2 ms per rank (test/sim/schedule.ts).
      let step = 0;
      while (this.sim.stepStart(step + 1) <= at) step++;
      const enters = (s: number, k: number): number => {
        const start = this.sim.stepStart(s);
        const span = this.sim.stepStart(s + 1) - start;
        return start + Math.floor(span * (0.15 + (0.75 * k) / this.sim.plan(s).length));
      };
      let k = worldAllReduce(this.sim, step);
      if (enters(step, k) <= at + 1) {
        step++;
        k = worldAllReduce(this.sim, step);
      }
      const next = new Scenario(this.spec, { faults: [rankStopsBeforeCollective({ rank, atStep: step, beforeCollIndex: k })] });
      const replay = next.advanceTo(at).lines.filter((l) => l.stream === "nccl").length;
      if (replay !== this.written) {
        throw new Error(`the replayed job differs before the hang: ${replay} lines, ${this.written} written`);
      }
      this.sim = next;
      const op = next.plan(step)[k];
      hang = { rank, step, k, op: op?.op ?? "?", comm: op?.comm ?? "?", doneMs: next.stepStart(step + 1) };
      this.hung = hang;
    });
    return planned.then(async () => {
      this.throwFailure();
      if (hang === undefined) throw new Error("the logs did not hang");
      const h = hang;
      // Every line of the step is in once the writer has passed its end.
      const wait = this.t0 + h.doneMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await this.enqueue(() => this.writeUpTo(Math.max(h.doneMs, Date.now() - this.t0)));
      this.throwFailure();
      return h;
    });
  }

  private throwFailure(): void {
    if (this.error !== undefined) throw this.error;
  }

  /** Stops writing and closes the files. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.queue;
    this.stopped = true;
    const hs = await Promise.allSettled(this.handles.values());
    await Promise.all(hs.flatMap((h) => (h.status === "fulfilled" ? [h.value.close()] : [])));
    this.handles.clear();
  }

  /** The first write error, if any. */
  get failed(): Error | undefined {
    return this.error;
  }
}
