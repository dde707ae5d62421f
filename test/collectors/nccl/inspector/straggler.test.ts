/**
 * Straggler detection on simulated jobs written in NCCL's own Inspector format: healthy jobs of 2,
 * 8 and 16 ranks with realistic jitter (normal arrival noise, random hiccups of up to 50 ms, a
 * small constant skew) never name a rank at any snapshot; a rank late by 50 ms or by 5 ms is named
 * with its delay; NCCL 2.28's sampled dumping; two ranks late together; and a communicator that
 * spans two nodes, seen from each node's files.
 */
import { describe, expect, it } from "vitest";
import { simulateInspectorJob, type InspectorJobSpec } from "../../../helpers/inspector-job.js";
import { runJob, trueDelaySeconds } from "./harness.js";

const MIB = 2 ** 20;
/** A training step's collectives: a large gradient AllReduce, and FSDP-style AllGather / ReduceScatter. */
const STEP = [
  { op: "AllReduce", bytes: 256 * MIB },
  { op: "AllGather", bytes: 16 * MIB },
  { op: "ReduceScatter", bytes: 16 * MIB },
];
const healthy = (seed: number, nranks: number): InspectorJobSpec => ({
  seed,
  nranks,
  count: 450,
  ops: STEP,
  gapMs: 40,
  jitterMs: 1.5,
  hiccups: { probability: 0.03, maxMs: 50 },
  skewMs: { 0: 0.3 },
});

describe("Inspector straggler: healthy jobs", () => {
  for (const nranks of [2, 8, 16]) {
    it(`${nranks} ranks, 4 seeds, 450 collectives: no rank named at any snapshot`, () => {
      for (const seed of [1, 2, 3, 4]) {
        const job = simulateInspectorJob(healthy(seed * 100 + nranks, nranks));
        const run = runJob(job, 10 * nranks);
        expect(run.snapshots.length).toBeGreaterThan(40);
        for (const s of run.snapshots) {
          expect(s.comms[0]?.straggler, `seed ${seed}`).toBeUndefined();
          expect(s.comms[0]?.ranks.filter((r) => r.straggler)).toEqual([]);
        }
        // The comparison ran on full windows: 64 per collective type.
        expect(run.comm.commonSeqs).toBe(3 * 64);
        // Every rank was shortest sometimes or never, none most of the time.
        for (const r of run.comm.ranks) expect(r.shortestShare ?? 0).toBeLessThan(0.8);
      }
    });
  }
});

describe("Inspector straggler: one rank late", () => {
  it("8 ranks, rank 5 late by 50 ms: named, delay within 0.2 ms of the truth and 2 ms of 50 ms", () => {
    const job = simulateInspectorJob({ ...healthy(11, 8), gapMs: 120, straggler: { rank: 5, delayMs: 50 } });
    const { comm } = runJob(job);
    const truth = trueDelaySeconds(job, 5, [0, 1, 2, 3, 4, 5, 6, 7], comm.commonSeqs);
    expect(comm.straggler?.rank).toBe(5);
    expect(comm.straggler?.share).toBeGreaterThanOrEqual(0.95);
    expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - truth)).toBeLessThan(0.0002);
    expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - 0.05)).toBeLessThan(0.002);
    expect(comm.ranks.filter((r) => r.straggler).map((r) => r.rank)).toEqual([5]);
    // The others' delays say they came early relative to the rest: none is near 50 ms.
    for (const r of comm.ranks) if (r.rank !== 5) expect(Math.abs(r.delaySeconds ?? 1)).toBeLessThan(0.01);
  });

  for (const nranks of [8, 16]) {
    it(`${nranks} ranks, one rank late by 5 ms (jitter 1 ms): named with delay within 0.2 ms of the truth`, () => {
      const s = nranks - 3;
      const job = simulateInspectorJob({ seed: 21 + nranks, nranks, count: 300, ops: STEP, gapMs: 40, jitterMs: 1, straggler: { rank: s, delayMs: 5 } });
      const { comm } = runJob(job);
      const truth = trueDelaySeconds(
        job,
        s,
        Array.from({ length: nranks }, (_, r) => r),
        comm.commonSeqs,
      );
      expect(comm.straggler?.rank).toBe(s);
      expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - truth)).toBeLessThan(0.0002);
      expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - 0.005)).toBeLessThan(0.001);
    });
  }

  it("is not named before 20 collectives are in common, and is from then on", () => {
    const job = simulateInspectorJob({ seed: 5, nranks: 8, count: 40, gapMs: 100, jitterMs: 1, straggler: { rank: 2, delayMs: 50 } });
    const run = runJob(job, 8);
    // Snapshot k (1-based) sees k complete collectives.
    const named = run.snapshots.map((s) => s.comms[0]?.straggler?.rank);
    expect(named.slice(0, 19).every((r) => r === undefined)).toBe(true);
    expect(named.slice(19).every((r) => r === 2)).toBe(true);
  });

  it("starts mid-run: named once most of the window shows it", () => {
    const job = simulateInspectorJob({ seed: 6, nranks: 8, count: 200, gapMs: 100, jitterMs: 1, straggler: { rank: 7, delayMs: 20, from: 100 } });
    const run = runJob(job, 8);
    const named = run.snapshots.map((s) => s.comms[0]?.straggler?.rank);
    expect(named.slice(0, 100).every((r) => r === undefined)).toBe(true);
    // 80 % of a 64-collective window: after about 52 late collectives.
    const first = named.findIndex((r) => r === 7);
    expect(first).toBeGreaterThanOrEqual(100 + 50);
    expect(first).toBeLessThanOrEqual(100 + 56);
    expect(named.slice(first).every((r) => r === 7)).toBe(true);
  });

  it("NCCL 2.28 sampled dumping (one slot per communicator, dump every 500 µs): still named", () => {
    const job = simulateInspectorJob({
      seed: 7,
      nranks: 8,
      count: 300,
      ops: STEP,
      gapMs: 40,
      jitterMs: 1,
      format: "2.28",
      sampleIntervalUs: 500,
      straggler: { rank: 3, delayMs: 5 },
    });
    const { comm } = runJob(job);
    expect(comm.straggler?.rank).toBe(3);
    expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - 0.005)).toBeLessThan(0.001);
  });

  it("NCCL 2.28 sampled dumping that misses most collectives: few in common, no false verdict", () => {
    // Collectives every 0.3 ms, a dump every 5 ms: each rank writes a different sample.
    const job = simulateInspectorJob({
      seed: 8,
      nranks: 8,
      count: 3000,
      ops: [{ op: "AllReduce", bytes: MIB }],
      gapMs: 0.3,
      jitterMs: 0.02,
      format: "2.28",
      sampleIntervalUs: 5000,
    });
    const lines = [...job.files.values()].reduce((a, l) => a + l.length, 0);
    expect(lines).toBeLessThan(8 * 3000 * 0.1);
    const { comm } = runJob(job);
    expect(comm.straggler).toBeUndefined();
    expect(comm.commonSeqs).toBeLessThan(20);
  });

  it("a rank always last by 0.5 ms (under the 1 ms floor): not named, its delay still measured", () => {
    const job = simulateInspectorJob({ seed: 10, nranks: 8, count: 200, gapMs: 40, jitterMs: 0.05, skewMs: { 4: 0.5 } });
    const { comm } = runJob(job);
    expect(comm.straggler).toBeUndefined();
    const r4 = comm.ranks.find((r) => r.rank === 4);
    expect(r4?.shortestShare).toBeGreaterThan(0.95);
    expect(Math.abs((r4?.delaySeconds ?? 0) - trueDelaySeconds(job, 4, [0, 1, 2, 3, 4, 5, 6, 7], comm.commonSeqs))).toBeLessThan(0.0001);
    // With the floor lowered, the same data names it.
    const low = runJob(job, 0, { straggler: { minDelaySeconds: 0.0003 } });
    expect(low.comm.straggler?.rank).toBe(4);
  });

  it("two ranks late together by 10 ms: split the shortest share, neither named", () => {
    const job = simulateInspectorJob({ seed: 9, nranks: 8, count: 300, gapMs: 60, jitterMs: 1, skewMs: { 1: 10, 6: 10 } });
    const { comm } = runJob(job);
    expect(comm.straggler).toBeUndefined();
    const shares = comm.ranks.filter((r) => r.rank === 1 || r.rank === 6).map((r) => r.shortestShare ?? 0);
    expect(shares[0]! + shares[1]!).toBeGreaterThan(0.95);
    // Both show the delay, which an operator can read from ringwatch_nccl_straggler_delay_seconds.
    for (const r of comm.ranks) if (r.rank === 1 || r.rank === 6) expect(r.delaySeconds).toBeGreaterThan(0.008);
  });
});

describe("Inspector straggler: a communicator over two nodes", () => {
  const spec = (localRanks: number[]): InspectorJobSpec => ({
    seed: 31,
    nranks: 16,
    nnodes: 2,
    localRanks,
    count: 450,
    ops: STEP,
    gapMs: 80,
    jitterMs: 1,
    straggler: { rank: 12, delayMs: 20, from: 150 },
  });
  const nodeA = [0, 1, 2, 3, 4, 5, 6, 7];
  const nodeB = [8, 9, 10, 11, 12, 13, 14, 15];

  it("the node with the straggler names it, relative to its own ranks", () => {
    const job = simulateInspectorJob(spec(nodeB));
    const { comm } = runJob(job);
    expect(comm).toMatchObject({ nranks: 16, nnodes: 2, localRanks: 8, partial: true });
    expect(comm.straggler?.rank).toBe(12);
    expect(Math.abs((comm.straggler?.delaySeconds ?? 0) - trueDelaySeconds(job, 12, nodeB, comm.commonSeqs))).toBeLessThan(0.0002);
  });

  it("the other node names no rank: all its ranks wait alike, and their bandwidth drops", () => {
    const job = simulateInspectorJob(spec(nodeA));
    const { comm } = runJob(job);
    expect(comm.straggler).toBeUndefined();
    for (const r of comm.ranks) expect(Math.abs(r.delaySeconds ?? 1)).toBeLessThan(0.002);
    // Waiting 20 ms inside every kernel shows as a drop of the bus bandwidth they compute.
    expect(comm.bandwidthDrop).toBe(true);
    expect(comm.drops.map((d) => d.op).sort()).toEqual(["AllGather", "AllReduce", "ReduceScatter"]);
    // Their execution time is up by about the straggler's delay.
    const exec = comm.ranks.map((r) => r.execSeconds ?? 0);
    expect(Math.min(...exec)).toBeGreaterThan(0.018);
  });
});
