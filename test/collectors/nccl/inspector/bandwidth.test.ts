/**
 * Bandwidth drop on simulated jobs in NCCL's Inspector format: a transfer slowed to 35 % is
 * flagged within a few collectives and stays flagged while it lasts (the baseline does not learn
 * it), comes back when the bandwidth does; a healthy job, a mild slowdown (80 %) and a job moving
 * to smaller messages (lower bus bandwidth, same op) are not flagged.
 */
import { describe, expect, it } from "vitest";
import { simulateInspectorJob, type InspectorJobSpec } from "../../../helpers/inspector-job.js";
import { runJob, runLines } from "./harness.js";

const GIB = 2 ** 30;
const base: InspectorJobSpec = {
  seed: 41,
  nranks: 8,
  count: 400,
  ops: [{ op: "AllReduce", bytes: GIB }],
  gapMs: 60,
  jitterMs: 1,
  hiccups: { probability: 0.03, maxMs: 30 },
};
/** Snapshot after every collective (8 records). */
const EVERY = 8;

describe("Inspector bandwidth drop", () => {
  it("healthy: never flagged, and the exported medians are the job's bus bandwidth", () => {
    for (const seed of [41, 42, 43]) {
      const run = runJob(simulateInspectorJob({ ...base, seed }), EVERY);
      for (const s of run.snapshots) expect(s.comms[0]?.bandwidthDrop, `seed ${seed}`).toBe(false);
      // 1 GiB at 150 GB/s bus bandwidth is about 12.5 ms; the 1 ms jitter makes the waiters' share lower.
      for (const r of run.comm.ranks) {
        expect(r.busBw.map((b) => b.bucket)).toEqual(["ge_256MiB"]);
        expect(r.busBw[0]?.bytesPerSecond).toBeGreaterThan(120e9);
        expect(r.busBw[0]?.bytesPerSecond).toBeLessThan(150e9);
      }
    }
  });

  it("slowed to 35 % from collective 200: flagged within 6 collectives, for as long as it lasts", () => {
    const run = runJob(simulateInspectorJob({ ...base, slowdown: { from: 200, factor: 0.35 } }), EVERY);
    const flags = run.snapshots.map((s) => s.comms[0]?.bandwidthDrop);
    expect(flags.slice(0, 200).every((f) => f === false)).toBe(true);
    const first = flags.indexOf(true);
    expect(first).toBeGreaterThanOrEqual(200 + 3);
    expect(first).toBeLessThan(200 + 6);
    // 200 collectives later the baseline still holds the healthy level.
    expect(flags.slice(first).every((f) => f === true)).toBe(true);
    const d = run.comm.drops[0];
    expect(d).toMatchObject({ op: "AllReduce", sizeClassBytes: GIB, ranksDropped: 8, ranksCompared: 8 });
    expect((d?.recentBytesPerSecond ?? 0) / (d?.baselineBytesPerSecond ?? 1)).toBeGreaterThan(0.3);
    expect((d?.recentBytesPerSecond ?? 0) / (d?.baselineBytesPerSecond ?? 1)).toBeLessThan(0.45);
  });

  it("comes back: the flag clears once the bandwidth is back", () => {
    const slow = simulateInspectorJob({ ...base, count: 300, slowdown: { from: 150, factor: 0.35 } });
    const healthyAgain = simulateInspectorJob({ ...base, seed: 44, count: 100, commId: slow.commId, startUs: slow.endUs + 60_000, firstSn: 300 });
    const run = runLines([...slow.lines, ...healthyAgain.lines], EVERY);
    expect(run.last.stats.skipped.duplicate).toBe(0);
    expect(run.snapshots[299]?.comms[0]?.bandwidthDrop).toBe(true);
    expect(run.comm.bandwidthDrop).toBe(false);
  });

  it("a mild slowdown (80 %) is not a drop", () => {
    const run = runJob(simulateInspectorJob({ ...base, slowdown: { from: 200, factor: 0.8 } }), EVERY);
    for (const s of run.snapshots) expect(s.comms[0]?.bandwidthDrop).toBe(false);
  });

  it("moving to 16x smaller messages (lower bus bandwidth, same op): not a drop, another series", () => {
    const big = simulateInspectorJob({ ...base, count: 200 });
    const small = simulateInspectorJob({
      ...base,
      seed: 45,
      count: 200,
      ops: [{ op: "AllReduce", bytes: 64 * 2 ** 20 }],
      commId: big.commId,
      startUs: big.endUs + 60_000,
      firstSn: 200,
    });
    const run = runLines([...big.lines, ...small.lines], EVERY);
    for (const s of run.snapshots) expect(s.comms[0]?.bandwidthDrop).toBe(false);
    // Both size buckets are exported, and the smaller messages do see less bandwidth.
    const r0 = run.comm.ranks[0];
    expect(r0?.busBw.map((b) => b.bucket)).toEqual(["16MiB_256MiB", "ge_256MiB"]);
    expect(r0?.busBw[0]?.bytesPerSecond).toBeLessThan((r0?.busBw[1]?.bytesPerSecond ?? 0) * 0.5);
  });

  it("a drop seen by only one of 8 ranks is not the communicator's", () => {
    // That rank's bandwidth is scaled after the fact: the others saw nothing.
    const job = simulateInspectorJob({ ...base, count: 300 });
    const mine = "pid41003";
    let n = 0;
    const lines = job.lines.map((l) => {
      if (!l.path.includes(mine) || n++ < 200) return l;
      return { ...l, text: l.text.replace(/"coll_busbw_gbs":[0-9.]+/, '"coll_busbw_gbs":10.000000') };
    });
    const run = runLines(lines, EVERY);
    expect(run.comm.bandwidthDrop).toBe(false);
    // With a threshold of "any rank" it would be: the rank's own series did drop.
    expect(run.comm.ranks.find((r) => r.rank === 3)?.busBw[0]?.bytesPerSecond).toBeLessThan(20e9);
  });
});
