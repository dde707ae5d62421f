/**
 * Version-dependent opCount, communicator identity (process-local pointers, shared commIds,
 * split keys), PyTorch SeqNum consistency and determinism.
 */
import { describe, expect, it } from "vitest";
import * as F from "../sim/faults.js";
import { Scenario } from "../sim/scenario.js";
import type { JobSpec } from "../sim/spec.js";
import { Topology } from "../sim/topology.js";
import { countsOf, parseColls } from "./helpers.js";

const job: JobSpec = {
  nodes: ["dgx-a01", "dgx-a02"],
  ranksPerNode: 4,
  comms: [
    { name: "tp", groupSize: 2, layout: "contiguous" },
    { name: "dp", groupSize: 4, layout: "strided", via: "init" },
  ],
};

function opCounts(v: string, family: string, rank: number): number[] {
  const sim = new Scenario({ ...job, ncclVersion: v });
  const colls = parseColls(sim, sim.advanceTo(sim.stepStart(3)).lines);
  const name = sim.topo.commOf(rank, family).name;
  return colls.filter((c) => c.rank === rank && c.comm === name).map((c) => c.opCount);
}

describe("opCount", () => {
  it("before 2.27 it counts every collective, single-node or not", () => {
    for (const fam of ["tp", "dp", "world"]) {
      const oc = opCounts("2.23.4", fam, 1);
      expect(oc.length).toBeGreaterThan(2);
      expect(oc).toEqual(oc.map((_, i) => i));
    }
  });

  it("from 2.27 it stays 0 on single-node comms and advances on multi-node comms", () => {
    for (const v of ["2.27.6", "2.29.2"]) {
      const tp = opCounts(v, "tp", 1);
      expect(tp.length).toBeGreaterThan(2);
      expect(new Set(tp)).toEqual(new Set([0]));
      const dp = opCounts(v, "dp", 1);
      expect(dp).toEqual(dp.map((_, i) => i));
      expect(dp.length).toBeGreaterThan(2);
    }
  });

  it("a 1-rank comm never advances (fixture 55)", () => {
    const sim = new Scenario({ nodes: ["solo"], ranksPerNode: 1, ncclVersion: "2.21.5" });
    const oc = parseColls(sim, sim.advanceTo(sim.stepStart(3)).lines).map((c) => c.opCount);
    expect(oc.length).toBeGreaterThan(2);
    expect(new Set(oc)).toEqual(new Set([0]));
  });
});

describe("communicator identity", () => {
  const sim = new Scenario(job);
  const lines = sim.advance(6000).lines;
  const completes = lines.filter((l) => / - Init COMPLETE$/.test(l.text));

  it("every rank has its own comm pointer; the pointer in Init COMPLETE is the one its COLL lines use", () => {
    for (const c of sim.topo.comms) {
      const ptrs = completes.filter((l) => l.comm === c.name).map((l) => /comm (0x[0-9a-f]+) /.exec(l.text)?.[1]);
      expect(ptrs.length).toBe(c.members.length);
      expect(new Set(ptrs).size).toBe(c.members.length);
      c.members.forEach((r) => {
        expect(ptrs).toContain(Topology.ptrOf(c, r));
      });
    }
    expect(parseColls(sim, lines).length).toBeGreaterThan(0);
  });

  it("commIds agree within a communicator and differ across; split comms print none", () => {
    const idOf = (name: string): Set<string | undefined> =>
      new Set(completes.filter((l) => l.comm === name).map((l) => / commId (0x[0-9a-f]+) /.exec(l.text)?.[1]));
    const world = idOf("world");
    const dp0 = idOf("dp.0");
    expect(world.size).toBe(1);
    expect(dp0.size).toBe(1);
    expect([...world][0]).toMatch(/^0x[0-9a-f]+$/);
    expect([...world][0]).not.toBe([...dp0][0]);
    expect(idOf("tp.0")).toEqual(new Set([undefined]));
  });

  it("split comms name the rank's own world pointer as parent, color = group, key = world rank", () => {
    for (const l of completes.filter((x) => x.comm?.startsWith("tp.") === true)) {
      const m = / parent (0x[0-9a-f]+) splitCount (\d+) color (\d+) key (\d+) /.exec(l.text);
      const world = sim.topo.comms[0];
      expect(m?.[1]).toBe(world === undefined ? "" : Topology.ptrOf(world, l.rank));
      expect(m?.[2]).toBe("1");
      expect(Number(m?.[3])).toBe(Math.floor(l.rank / 2));
      expect(Number(m?.[4])).toBe(l.rank);
    }
  });
});

describe("PyTorch watchdog", () => {
  it("waiting ranks time out with SeqNum = their COLL count on that PG; the stopped rank prints none", () => {
    const sim = new Scenario(job, { faults: [F.rankStopsBeforeCollective({ rank: 2, atStep: 2, beforeCollIndex: 1 })], watchdog: { timeoutMs: 60_000 } });
    const lines = sim.advance(100_000).lines;
    const colls = parseColls(sim, lines);
    const family = sim.plan(2)[1]?.comm ?? "";
    const comm = sim.topo.commOf(2, family);
    const waiting = comm.members.filter((r) => r !== 2);
    for (const r of waiting) {
      const wd = lines.find((l) => l.rank === r && /Watchdog caught/.test(l.text));
      const seq = Number(/SeqNum=(\d+)/.exec(wd?.text ?? "")?.[1]);
      expect(seq).toBe(countsOf(colls, r).get(comm.name));
      expect(Number(/ran for (\d+) milliseconds/.exec(wd?.text ?? "")?.[1])).toBeGreaterThanOrEqual(60_000);
    }
    expect(lines.some((l) => l.rank === 2 && l.kind === "watchdog")).toBe(false);
    expect(
      lines
        .filter((l) => l.kind === "watchdog")
        .map((l) => l.rank)
        .sort(),
    ).toEqual(waiting.flatMap((r) => [r, r]).sort());
  });
});

describe("determinism", () => {
  it("same seed, same text whatever the advance granularity; another seed, other pointers", () => {
    const a = new Scenario(job);
    const b = new Scenario(job);
    const whole = a.advance(12_000).lines.map((l) => l.text);
    const pieces: string[] = [];
    for (let i = 0; i < 24; i++) pieces.push(...b.advance(500).lines.map((l) => l.text));
    expect(pieces).toEqual(whole);
    const c = new Scenario({ ...job, seed: 99 }).advance(12_000).lines.map((l) => l.text);
    expect(c.length).toBe(whole.length);
    expect(c).not.toEqual(whole);
  });
});
