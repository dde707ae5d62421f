/**
 * What the per-rank line streams share: the resolved spec, topology, schedule, step plan and the
 * faults digested into per-rank stop positions (the last collective a rank enters).
 */
import { makePlan } from "./coll.js";
import type { Fault } from "./faults.js";
import { Schedule } from "./schedule.js";
import type { PlanOp, ResolvedSpec } from "./spec.js";
import type { Topology } from "./topology.js";

/** A collective position: step and index in that step's plan; k = -1 is "before the step's first". */
export interface Pos {
  step: number;
  k: number;
}

export function cmpPos(a: Pos, b: Pos): number {
  return a.step !== b.step ? a.step - b.step : a.k - b.k;
}

export interface Stop {
  last: Pos;
  by: Fault;
}

export interface WatchdogOptions {
  /** PyTorch's collective timeout (Timeout(ms)); default 600000. */
  timeoutMs: number;
  /** After the timeout PyTorch aborts the comms (`Abort COMPLETE`) and the process exits; default true. */
  abort: boolean;
}

export class SimContext {
  readonly plan: (step: number) => PlanOp[];
  readonly sched: Schedule;
  readonly stops: (Stop | undefined)[];
  readonly graphFrom: number | undefined;

  constructor(
    readonly spec: ResolvedSpec,
    readonly topo: Topology,
    readonly faults: Fault[],
    readonly watchdog: WatchdogOptions | undefined,
  ) {
    this.plan = makePlan(spec, topo);
    this.sched = new Schedule(spec, faults);
    let graphFrom: number | undefined;
    for (const f of faults) if (f.type === "graphReplay") graphFrom = Math.min(graphFrom ?? f.fromStep, f.fromStep);
    this.graphFrom = graphFrom;
    this.stops = topo.ranks.map((r) => {
      let best: Stop | undefined;
      const offer = (last: Pos, by: Fault): void => {
        if (best === undefined || cmpPos(last, best.last) < 0) best = { last, by };
      };
      for (const f of faults) {
        switch (f.type) {
          case "rankStopsBeforeCollective":
            this.checkIndex(f.atStep, f.beforeCollIndex);
            offer({ step: f.atStep, k: r.rank === f.rank ? f.beforeCollIndex - 1 : f.beforeCollIndex }, f);
            break;
          case "allStallInside":
            this.checkIndex(f.atStep, f.collIndex);
            offer({ step: f.atStep, k: f.collIndex }, f);
            break;
          case "mismatch":
            this.checkIndex(f.atStep, f.atCollIndex);
            if (f.hang) offer({ step: f.atStep, k: f.atCollIndex }, f);
            break;
          case "jobExits":
            offer({ step: f.atStep, k: -1 }, f);
            break;
          default:
            break;
        }
      }
      return best;
    });
  }

  private checkIndex(step: number, k: number): void {
    const n = this.plan(step).length;
    if (step < 0 || k < 0 || k >= n) throw new Error(`step ${step} has collectives 0..${n - 1}, not ${k}`);
  }

  /** Last position `rank` enters, or undefined when it never stops. */
  lastOf(rank: number): Pos | undefined {
    return this.stops[rank]?.last;
  }

  /** Whether `rank` enters (step, k). */
  enters(rank: number, p: Pos): boolean {
    const last = this.lastOf(rank);
    return last === undefined || cmpPos(p, last) <= 0;
  }

  /** PyTorch SeqNum of (step, k) in the PG of its comm family (1-based). */
  seqAt(family: string, p: Pos): number {
    let n = 0;
    for (let s = 0; s <= p.step; s++) {
      const ops = this.plan(s);
      ops.forEach((o, k) => {
        if (o.comm === family && (s < p.step || k <= p.k)) n++;
      });
    }
    return n;
  }
}
