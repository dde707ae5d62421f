/**
 * The straggler verdict from COLL lines (detect/straggler.ts), on the real H100 capture of a
 * healthy two-rank job replayed through the live path (FileSink, Tracker, evaluateAll) on a fake
 * clock, on synthetic stragglers in the same line format, and its hysteresis.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { holdStragglers } from "../../../../../collectors/nccl/logs/detect/straggler.js";
import { DEFAULT_DETECT } from "../../../../../collectors/nccl/logs/detect/types.js";
import type { CommState } from "../../../../../collectors/nccl/logs/state/model.js";
import { SeqWindow } from "../../../../../collectors/nccl/logs/state/seq-window.js";
import { DEVICE_DIR, EPOCH_MS, namedAt, realTiming, replay, scheduleTwoRanks, type RealTiming } from "./device-replay.js";

const FILES: [string, string] = [join(DEVICE_DIR, "nccl-vm-521.log"), join(DEVICE_DIR, "nccl-vm-522.log")];
const timing = realTiming();
/** Phases of the second file's reads against the first's: every 5 ms of the 500 ms read interval. */
const PHASES = Array.from({ length: 100 }, (_, i) => i * 5);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(q * (s.length - 1))] as number;
}

describe("the healthy H100 job (pids 521, 522; 150 steps, 202 collectives per rank)", () => {
  it("its ranks really arrive within a few ms of each other on a ~56 ms step (the same script's Flight Recorder times)", () => {
    expect(timing.skewMs.length).toBe(81);
    expect(quantile(timing.skewMs.map(Math.abs), 0.5)).toBeLessThan(1);
    expect(Math.max(...timing.skewMs.map(Math.abs))).toBeLessThan(5);
    expect(quantile(timing.stepGapsMs, 0.5)).toBeGreaterThan(50);
    expect(quantile(timing.stepGapsMs, 0.5)).toBeLessThan(60);
  });

  it("replayed with the follower's reads (every 500 ms per file, at any phase between the two files): no rank is ever named", () => {
    for (const d of PHASES) {
      const r = replay(scheduleTwoRanks(FILES, timing), { phasesMs: [0, d] });
      expect(r.scrapes.length).toBeGreaterThan(20);
      const comm = [...r.tracker.comms.values()][0];
      expect(comm?.arrivalCount, `phase ${d}`).toBe(202);
      expect(namedAt(r), `phase ${d}`).toEqual([]);
      // Read times of two files never prove which rank came last when both wrote in the same ms.
      expect(
        comm?.arrivals.every((a) => a.lastRank === -1),
        `phase ${d}`,
      ).toBe(true);
    }
  });

  it("with reads that drift against each other (a few ms per read), run on for 2,000 collectives: never named", () => {
    for (const d of [0, 60, 120, 430]) {
      const files = scheduleTwoRanks(FILES, timing, { collectives: 2000 });
      const r = replay(files, { phasesMs: [0, d], readLagMs: (f, n) => (f === 1 ? (n * 3) % 500 : 0) });
      expect(namedAt(r), `phase ${d}`).toEqual([]);
    }
  });

  it("with NCCL's own µs timestamps on every line, run on for 2,000 collectives: the real skew (< 5 ms) never makes a straggler", () => {
    const files = scheduleTwoRanks(FILES, timing, { collectives: 2000, stamp: true });
    const r = replay(files, { phasesMs: [0, 137] });
    expect(namedAt(r)).toEqual([]);
    const leads = [...r.tracker.comms.values()][0]?.arrivals.filter((a) => a.lastRank >= 0).map((a) => a.leadMs) ?? [];
    expect(Math.max(0, ...leads)).toBeLessThan(5);
  });
});

/** A job on the capture's lines with steps of `stepMs` (the real skew kept), rank 1 `delayMs` late from collective `from` on. */
function lateJob(o: {
  stepMs: number;
  delayMs: number;
  from?: number;
  until?: number;
  collectives: number;
  stamp: boolean;
  late?: (k: number) => number;
}): ReturnType<typeof scheduleTwoRanks> {
  const t: RealTiming = { ...timing, stepGapsMs: [o.stepMs] };
  return scheduleTwoRanks(FILES, t, {
    collectives: o.collectives,
    stamp: o.stamp,
    extraDelayMs: (rank, k) => (rank !== 1 ? 0 : (o.late?.(k) ?? (k >= (o.from ?? 0) && k < (o.until ?? Infinity) ? o.delayMs : 0))),
  });
}

/** When the collective k of rank 0 was written (ms since the replay began). */
function writtenAt(files: ReturnType<typeof scheduleTwoRanks>, k: number): number {
  const colls = (files[0]?.lines ?? []).filter((l) => / opCount /.test(l.bytes.toString("latin1")));
  return colls[k]?.atMs ?? NaN;
}

describe("a real straggler", () => {
  it("rank 1 30 ms late on a 100 ms step (timestamped lines) is named within 64 collectives + 35 s of the onset, and only rank 1", () => {
    const files = lateJob({ stepMs: 100, delayMs: 30, from: 400, collectives: 1500, stamp: true });
    const onset = writtenAt(files, 400);
    for (const d of [0, 250]) {
      const r = replay(files, { phasesMs: [0, d] });
      const named = namedAt(r);
      expect(named.length).toBeGreaterThan(0);
      expect(named.every((n) => n.ranks.length === 1 && n.ranks[0] === 1)).toBe(true);
      const first = named[0]?.t ?? Infinity;
      expect(first - onset).toBeGreaterThanOrEqual(DEFAULT_DETECT.stragglerRaiseMs);
      expect(first - onset).toBeLessThanOrEqual(64 * 130 + 35_000);
      // Once named it stays named while it lasts.
      const from = r.scrapes.findIndex((s) => s.t === first);
      const moving = r.scrapes.slice(from).filter((s) => s.verdicts.some((v) => v.reason === "moving"));
      expect(moving.every((s) => s.verdicts.some((v) => v.stragglers.includes(1)))).toBe(true);
    }
  });

  it("from read times alone: 700 ms late on a 2 s step is named; 30 ms late on a 100 ms step cannot be told apart from reads 500 ms apart, so is not", () => {
    const slow = replay(lateJob({ stepMs: 2003, delayMs: 700, collectives: 200, stamp: false }), { phasesMs: [0, 170] });
    expect(namedAt(slow).length).toBeGreaterThan(0);
    expect(namedAt(slow).every((n) => n.ranks.length === 1 && n.ranks[0] === 1)).toBe(true);
    for (const d of [0, 30, 250])
      expect(namedAt(replay(lateJob({ stepMs: 100, delayMs: 30, collectives: 1500, stamp: false }), { phasesMs: [0, d] }))).toEqual([]);
  });
});

describe("hysteresis", () => {
  it("one late collective (500 ms, timestamped) in a healthy job names nobody", () => {
    const r = replay(lateJob({ stepMs: 100, delayMs: 0, collectives: 1000, stamp: true, late: (k) => (k === 500 ? 500 : 0) }), { phasesMs: [0, 200] });
    expect(namedAt(r)).toEqual([]);
  });

  it("a straggler that stops is dropped after the clear hold, and late collectives afterwards now and then do not bring it back", () => {
    // Late for collectives 100-899, then on time except every 40th.
    const files = lateJob({
      stepMs: 100,
      delayMs: 0,
      collectives: 2400,
      stamp: true,
      late: (k) => (k >= 100 && k < 900 ? 40 : k >= 900 && k % 40 === 0 ? 40 : 0),
    });
    const r = replay(files, { phasesMs: [0, 90] });
    const named = new Set(namedAt(r).map((n) => n.t));
    const stop = writtenAt(files, 900);
    const lastNamed = Math.max(...named);
    expect(named.size).toBeGreaterThan(0);
    expect(lastNamed).toBeGreaterThanOrEqual(stop + DEFAULT_DETECT.stragglerClearMs - 500);
    expect(lastNamed - stop).toBeLessThanOrEqual(64 * 100 + DEFAULT_DETECT.stragglerClearMs + 5_000);
    // Named in one unbroken run, never again after it.
    const times = r.scrapes.map((s) => s.t);
    const runs = times.filter((t, i) => named.has(t) && (i === 0 || !named.has(times[i - 1] as number)));
    expect(runs.length).toBe(1);
  });
});

function commFor(arrivals: number): CommState {
  return {
    key: "0xabc",
    owner: -1,
    ranks: new Map(),
    seqOps: new SeqWindow(4),
    pendingArrivals: new SeqWindow(4),
    arrivals: [],
    arrivalCount: arrivals,
    stragglerHold: new Map(),
    gaps: [],
    allCountedFromInit: true,
    maxCollectives: arrivals,
    createdMs: EPOCH_MS,
  };
}

describe("holdStragglers (per evaluation)", () => {
  const o = DEFAULT_DETECT;
  it("a window that names the rank at every other evaluation never raises it", () => {
    const c = commFor(0);
    for (let i = 0; i < 100; i++) {
      c.arrivalCount += 10;
      expect(holdStragglers(c, i % 2 === 0 ? [1] : [], EPOCH_MS + i * 5000, o)).toEqual([]);
    }
  });

  it("raised after the raise hold and enough collectives, kept through one evaluation that does not name it, cleared after the clear hold, not back on one evaluation", () => {
    const c = commFor(0);
    const at = (s: number): number => EPOCH_MS + s * 1000;
    expect(holdStragglers(c, [1], at(0), o)).toEqual([]);
    c.arrivalCount = 10;
    expect(holdStragglers(c, [1], at(30), o)).toEqual([]); // 30 s, but 10 collectives
    c.arrivalCount = 20;
    expect(holdStragglers(c, [1], at(31), o)).toEqual([1]);
    expect(holdStragglers(c, [1], at(31), o)).toEqual([1]); // same time, same answer
    c.arrivalCount = 30;
    expect(holdStragglers(c, [], at(35), o)).toEqual([1]);
    expect(holdStragglers(c, [1], at(40), o)).toEqual([1]); // the clear clock starts again
    c.arrivalCount = 40;
    expect(holdStragglers(c, [], at(45), o)).toEqual([1]);
    c.arrivalCount = 100;
    expect(holdStragglers(c, [], at(104), o)).toEqual([1]); // 59 s
    expect(holdStragglers(c, [], at(105), o)).toEqual([]); // 60 s and 60 collectives: cleared
    c.arrivalCount = 101;
    expect(holdStragglers(c, [1], at(106), o)).toEqual([]); // one evaluation does not bring it back
    expect(holdStragglers(c, [], at(111), o)).toEqual([]);
    expect(c.stragglerHold.size).toBe(0);
  });
});
