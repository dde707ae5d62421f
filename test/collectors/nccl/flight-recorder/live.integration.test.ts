/**
 * Flight Recorder, live (flight-recorder/watch.ts): a hang begins, each rank's FIFO gets one line,
 * the fake ranks (test/fakes/fr-rank, real processes with real FIFOs) dump the real H100 dumps in
 * two halves, as PyTorch writes them in place; the watch reads each dump only once it held still,
 * analyzes them together and names rank 1 behind with rank 0's Python frames. Also: dumps PyTorch
 * wrote by itself (no pipe), a corrupt dump, and no second poke within the cooldown.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { FlightRecorderWatch } from "../../../../collectors/nccl/flight-recorder/watch.js";
import { FlightRecorderMetrics } from "../../../../collectors/nccl/flight-recorder/metrics.js";
import { fakesDir } from "../../../helpers/agent-process.js";
import { eventually } from "../../../helpers/eventually.js";
import { fixturesDir } from "../../../helpers/fixtures.js";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { tempDir } from "../../../helpers/temp-dir.js";

const REAL = join(fixturesDir, "fr/h100-2026-11-24");
const ranks: ChildProcess[] = [];
afterEach(() => {
  for (const r of ranks.splice(0)) r.kill("SIGTERM");
});

async function startRank(dir: string, rank: number): Promise<() => string> {
  const child = spawn(
    process.execPath,
    [
      join(fakesDir, "fr-rank"),
      "--pipe",
      join(dir, "pipe_"),
      "--dump",
      join(dir, "nccl_trace_rank_"),
      "--rank",
      String(rank),
      "--from",
      join(REAL, `nccl_trace_rank_${rank}`),
      "--poll-ms",
      "100",
      "--split-ms",
      "300",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  ranks.push(child);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
  await eventually(() => out.includes("ready"), 10_000);
  return () => out;
}

/** Ticks (as the collector's evaluation does) until `done`, waiting for each look. */
async function tickUntil(w: FlightRecorderWatch, hung: boolean, done: () => boolean): Promise<void> {
  await eventually(
    async () => {
      w.tick(hung);
      await w.settled();
      return done();
    },
    { timeoutMs: 15_000, everyMs: 100, what: "the Flight Recorder analysis" },
  );
}

describe("Flight Recorder, live", () => {
  it("a hang begins: both ranks asked through their pipes; rank 1 named behind with rank 0's frames, once; metrics", async () => {
    const dir = tempDir();
    const out0 = await startRank(dir, 0);
    const out1 = await startRank(dir, 1);
    const { logger, lines } = memoryLogger("info");
    const clock = { t: 1_000_000 };
    const w = new FlightRecorderWatch({ pipePrefix: join(dir, "pipe_"), dumpPrefix: join(dir, "nccl_trace_rank_"), now: () => clock.t, log: logger });
    w.tick(false);
    await w.settled();
    expect(w.snapshot().pokes.get("ok")).toBe(0);
    await tickUntil(w, true, () => w.snapshot().dumps.get("ok") === 2);
    expect(out0()).toContain("dumped 1");
    expect(out1()).toContain("dumped 1");
    const snap = w.snapshot();
    expect(snap.pokes.get("ok")).toBe(2);
    expect(snap.dumps.get("ok")).toBe(2);
    // Half-written dumps were never read: no dump counted unreadable.
    expect(snap.dumps.get("unreadable")).toBe(0);
    const g = snap.analysis?.groups[0];
    expect(g?.behind?.ranks).toEqual([1]);
    expect(g?.wait?.seq).toBe(82);
    const warn = lines().filter((l) => String(l.msg).startsWith("nccl: Flight Recorder:"));
    expect(warn).toHaveLength(1);
    expect(warn[0]?.msg).toContain("rank 1 never enqueued collective #82 (all_reduce), which rank 0 waits in");
    expect(warn[0]?.frames).toContain("/opt/job/job.py:20 <module>");
    // Rank 1's own last collective (#81, completed) and the frames it was called from.
    expect(warn[0]?.behind_last).toEqual({ rank: 1, seq: 81, op: "all_reduce", state: "completed" });
    expect(warn[0]?.behind_frames).toContain("/opt/job/job.py:20 <module>");

    const registry = new Registry();
    new FlightRecorderMetrics(registry).publish(snap);
    const text = await registry.metrics();
    expect(text).toContain('ringwatch_nccl_fr_rank_behind{process_group="0",rank="1"} 1');
    expect(text).toContain('ringwatch_nccl_fr_last_collective{process_group="0",rank="0",state="enqueued"} 83');
    expect(text).toContain('ringwatch_nccl_fr_last_collective{process_group="0",rank="1",state="completed"} 81');
    expect(text).toContain('ringwatch_nccl_fr_dumps_total{result="ok"} 2');

    // The hang ends and begins again within the cooldown: no second poke; the same verdict is not logged again.
    w.tick(false);
    clock.t += 60_000;
    w.tick(true);
    await w.settled();
    expect(w.snapshot().pokes.get("ok")).toBe(2);
    expect(lines().filter((l) => String(l.msg).startsWith("nccl: Flight Recorder:"))).toHaveLength(1);
  });

  it("no pipe: dumps PyTorch wrote by itself are read; a corrupt one is counted and logged, never a crash", async () => {
    const dir = tempDir();
    const { logger, lines } = memoryLogger("info");
    const w = new FlightRecorderWatch({ dumpPrefix: join(dir, "nccl_trace_rank_"), now: () => 0, log: logger });
    copyFileSync(join(REAL, "nccl_trace_rank_0"), join(dir, "nccl_trace_rank_0"));
    copyFileSync(join(REAL, "nccl_trace_rank_1"), join(dir, "nccl_trace_rank_1"));
    writeFileSync(join(dir, "nccl_trace_rank_2"), Buffer.from([0x80, 0x02, 0x7d, 0x71, 0x00, 0x28, 0x58, 0xff]));
    // Written 10 minutes ago: past the time a dump may still be on its way.
    const old = new Date(Date.now() - 10 * 60_000);
    for (const r of [0, 1, 2]) utimesSync(join(dir, `nccl_trace_rank_${r}`), old, old);
    await tickUntil(w, false, () => (w.snapshot().dumps.get("unreadable") ?? 0) > 0 && w.snapshot().dumps.get("ok") === 2);
    const snap = w.snapshot();
    expect(snap.dumps.get("ok")).toBe(2);
    expect(snap.dumps.get("unreadable")).toBe(1);
    expect(snap.pokes.get("ok")).toBe(0);
    expect(snap.analysis?.groups[0]?.behind?.ranks).toEqual([1]);
    expect(lines().some((l) => String(l.msg).startsWith(`nccl: Flight Recorder dump ${join(dir, "nccl_trace_rank_2")} could not be read`))).toBe(true);
  });
});
