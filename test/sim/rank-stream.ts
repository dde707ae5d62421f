/**
 * The lines of one rank in time order. Steps are rendered lazily one at a time (COLL lines,
 * runtime-connect channel lines); one-off events (WARN blocks, watchdog timeouts, Abort/Destroy)
 * are computed up front. `pull(to)` merges both up to simulated time `to`. Output depends only
 * on the seed and the faults, never on how time is advanced.
 */
import { collParts, collText, opCountAdvances, torchWork } from "./coll.js";
import { cmpPos, type Pos, type SimContext } from "./context.js";
import { teardownLines, warnBlock, watchdogLines } from "./events.js";
import type { SimLine } from "./format.js";
import { commInitLines, connectLines, processLines, type Out } from "./init.js";
import { unit } from "./rng.js";
import type { RankInfo } from "./topology.js";

export class RankStream {
  readonly info: RankInfo;
  /** Time from which the process no longer exists (Infinity while it lives). */
  deathTime = Infinity;
  private batch: SimLine[] = [];
  private bi = 0;
  private readonly events: SimLine[] = [];
  private ei = 0;
  private nextStep = 0;
  private readonly lastStep: number;
  private readonly opCount = new Map<string, number>();
  private readonly connected = new Set<string>();

  constructor(
    private readonly ctx: SimContext,
    readonly rank: number,
  ) {
    this.info = ctx.topo.rank(rank);
    const last = ctx.lastOf(rank);
    this.lastStep = Math.min(last?.step ?? Infinity, ctx.graphFrom ?? Infinity);
    this.batch = this.initLines();
    this.computeEvents();
  }

  private place(t: number, outs: Out[], into: SimLine[], stream: "nccl" | "stderr" = "nccl"): void {
    for (const o of outs) into.push({ t, rank: this.rank, stream, kind: o.kind, text: o.text, ...(o.comm === undefined ? {} : { comm: o.comm }) });
  }

  private initLines(): SimLine[] {
    const { spec, topo } = this.ctx;
    const out: SimLine[] = [];
    const skew = (k: number): number => Math.floor(unit(spec.seed, 303, this.rank, k) * 40);
    this.place(20 + skew(0), processLines(spec, this.info), out);
    const comms = topo.commsOf(this.rank);
    const window = Math.max(10, Math.floor((spec.initMs - 400) / (topo.families().length + 0.5)));
    for (const c of comms) {
      const lines = commInitLines(spec, topo, this.info, c);
      const start = 300 + c.ordinal * window + skew(c.ordinal + 1);
      lines.forEach((l, i) => {
        this.place(start + Math.floor((i * window * 0.8) / Math.max(1, lines.length)), [l], out);
      });
    }
    return out.sort((a, b) => a.t - b.t);
  }

  private step(s: number): SimLine[] {
    const { spec, topo, plan, sched } = this.ctx;
    const ops = plan(s);
    const out: SimLine[] = [];
    const mm = this.ctx.faults.find((f) => f.type === "mismatch" && f.rank === this.rank && f.atStep === s);
    for (let k = 0; k < ops.length; k++) {
      const op = ops[k];
      if (op === undefined || !this.ctx.enters(this.rank, { step: s, k })) break;
      const comm = topo.commOf(this.rank, op.comm);
      const name = mm?.type === "mismatch" && mm.atCollIndex === k ? mm.op : op.op;
      const t = sched.collTime(this.rank, s, k, ops.length);
      const oc = this.opCount.get(comm.name) ?? 0;
      if (spec.subsystems.has("COLL")) {
        const text = collText(collParts(this.info, comm, name, op.count, op.datatype, op.root ?? 0, k), oc);
        out.push({ t, rank: this.rank, stream: "nccl", kind: "coll", text, comm: comm.name });
      }
      if (opCountAdvances(spec.traits, comm)) this.opCount.set(comm.name, oc + 1);
      if (spec.traits.runtimeConnect && !this.connected.has(comm.name)) {
        this.connected.add(comm.name);
        this.place(t + 1, connectLines(spec, topo, this.info, comm, this.info.tids.connect(comm.ordinal)), out);
      }
    }
    return out;
  }

  private computeEvents(): void {
    const { spec, topo, sched, plan, faults, watchdog } = this.ctx;
    const stop = this.ctx.stops[this.rank];
    const ev: SimLine[] = [];
    // Clean or unclean exit.
    if (stop?.by.type === "jobExits") {
      const t = sched.stepStart(stop.by.atStep) + 5 + Math.floor(unit(spec.seed, 404, this.rank) * 20);
      if (stop.by.clean) this.place(t, teardownLines(spec, this.info, topo.commsOf(this.rank), false), ev);
      this.deathTime = t + 1;
    }
    // Watchdog timeout on a collective that never completes.
    if (
      watchdog !== undefined &&
      stop !== undefined &&
      stop.by.type !== "jobExits" &&
      stop.last.k >= 0 &&
      (this.ctx.graphFrom === undefined || stop.last.step <= this.ctx.graphFrom)
    ) {
      const last = stop.last;
      const ops = plan(last.step);
      const op = ops[last.k];
      if (op !== undefined && this.incomplete(last, op.comm)) {
        const comm = topo.commOf(this.rank, op.comm);
        const by = stop.by;
        const name = by.type === "mismatch" && by.rank === this.rank ? by.op : op.op;
        const work = torchWork(name, op.count, comm.members.length);
        const ranFor = watchdog.timeoutMs + 20 + Math.floor(unit(spec.seed, 505, this.rank) * 70);
        const t = sched.collTime(this.rank, last.step, last.k, ops.length) + ranFor;
        const lines = watchdogLines({
          r: this.info,
          comm,
          seq: this.ctx.seqAt(op.comm, last),
          ...work,
          timeoutMs: watchdog.timeoutMs,
          ranForMs: ranFor,
          epochMs: spec.startTime + t,
          nanos: Math.floor(unit(spec.seed, 606, this.rank) * 999_999),
        });
        lines.forEach((text) => {
          ev.push({ t, rank: this.rank, stream: "stderr", kind: "watchdog", text });
        });
        if (watchdog.abort) {
          this.place(t + 5, teardownLines(spec, this.info, topo.commsOf(this.rank), true), ev);
          this.deathTime = Math.min(this.deathTime, t + 6);
        }
      }
    }
    // WARN blocks.
    for (const f of faults) {
      if (f.type !== "warn" || f.rank !== this.rank) continue;
      const t = sched.stepStart(f.atStep) + Math.floor(sched.durationMs(f.atStep) / 2) + Math.floor(unit(spec.seed, 707, this.rank, f.atStep) * 10);
      if (t >= this.deathTime) continue;
      const peerRank = f.peerRank ?? this.defaultPeer();
      const comm = topo.commOf(this.rank, f.comm);
      this.place(
        t,
        warnBlock(spec, {
          kind: f.kind,
          r: this.info,
          peer: topo.rank(peerRank),
          commRank: comm.members.indexOf(this.rank),
          port: 30000 + Math.floor(unit(spec.seed, 808, this.rank, f.atStep) * 30000),
          epochMs: spec.startTime + t,
        }),
        ev,
      );
    }
    this.events.push(...ev.sort((a, b) => a.t - b.t));
  }

  private defaultPeer(): number {
    const { worldSize, ranksPerNode } = this.ctx.spec;
    const other = (this.rank + ranksPerNode) % worldSize;
    return other !== this.rank ? other : (this.rank + 1) % worldSize;
  }

  /** Whether the collective at `p` (on this rank's comm of `family`) can never complete. */
  private incomplete(p: Pos, family: string): boolean {
    const by = this.ctx.stops[this.rank]?.by;
    const comm = this.ctx.topo.commOf(this.rank, family);
    if (by?.type === "allStallInside") return true;
    if (by?.type === "mismatch" && comm.members.includes(by.rank)) return true;
    return comm.members.some((m) => {
      const last = this.ctx.lastOf(m);
      return last !== undefined && cmpPos(last, p) < 0;
    });
  }

  /** Appends this rank's lines with t <= to, in time order. */
  pull(to: number, out: SimLine[]): void {
    for (;;) {
      while (this.bi >= this.batch.length && this.nextStep <= this.lastStep && this.ctx.sched.stepStart(this.nextStep) <= to) {
        this.batch = this.step(this.nextStep++).sort((a, b) => a.t - b.t);
        this.bi = 0;
      }
      const a = this.batch[this.bi];
      const b = this.events[this.ei];
      const aOk = a !== undefined && a.t <= to;
      const bOk = b !== undefined && b.t <= to;
      if (aOk && (!bOk || a.t <= b.t)) {
        out.push(a);
        this.bi++;
      } else if (bOk) {
        out.push(b);
        this.ei++;
      } else break;
    }
  }
}
