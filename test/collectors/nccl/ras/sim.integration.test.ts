/**
 * A simulated 16-rank job on 2-4 simulated nodes with no COLL line at all: only NCCL's RAS service
 * (test/fakes/nccl-ras --job: NCCL's own protocol and report forms per version, real sockets) and
 * the agent's RasWatch and verdicts, on a fake clock ticking every 5 s as the collector does. This
 * node is 10.0.0.1. Each scenario checks the verdict against what a user must see, and when.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch } from "../../../../collectors/nccl/ras/watch.js";
import { rasVerdicts, type RasCommVerdict, type RasNode } from "../../../../collectors/nccl/ras/verdict.js";
import type { RasJob, RasRank } from "../../../fakes/ras/render.mjs";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { stubRasNode } from "../../../helpers/ras-node.js";
import { rasJobServices } from "../../../helpers/ras-service.js";

const THRESHOLD = 120_000;
const INTERVAL = 30_000;
const TICK = 5_000;
const HASH = "0x7d1e5b3c9a4f2e61";
const COMM_ID = "0x7d1e5b3c9a4f2e61";

const rasJob = rasJobServices();
const watches: RasWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

interface Sim {
  nodes: number;
  /** Ranks' operation counts at time t (ms); undefined for a rank whose process is gone. */
  counts: (rank: number, t: number) => { AllReduce: number; AllGather: number } | undefined;
  /** Hosts of the ranks (default: 16 ranks spread over `nodes` nodes 10.0.0.1..). */
  hostOf?: (rank: number) => string;
  version?: string;
  /** The job ends (nothing listens) at this time. */
  endsAt?: number;
}

const pidOf = (rank: number): number => 4200 + rank;

function jobAt(sim: Sim, t: number): RasJob {
  const perNode = 16 / sim.nodes;
  const hostOf = sim.hostOf ?? ((r: number): string => `10.0.0.${1 + Math.floor(r / perNode)}`);
  const ranks: RasRank[] = [];
  const missing: NonNullable<RasJob["comms"][number]["missing"]> = [];
  for (let r = 0; r < 16; r++) {
    const c = sim.counts(r, t);
    const base = { rank: r, host: hostOf(r), pid: pidOf(r), cudaDev: r % perNode, nvmlDev: r % perNode };
    if (c === undefined) missing.push({ ...base, unresponsive: true, dead: true });
    else ranks.push({ ...base, counts: { Broadcast: 1, Reduce: 0, AllGather: c.AllGather, ReduceScatter: 0, AllReduce: c.AllReduce } });
  }
  return { version: sim.version ?? "2.29.7", comms: [{ hash: HASH, size: 16, ranks, ...(missing.length > 0 ? { missing } : {}) }] };
}

/** A healthy step every `stepMs`: one AllReduce per step, an AllGather every 5th. */
const moving = (stepMs: number) => (_rank: number, t: number) => {
  const steps = Math.floor(t / stepMs);
  return { AllReduce: steps + 1, AllGather: Math.floor(steps / 5) + 1 };
};

/** Runs the job from 0 to `untilMs`; returns each tick's verdicts on this node (10.0.0.1). */
async function run(sim: Sim, untilMs: number, node: Partial<RasNode> = {}): Promise<{ at: number; v: RasCommVerdict[] }[]> {
  const service = await rasJob(jobAt(sim, 0));
  const clock = { t: 0 };
  const { logger } = memoryLogger("info");
  const w = new RasWatch(
    {
      address: { host: "127.0.0.1", port: service.port },
      intervalMs: INTERVAL,
      now: () => clock.t,
      log: logger,
      progress: { hangThresholdMs: THRESHOLD, gapFactor: 2, maxThresholdMs: 30 * 60_000 },
    },
    () => 0.5,
  );
  watches.push(w);
  const here = stubRasNode(["10.0.0.1"], { rasIsLocal: true, ...node });
  const out: { at: number; v: RasCommVerdict[] }[] = [];
  let ended = false;
  for (let t = 0; t <= untilMs; t += TICK) {
    clock.t = t;
    if (sim.endsAt !== undefined && t >= sim.endsAt && !ended) {
      ended = true;
      await service.stop();
    }
    if (!ended) await service.setJob(jobAt(sim, t));
    w.tick();
    await w.settled();
    out.push({ at: t, v: rasVerdicts(w.snapshot().progress, here) });
  }
  return out;
}

const firstHang = (ticks: { at: number; v: RasCommVerdict[] }[]): { at: number; v: RasCommVerdict } | undefined => {
  for (const x of ticks) {
    const v = x.v.find((y) => y.hang);
    if (v) return { at: x.at, v };
  }
  return undefined;
};

const STALL = 200_000;

describe("a 16-rank job with no COLL line, told by NCCL RAS alone", () => {
  it("a rank that stops (rank 13, on the 4th node) is named behind, with host:pid and GPU, within threshold + one interval", async () => {
    // Healthy steps every 2 s; at 200 s rank 13 stops before its next AllReduce; the others launch it and wait.
    const counts = (rank: number, t: number): { AllReduce: number; AllGather: number } => {
      const c = moving(2_000)(rank, Math.min(t, STALL));
      return rank === 13 || t < STALL ? c : { ...c, AllReduce: c.AllReduce + 1 };
    };
    const ticks = await run({ nodes: 4, counts }, STALL + THRESHOLD + 2 * INTERVAL);
    const hang = firstHang(ticks);
    expect(hang).toBeDefined();
    expect(hang?.at).toBeGreaterThanOrEqual(STALL + THRESHOLD);
    expect(hang?.at).toBeLessThanOrEqual(STALL + THRESHOLD + INTERVAL);
    expect(hang?.v.commId).toBe(COMM_ID);
    expect(hang?.v.behind.map((r) => [r.rank, `${r.node}:${r.pid}`, r.gpu])).toEqual([[13, "10.0.0.4:4213", "1"]]);
    expect(hang?.v.waitingIn).toBe(`AllReduce #${moving(2_000)(0, STALL).AllReduce + 1}`);
    expect(hang?.v.network).toBe(false);
    expect(hang?.v.evidence).toEqual(["ras"]);
    // This node's ranks 0-3, with their pids and GPUs, for rank_info.
    expect(hang?.v.local.map((l) => [l.rank, l.pid, l.gpu])).toEqual([0, 1, 2, 3].map((r) => [r, pidOf(r), String(r)]));
    // Never before the threshold.
    expect(ticks.filter((x) => x.at < STALL + THRESHOLD).some((x) => x.v.some((v) => v.hang))).toBe(false);
  });

  it("the same from NCCL 2.26's text report (counts only where they differ): the standing mismatch names rank 13", async () => {
    const counts = (rank: number, t: number): { AllReduce: number; AllGather: number } => {
      const c = moving(2_000)(rank, Math.min(t, STALL));
      return rank === 13 || t < STALL ? c : { ...c, AllReduce: c.AllReduce + 1 };
    };
    const ticks = await run({ nodes: 4, counts, version: "2.26.2" }, STALL + THRESHOLD + INTERVAL);
    const hang = firstHang(ticks);
    expect(hang?.at).toBeLessThanOrEqual(STALL + THRESHOLD + INTERVAL);
    expect(hang?.v.behind.map((r) => [r.rank, `${r.node}:${r.pid}`])).toEqual([[13, "10.0.0.4:4213"]]);
  });

  it("a network hang (every rank launched the collective, none finished): a hang with no rank behind", async () => {
    const counts = (rank: number, t: number): { AllReduce: number; AllGather: number } => {
      const c = moving(2_000)(rank, Math.min(t, STALL));
      return t < STALL ? c : { ...c, AllReduce: c.AllReduce + 1 };
    };
    const hang = firstHang(await run({ nodes: 2, counts }, STALL + THRESHOLD + INTERVAL));
    expect(hang?.at).toBeLessThanOrEqual(STALL + THRESHOLD + INTERVAL);
    expect(hang?.v).toMatchObject({ commId: COMM_ID, network: true, behind: [], crossed: false });
  });

  it("a dead process (rank 9, node 3): named at once in the report, and behind once the others stand still", async () => {
    const counts = (rank: number, t: number): { AllReduce: number; AllGather: number } | undefined =>
      rank === 9 && t >= STALL ? undefined : moving(2_000)(rank, Math.min(t, STALL));
    const ticks = await run({ nodes: 4, counts }, STALL + THRESHOLD + INTERVAL);
    const hang = firstHang(ticks);
    expect(hang?.at).toBeLessThanOrEqual(STALL + THRESHOLD + INTERVAL);
    expect(hang?.v.behind.map((r) => [r.rank, `${r.node}:${r.pid}`])).toEqual([[9, "10.0.0.3:4209"]]);
  });

  it("no false alarm over ten minutes: a healthy job, slow steps (90 s), a job that ends, a job on other nodes only", async () => {
    const tenMinutes = 600_000;
    expect(firstHang(await run({ nodes: 2, counts: moving(2_000) }, tenMinutes))).toBeUndefined();
    expect(firstHang(await run({ nodes: 4, counts: moving(90_000) }, tenMinutes))).toBeUndefined();
    // Ends at 200 s with the last counts standing: nothing listens after, so nothing is left to call hung.
    const ending = await run({ nodes: 2, counts: (r, t) => moving(2_000)(r, Math.min(t, 150_000)), endsAt: 200_000 }, tenMinutes);
    expect(firstHang(ending)).toBeUndefined();
    expect(ending[ending.length - 1]?.v).toEqual([]);
    // Every rank on 10.0.0.2 and 10.0.0.3, stuck: this node runs none of them and says nothing.
    const elsewhere = await run({ nodes: 2, counts: (r, t) => moving(2_000)(r, Math.min(t, 100_000)), hostOf: (r) => `10.0.0.${2 + (r % 2)}` }, 400_000);
    expect(elsewhere.every((x) => x.v.length === 0)).toBe(true);
  }, 60_000);

  it("local GPUs computing (busy) hold the verdict back; spinning for the threshold corroborates it", async () => {
    const counts = (rank: number, t: number): { AllReduce: number; AllGather: number } => moving(2_000)(rank, Math.min(t, STALL));
    const until = STALL + THRESHOLD + INTERVAL;
    const busy = await run({ nodes: 2, counts }, until, { gpu: (n) => ({ gpu: String(n), sm: 98, powerW: 610, powerLimitW: 700 }) });
    expect(firstHang(busy)).toBeUndefined();
    const spin = firstHang(
      await run({ nodes: 2, counts }, until, { gpu: (n) => ({ gpu: String(n), sm: 100, powerW: 126, powerLimitW: 700 }), spinHeldMs: () => THRESHOLD }),
    );
    expect(spin?.v.evidence).toEqual(["ras", "gpu"]);
    expect(spin?.v.gpus.map((g) => g.signature)).toEqual(Array.from({ length: 8 }, () => "spin"));
  }, 60_000);
});
