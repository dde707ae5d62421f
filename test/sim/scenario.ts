/**
 * Time-driven scenario: `new Scenario(jobSpec, {faults, watchdog})`, then `advance(ms)` returns
 * the lines every process writes in that interval, grouped per file (`nccl-<host>-<pid>.log`,
 * and `stderr-<host>-<pid>.log` for PyTorch's watchdog output). Deterministic for a seed.
 */
import { SimContext, type WatchdogOptions } from "./context.js";
import type { Fault } from "./faults.js";
import type { SimLine } from "./format.js";
import { RankStream } from "./rank-stream.js";
import { resolveSpec, type JobSpec, type PlanOp, type ResolvedSpec } from "./spec.js";
import { Topology } from "./topology.js";

export interface ScenarioOptions {
  faults?: Fault[];
  /** Emit PyTorch watchdog timeouts for collectives that never complete. */
  watchdog?: Partial<WatchdogOptions>;
}

export interface AdvanceResult {
  /** Interval (from, to] in ms since job start. */
  from: number;
  to: number;
  /** Every line of the interval, ordered by time then rank. */
  lines: SimLine[];
  /** Lines per file name, in write order (only files that got lines). */
  byFile: Map<string, string[]>;
}

export interface RankTruth {
  rank: number;
  file: string;
  /** The process still exists. */
  alive: boolean;
  /** It will write no more COLL lines (stopped, hung, replaying graphs or exited). */
  silent: boolean;
}

export interface Truth {
  t: number;
  /** Step running at t (-1 during init); steps keep counting while a graph replays. */
  step: number;
  ranks: RankTruth[];
}

export class Scenario {
  readonly spec: ResolvedSpec;
  readonly topo: Topology;
  readonly faults: Fault[];
  private readonly ctx: SimContext;
  private readonly streams: RankStream[];
  private now = 0;

  constructor(job: JobSpec = {}, opts: ScenarioOptions = {}) {
    this.faults = opts.faults ?? [];
    const transport = { ...job.transport };
    if (this.faults.some((f) => f.type === "socketFallback")) transport.kind = "socket";
    if (this.faults.some((f) => f.type === "gdrDisabled")) transport.gdr = false;
    this.spec = resolveSpec({ ...job, transport });
    this.topo = new Topology(this.spec);
    const wd = opts.watchdog === undefined ? undefined : { timeoutMs: opts.watchdog.timeoutMs ?? 600_000, abort: opts.watchdog.abort ?? true };
    this.ctx = new SimContext(this.spec, this.topo, this.faults, wd);
    this.streams = this.topo.ranks.map((r) => new RankStream(this.ctx, r.rank));
  }

  /** Simulated ms since job start. */
  get nowMs(): number {
    return this.now;
  }

  /** The collectives of a step (what collective index k means). */
  plan(step: number): PlanOp[] {
    return this.ctx.plan(step);
  }

  /** Start of a step in simulated ms. */
  stepStart(step: number): number {
    return this.ctx.sched.stepStart(step);
  }

  /** NCCL_DEBUG_FILE names, one per process. */
  files(): string[] {
    return this.topo.ranks.map((r) => r.file);
  }

  advance(ms: number): AdvanceResult {
    if (!(ms >= 0)) throw new Error("advance needs a non-negative number of ms");
    return this.advanceTo(this.now + ms);
  }

  advanceTo(to: number): AdvanceResult {
    const from = this.now;
    if (to < from) throw new Error(`time only moves forward (now ${from}, asked ${to})`);
    this.now = to;
    const lines: SimLine[] = [];
    for (const s of this.streams) s.pull(to, lines);
    lines.sort((a, b) => a.t - b.t || a.rank - b.rank);
    const byFile = new Map<string, string[]>();
    for (const l of lines) {
      const r = this.topo.rank(l.rank);
      const f = l.stream === "nccl" ? r.file : r.stderrFile;
      let list = byFile.get(f);
      if (list === undefined) byFile.set(f, (list = []));
      list.push(l.text);
    }
    return { from, to, lines, byFile };
  }

  /** Ground truth at the current time (for tests of detectors). */
  truth(): Truth {
    const t = this.now;
    const step = this.ctx.sched.stepAt(t);
    return {
      t,
      step,
      ranks: this.streams.map((s) => {
        const last = this.ctx.lastOf(s.rank);
        const graph = this.ctx.graphFrom !== undefined && step > this.ctx.graphFrom;
        return {
          rank: s.rank,
          file: s.info.file,
          alive: t < s.deathTime,
          silent: graph || t >= s.deathTime || (last !== undefined && step > last.step),
        };
      }),
    };
  }
}
