/**
 * Scripted faults produce the facts they promise, read back from the rendered text (COLL lines
 * parsed, comms identified by each rank's own pointer).
 */
import { describe, expect, it } from "vitest";
import * as F from "../sim/faults.js";
import { Scenario } from "../sim/scenario.js";
import type { JobSpec } from "../sim/spec.js";
import { countsOf, parseColls } from "./helpers.js";

const job: JobSpec = {
  nodes: ["dgx-a01", "dgx-a02"],
  ranksPerNode: 4,
  stepMs: 1000,
  broadcastEvery: 0,
  comms: [
    { name: "tp", groupSize: 2, layout: "contiguous" },
    { name: "dp", groupSize: 4, layout: "strided" },
  ],
};

describe("healthy", () => {
  it("every member of a comm writes the same number of COLL lines; everyone alive", () => {
    const sim = new Scenario(job);
    const colls = parseColls(sim, sim.advanceTo(sim.stepStart(10)).lines);
    for (const c of sim.topo.comms) {
      const counts = c.members.map((r) => countsOf(colls, r).get(c.name) ?? 0);
      expect(new Set(counts).size).toBe(1);
      expect(counts[0]).toBe(10 * sim.plan(0).filter((o) => o.comm === c.family).length);
    }
    expect(sim.truth().ranks.every((r) => r.alive && !r.silent)).toBe(true);
  });
});

describe("rankStopsBeforeCollective", () => {
  const sim = new Scenario(job, { faults: [F.rankStopsBeforeCollective({ rank: 5, atStep: 3, beforeCollIndex: 4 })] });
  const res = sim.advance(120_000);
  const colls = parseColls(sim, res.lines);
  const family = sim.plan(3)[4]?.comm ?? "";
  const comm = sim.topo.commOf(5, family);

  it("the stopped rank is exactly one COLL line behind the others of its communicator", () => {
    const mine = countsOf(colls, 5).get(comm.name) ?? 0;
    const others = comm.members.filter((r) => r !== 5).map((r) => countsOf(colls, r).get(comm.name) ?? 0);
    expect(others.length).toBeGreaterThan(0);
    for (const o of others) expect(o).toBe(mine + 1);
  });

  it("nobody writes after the stall; the processes stay alive", () => {
    const stall = sim.stepStart(4);
    expect(res.lines.filter((l) => l.t >= stall)).toEqual([]);
    expect(sim.advance(60_000).lines).toEqual([]);
    expect(sim.truth().ranks.every((r) => r.alive && r.silent)).toBe(true);
  });
});

describe("allStallInside", () => {
  const sim = new Scenario(job, { faults: [F.allStallInside({ atStep: 2, collIndex: 3 })] });
  const colls = parseColls(sim, sim.advance(60_000).lines);
  it("all members of every comm have equal counts and their last line is collective #3 of step 2", () => {
    for (const c of sim.topo.comms) expect(new Set(c.members.map((r) => countsOf(colls, r).get(c.name) ?? 0)).size).toBe(1);
    const want = sim.plan(2)[3];
    for (const r of sim.topo.ranks) {
      const last = colls.filter((c) => c.rank === r.rank).at(-1);
      expect(last?.op).toBe(want?.op);
      expect(last?.comm).toBe(sim.topo.commOf(r.rank, want?.comm ?? "").name);
    }
  });
});

describe("straggler", () => {
  it("the rank arrives last at every collective and the job keeps moving", () => {
    const sim = new Scenario(job, { faults: [F.straggler({ rank: 6, delayMs: 40 })] });
    const first = parseColls(sim, sim.advanceTo(sim.stepStart(5)).lines);
    const dp = sim.topo.commOf(6, "dp");
    const byOp = new Map<string, Map<number, number>>();
    const seen = new Map<number, number>();
    for (const c of first.filter((x) => x.comm === dp.name)) {
      const i = seen.get(c.rank) ?? 0;
      seen.set(c.rank, i + 1);
      const m = byOp.get(String(i)) ?? new Map<number, number>();
      m.set(c.rank, c.t);
      byOp.set(String(i), m);
    }
    expect(byOp.size).toBeGreaterThan(10);
    for (const m of byOp.values()) {
      const t6 = m.get(6) ?? -1;
      for (const [r, t] of m) if (r !== 6) expect(t6).toBeGreaterThan(t);
    }
    expect(parseColls(sim, sim.advance(10_000).lines).length).toBeGreaterThan(0);
  });
});

describe("jobExits", () => {
  it("clean: one Destroy COMPLETE per comm of the process, then nothing", () => {
    const sim = new Scenario({ ...job, ncclVersion: "2.23.4" }, { faults: [F.jobExits({ atStep: 3, clean: true })] });
    const res = sim.advance(30_000);
    for (const r of sim.topo.ranks) {
      const mine = res.lines.filter((l) => l.rank === r.rank);
      const destroys = mine.filter((l) => / - Destroy COMPLETE$/.test(l.text));
      expect(destroys.length).toBe(sim.topo.commsOf(r.rank).length);
      expect(mine.at(-1)?.text).toMatch(/ - Destroy COMPLETE$/);
    }
    expect(sim.advance(30_000).lines).toEqual([]);
    expect(sim.truth().ranks.some((r) => r.alive)).toBe(false);
  });

  it("2.28+ logs teardown under DESTROY: INIT,COLL alone shows none", () => {
    for (const [subsystems, n] of [
      [["INIT", "COLL"], 0],
      [["INIT", "COLL", "DESTROY"], 2],
    ] as const) {
      const sim = new Scenario(
        { ncclVersion: "2.29.2", nodes: ["a", "b"], ranksPerNode: 1, subsystems: [...subsystems] },
        { faults: [F.jobExits({ atStep: 1, clean: true })] },
      );
      expect(sim.advance(20_000).lines.filter((l) => /Destroy COMPLETE/.test(l.text)).length).toBe(n);
    }
  });

  it("unclean: silence without Destroy lines, processes gone", () => {
    const sim = new Scenario(job, { faults: [F.jobExits({ atStep: 3, clean: false })] });
    const res = sim.advance(30_000);
    expect(res.lines.some((l) => /Destroy COMPLETE/.test(l.text))).toBe(false);
    expect(res.lines.filter((l) => l.t >= sim.stepStart(3))).toEqual([]);
    expect(sim.truth().ranks.some((r) => r.alive)).toBe(false);
  });
});

describe("graphReplay", () => {
  it("COLL lines up to the capture step, none after, while steps keep counting", () => {
    const sim = new Scenario(job, { faults: [F.graphReplay({ fromStep: 4 })] });
    const lines = sim.advance(60_000).lines;
    const colls = lines.filter((l) => l.kind === "coll");
    expect(colls.some((l) => l.t >= sim.stepStart(4) && l.t < sim.stepStart(5))).toBe(true);
    expect(colls.filter((l) => l.t >= sim.stepStart(5))).toEqual([]);
    const t = sim.truth();
    expect(t.step).toBeGreaterThan(40);
    expect(t.ranks.every((r) => r.alive)).toBe(true);
  });
});

describe("mismatch", () => {
  it("the rank issues another collective type at the same index (same opCount), then the job hangs", () => {
    const sim = new Scenario({ ...job, comms: [] }, { faults: [F.mismatch({ rank: 2, atStep: 1, atCollIndex: 2, op: "AllGather" })] });
    const colls = parseColls(sim, sim.advance(60_000).lines);
    const lastOf = (r: number) => colls.filter((c) => c.rank === r).at(-1);
    expect(lastOf(2)?.op).toBe("AllGather");
    for (const r of [0, 1, 3, 7]) {
      expect(lastOf(r)?.op).toBe("AllReduce");
      expect(lastOf(r)?.opCount).toBe(lastOf(2)?.opCount);
    }
    expect(sim.advance(60_000).lines).toEqual([]);
  });
});

describe("slowButMoving", () => {
  it("long silent gaps between steps, but the counts still grow", () => {
    const sim = new Scenario(job, { faults: [F.slowButMoving({ stepMs: 60_000, fromStep: 2 })] });
    const a = parseColls(sim, sim.advance(70_000).lines).filter((c) => c.rank === 0);
    const b = parseColls(sim, sim.advance(120_000).lines).filter((c) => c.rank === 0);
    expect(b.length).toBeGreaterThan(0);
    const ts = [...a, ...b].map((c) => c.t);
    const gaps = ts.slice(1).map((t, i) => t - (ts[i] ?? 0));
    expect(Math.max(...gaps)).toBeGreaterThan(10_000);
  });
});

describe("transport faults", () => {
  it("socketFallback and gdrDisabled change the NET and channel lines", () => {
    const sock = new Scenario(job, { faults: [F.socketFallback()] }).advance(6000).lines.map((l) => l.text);
    expect(sock.some((t) => t.endsWith("NET/IB : No device found."))).toBe(true);
    expect(sock.some((t) => / via NET\/Socket\/0$/.test(t))).toBe(true);
    expect(sock.some((t) => /via NET\/IB/.test(t))).toBe(false);
    const noGdr = new Scenario(job, { faults: [F.gdrDisabled()] }).advance(6000).lines.map((l) => l.text);
    expect(noGdr.some((t) => /GPU Direct RDMA Disabled for HCA 0 'mlx5_0'$/.test(t))).toBe(true);
    expect(noGdr.some((t) => /\[send\] via NET\/IB\/\d+$/.test(t))).toBe(true);
    expect(noGdr.some((t) => t.includes("GDRDMA"))).toBe(false);
  });
});
