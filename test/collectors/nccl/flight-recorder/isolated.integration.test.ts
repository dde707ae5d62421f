/**
 * Dumps read in a worker thread (isolated.ts): real worker threads, started from the TypeScript
 * sources here (collectors/worker-source.ts), with their heap and time limits. A dump over its budget is
 * refused in the worker; one that needs more heap than the worker has, or more time than a read
 * may take, stops that worker and fails as `memory` or `time`, and the next read starts a fresh
 * one; an idle worker ends; a dump cut short is told without a worker.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { IsolatedFrReader, type IsolationLimits } from "../../../../collectors/nccl/flight-recorder/isolated.js";
import { readFrDump } from "../../../../collectors/nccl/flight-recorder/read.js";
import { eventually } from "../../../helpers/eventually.js";
import { writeBigDump } from "../../../helpers/fr-big-dumps.js";
import { hasPython } from "../../../helpers/fr-dumps.js";
import { fixturesDir } from "../../../helpers/fixtures.js";
import { tempDir } from "../../../helpers/temp-dir.js";

const run = hasPython() || process.env.CI ? describe : describe.skip;
const H100 = join(fixturesDir, "fr/h100-2026-11-24");
const real = (rank: number): Buffer => readFileSync(join(H100, `nccl_trace_rank_${rank}`));
const OPTS = { entriesPerGroup: 512 };

const readers: IsolatedFrReader[] = [];
const reader = (limits: Partial<IsolationLimits> = {}): IsolatedFrReader => {
  const r = new IsolatedFrReader({ heapMb: 64, timeMs: 15_000, idleMs: 60_000, ...limits });
  readers.push(r);
  return r;
};
afterEach(async () => {
  for (const r of readers.splice(0)) await r.close();
});

run("Flight Recorder dumps read in a worker", () => {
  const dir = tempDir();
  const bytes = new Map<string, Buffer>();
  beforeAll(() => {
    writeBigDump("shared-ranks", join(dir, "ranks"));
    writeBigDump("shared-entry", join(dir, "entry"));
    // 4,000 entries of a 131,072-rank job: 1.9 MB, about 30 MB of heap and half a second to read.
    writeBigDump("large-job", join(dir, "job"), { entries: 4000 });
    // Its full 20,000-entry buffer: 6.9 MB, about 100 MB of heap and 1-2 s to read.
    writeBigDump("large-job", join(dir, "job20k"));
    for (const f of ["ranks", "entry", "job", "job20k"]) bytes.set(f, readFileSync(join(dir, f)));
  }, 120_000);

  it("the real H100 dumps: read in one worker, started on the first read, exactly as readFrDump reads them", async () => {
    const r = reader();
    expect(r.running).toBe(false);
    for (const rank of [0, 1]) {
      const name = `nccl_trace_rank_${rank}`;
      const got = await r.read(real(rank), name, OPTS);
      expect(got.ok).toBe(true);
      expect(got).toEqual(readFrDump(real(rank), name, OPTS));
    }
    expect(r.workersStarted).toBe(1);
    expect(r.running).toBe(true);
  });

  it("the two hostile dumps: refused for their budget in the worker, which goes on reading", async () => {
    const r = reader();
    expect(await r.read(bytes.get("ranks") as Buffer, "nccl_trace_rank_2", OPTS)).toEqual({
      ok: false,
      source: "nccl_trace_rank_2",
      rank: 2,
      error: "too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)",
      over: "budget",
    });
    expect(await r.read(bytes.get("entry") as Buffer, "nccl_trace_rank_3", OPTS)).toMatchObject({
      ok: false,
      error: "too large: tensor sizes over budget (more than 4,194,304 tensors and dimensions)",
      over: "budget",
    });
    expect((await r.read(real(1), "nccl_trace_rank_1", OPTS)).ok).toBe(true);
    expect(r.workersStarted).toBe(1);
  });

  it("a dump that needs more heap than the worker has: that worker stops, the read fails as memory, the next read gets a fresh worker", async () => {
    const r = reader({ heapMb: 8 });
    const got = await r.read(bytes.get("job") as Buffer, "nccl_trace_rank_0", OPTS);
    expect(got).toEqual({
      ok: false,
      source: "nccl_trace_rank_0",
      rank: 0,
      error: "too large: reading it went over the reader's memory budget (8 MB of heap)",
      over: "memory",
    });
    expect(r.running).toBe(false);
    const next = await r.read(real(0), "nccl_trace_rank_0", OPTS);
    expect(next.ok).toBe(true);
    expect(r.workersStarted).toBe(2);
    // With room, the same dump is read.
    const roomy = reader();
    const ok = await roomy.read(bytes.get("job") as Buffer, "nccl_trace_rank_0", OPTS);
    expect(ok.ok && ok.dump.entries.length).toBe(4 * 512);
  });

  it("a read that takes longer than its time: the worker is terminated, the read fails as time, the next one gets a fresh worker", async () => {
    const r = reader({ heapMb: 256, timeMs: 300 });
    // A first read of a pickle that is no dump (microseconds): the worker is started and ready; its start is not counted in a read's time.
    expect(await r.read(Buffer.from([0x80, 0x02, 0x7d, 0x2e]), "x", OPTS)).toMatchObject({
      ok: false,
      error: "not a Flight Recorder dump: no version, pg_status or entries",
    });
    const got = await r.read(bytes.get("job20k") as Buffer, "nccl_trace_rank_0", OPTS);
    expect(got).toEqual({
      ok: false,
      source: "nccl_trace_rank_0",
      rank: 0,
      error: "too large: reading it went over the reader's time budget (0.3 s)",
      over: "time",
    });
    expect(r.running).toBe(false);
    expect(await r.read(Buffer.from([0x80, 0x02, 0x7d, 0x2e]), "x", OPTS)).toMatchObject({ ok: false });
    expect(r.workersStarted).toBe(2);
  });

  it("idle: the worker ends; a dump cut short is told without starting one", async () => {
    const r = reader({ idleMs: 100 });
    expect((await r.read(real(0), "nccl_trace_rank_0", OPTS)).ok).toBe(true);
    await eventually(() => !r.running, { what: "the idle worker ended" });
    const cut = await r.read(real(0).subarray(0, 7000), "nccl_trace_rank_0", OPTS);
    expect(cut).toEqual({ ok: false, source: "nccl_trace_rank_0", rank: 0, error: "truncated: the pickle ends before its STOP" });
    expect(r.running).toBe(false);
    expect(r.workersStarted).toBe(1);
  });
});
