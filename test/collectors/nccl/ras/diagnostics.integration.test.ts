/**
 * RAS diagnostics and NCCL Inspector's switch, live: a RasWatch that is its job's querier (it hosts
 * rank 0) asks a fake NCCL 2.32.3 service (test/fakes/nccl-ras --job, NCCL's exact DIAG lines) once
 * for a hang episode, and switches Inspector on for the window and off again. Time is a fake clock;
 * the service is a real process on a real socket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch } from "../../../../collectors/nccl/ras/watch.js";
import { diagProblems } from "../../../../collectors/nccl/ras/parse-diag.js";
import { uniformJob, type RasJob } from "../../../fakes/ras/render.mjs";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { rasJobServices } from "../../../helpers/ras-service.js";

const startJob = rasJobServices();
const watches: RasWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

const HASH = "0x7f3a9c2e5d1b4a60";
const INTERVAL = 30_000;

/** Ranks 0-7 here (127.0.0.1), 8-15 on 10.0.0.4; ECC errors on rank 11, an Xid 94 on gpu-node-04. */
function job(version: string): RasJob {
  const j = uniformJob({ version, nodes: 2, ranksPerNode: 8, hash: HASH, hostOf: (n) => (n === 0 ? "127.0.0.1" : "10.0.0.4"), pidBase: 48200 });
  return { ...j, diag: { eccUncorrected: { 11: 1 }, xids: [{ host: "gpu-node-04", xid: 94, count: 1 }], hostNames: { "10.0.0.4": "gpu-node-04" } } };
}

function watch(port: number, clock: { t: number }, inspectorWindowMs?: number): { w: RasWatch; logs: () => Array<Record<string, unknown>> } {
  const { logger, lines } = memoryLogger("info");
  const w = new RasWatch(
    {
      address: { host: "127.0.0.1", port },
      intervalMs: INTERVAL,
      now: () => clock.t,
      log: logger,
      deadlineMs: 5000,
      progress: { hangThresholdMs: 120_000, gapFactor: 2, maxThresholdMs: 30 * 60_000 },
      monitor: false,
      election: { isLocal: (h) => h === "127.0.0.1", probe: () => Promise.resolve({ kind: "gone", reason: "none" }) },
      ...(inspectorWindowMs !== undefined ? { inspectorWindowMs } : {}),
    },
    () => 0,
  );
  watches.push(w);
  return { w, logs: lines };
}

async function tick(w: RasWatch, clock: { t: number }, t: number): Promise<void> {
  clock.t = t;
  w.tick(false);
  await w.settled();
}

const diagnostics = (cmds: string[]): number => cmds.filter((c) => c === "DIAGNOSTICS").length;

describe("RAS diagnostics, live", () => {
  it("the querier asks once for a hang episode (NCCL 2.32.3): the problems on the snapshot and in the log; none before the hang, none again", async () => {
    const s = await startJob(job("2.32.3"));
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock);
    await tick(w, clock, 0); // the first status: this node hosts rank 0, the querier
    expect(w.snapshot().role).toBe("querier");
    await tick(w, clock, 1000);
    expect(diagnostics(s.commands())).toBe(0);
    w.setHang(true);
    await tick(w, clock, 2000);
    expect(diagnostics(await s.commandsWhen((c) => diagnostics(c) >= 1))).toBe(1);
    // Asked on a text connection with a 10 s wait per hop, never JSON.
    const cmds = s.commands();
    const at = cmds.lastIndexOf("DIAGNOSTICS");
    expect(cmds.slice(at - 2, at + 1)).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 10", "DIAGNOSTICS"]);
    const d = w.snapshot().diagnostics;
    expect(d?.atMs).toBe(2000);
    expect(diagProblems(d?.report ?? { results: [], busy: false, errors: [] }).map((p) => [p.check, p.detail ?? null, p.host ?? null])).toEqual([
      ["ecc", null, null],
      ["xid", "94", "gpu-node-04"],
    ]);
    expect(w.snapshot().queriesBy.get("ok")?.get("diagnostics")).toBe(1);
    // Logged in the words of `ringwatch analyze`: the ECC error at error level, the Xid at warn.
    const said = logs().filter((l) => l.kind !== undefined);
    expect(said.map((l) => [l.kind, l.event ?? l.code, l.level])).toEqual([
      ["nccl_diagnostic", "ecc", 50],
      ["gpu_xid", 94, 40],
    ]);
    expect(String(said[0]?.msg)).toContain("rank 11");
    // The same episode: never again.
    await tick(w, clock, 2000 + 5 * INTERVAL);
    expect(diagnostics(s.commands())).toBe(1);
    // The hang ends: the problems go; the next hang asks again.
    w.setHang(false);
    expect(w.snapshot().diagnostics).toBeUndefined();
    w.setHang(true);
    await tick(w, clock, 3000 + 5 * INTERVAL);
    expect(diagnostics(await s.commandsWhen((c) => diagnostics(c) >= 2))).toBe(2);
  });

  it("NCCL 2.30.7 has no diagnostics: never asked", async () => {
    const s = await startJob(job("2.30.7"));
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    await tick(w, clock, 0);
    w.setHang(true);
    await tick(w, clock, 1000);
    await tick(w, clock, 2000);
    expect(diagnostics(s.commands())).toBe(0);
  });
});

describe("NCCL Inspector switched on for a hang (opt-in)", () => {
  it("on when the hang begins, off after the window; off again when the agent stops", async () => {
    const s = await startJob(job("2.32.3"));
    const clock = { t: 0 };
    const { w } = watch(s.port, clock, 60_000);
    await tick(w, clock, 0);
    w.setHang(true);
    await tick(w, clock, 1000); // on first, then (next look) the diagnostics
    await tick(w, clock, 1500);
    const maskOf = (cmds: string[]): string[] => cmds.filter((c) => c.startsWith("CONTROL PROFILER_MASK"));
    const masks = (): string[] => maskOf(s.commands());
    // The fake logs a command on stderr, which may arrive after its answer: wait for the n-th mask.
    const masksWhen = async (n: number): Promise<string[]> => maskOf(await s.commandsWhen((c) => maskOf(c).length >= n));
    expect(await masksWhen(1)).toEqual(["CONTROL PROFILER_MASK 0x46"]);
    expect(w.snapshot().inspectorOn).toBe(true);
    expect(w.snapshot().inspectorSwitches.get("on|ok")).toBe(1);
    expect(diagnostics(await s.commandsWhen((c) => diagnostics(c) >= 1))).toBe(1);
    await tick(w, clock, 60_999);
    expect(masks()).toHaveLength(1);
    await tick(w, clock, 61_000);
    expect(await masksWhen(2)).toEqual(["CONTROL PROFILER_MASK 0x46", "CONTROL PROFILER_MASK none"]);
    expect(w.snapshot().inspectorOn).toBe(false);
    expect(w.snapshot().inspectorSwitches.get("off|ok")).toBe(1);

    // A second episode, and the agent stops inside the window: off is sent at close.
    w.setHang(false);
    w.setHang(true);
    await tick(w, clock, 200_000); // the querier's periodic status first: one connection at a time
    await tick(w, clock, 200_500);
    expect(await masksWhen(3)).toHaveLength(3);
    await w.close();
    expect(await masksWhen(4)).toEqual([
      "CONTROL PROFILER_MASK 0x46",
      "CONTROL PROFILER_MASK none",
      "CONTROL PROFILER_MASK 0x46",
      "CONTROL PROFILER_MASK none",
    ]);
  });

  it("the job ends while Inspector is on: nothing to switch off, no connection tried", async () => {
    const s = await startJob(job("2.32.3"));
    const clock = { t: 0 };
    const { w } = watch(s.port, clock, 60_000);
    await tick(w, clock, 0);
    w.setHang(true);
    await tick(w, clock, 1000);
    expect(w.snapshot().inspectorOn).toBe(true);
    await s.stop(); // the service is gone when off is due
    w.setHang(false);
    await tick(w, clock, 2000);
    // Nothing listens any more: the job's processes, and their mask, are gone; no connection is tried.
    expect(w.snapshot().listener).toBe("none");
    expect(w.snapshot().inspectorOn).toBe(false);
    expect(w.snapshot().inspectorSwitches.get("off|failed")).toBe(0);
  });
});
