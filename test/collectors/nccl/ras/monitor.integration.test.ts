/**
 * RAS monitor mode (NCCL 2.29+) through RasWatch: after a query finds a job whose NCCL has it, one
 * long-lived connection subscribes to lifecycle events; a PEER_DEAD names the process dead at once
 * and a status query follows at once. The service is the fake job (test/fakes/nccl-ras --job), which
 * answers MONITOR and writes events as NCCL's rasClientsNotifyEvent does; the clock does not move,
 * so only the event can cause the second query.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch, hasMonitorMode } from "../../../../collectors/nccl/ras/watch.js";
import { uniformJob, withMissing } from "../../../fakes/ras/render.mjs";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { rasJobServices } from "../../../helpers/ras-service.js";

const service = rasJobServices();
const watches: RasWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

function watch(port: number, clock = { t: 0 }): { w: RasWatch; logs: () => Array<Record<string, unknown>> } {
  const { logger, lines } = memoryLogger("debug");
  const w = new RasWatch(
    {
      address: { host: "127.0.0.1", port },
      intervalMs: 30_000,
      now: () => clock.t,
      log: logger,
      deadlineMs: 3000,
      progress: { hangThresholdMs: 120_000, gapFactor: 2, maxThresholdMs: 30 * 60_000 },
    },
    () => 0.5,
  );
  watches.push(w);
  return { w, logs: lines };
}

const job = (version: string) => uniformJob({ version, nodes: 2, ranksPerNode: 2, counts: { AllReduce: 40 } });

describe("RAS monitor mode", () => {
  it("NCCL 2.29.2: subscribes after the first answer; PEER_DEAD is published at once and asks for the status at once", async () => {
    const s = await service(job("2.29.2"));
    const { w, logs } = watch(s.port);
    w.tick();
    await w.settled();
    await expect.poll(() => w.snapshot().monitor).toBe("subscribed");
    expect(s.commands()).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "STATUS", "CLIENT PROTOCOL 2", "SET FORMAT json", "MONITOR lifecycle"]);
    expect(w.snapshot().dead).toEqual([]);
    expect(w.snapshot().queries.get("ok")).toBe(1);

    // Rank 3 (node 10.0.0.2, pid 4003, GPU 1) dies: NCCL pushes PEER_DEAD, its next report lists it missing and dead.
    await s.setJob(withMissing(job("2.29.2"), 0, [3], { dead: true }));
    await s.emit({ type: "PEER_DEAD", peer: { host: "10.0.0.2", pid: 4003, cudaDevs: [1] }, time: "2026-11-24 02:47:13" });
    await expect.poll(() => w.snapshot().dead).toEqual(["10.0.0.2:4003"]);
    await expect.poll(() => w.snapshot().queries.get("ok")).toBe(2);
    await w.settled();
    const snap = w.snapshot();
    expect(snap.events.get("PEER_DEAD")).toBe(1);
    expect(snap.events.get("PEER_NEW")).toBe(0);
    expect(snap.report?.full?.[0]?.missing.map((m) => [m.rank, m.dead])).toEqual([[3, true]]);
    expect(snap.dead).toEqual(["10.0.0.2:4003"]);
    const warn = logs().find((l) => l.event === "PEER_DEAD");
    expect(warn?.msg).toBe("nccl: NCCL RAS says process 10.0.0.2:4003 (GPU 1) of the job is dead (PEER_DEAD); asking for the job's status now");
    expect(warn?.level).toBe(40);

    // A new peer is counted, and changes nothing else.
    await s.emit({ type: "PEER_NEW", peer: { host: "10.0.0.3", pid: 5000, cudaDevs: [0] } });
    await expect.poll(() => w.snapshot().events.get("PEER_NEW")).toBe(1);
    expect(w.snapshot().queries.get("ok")).toBe(2);
  });

  it("the job ends: the subscription ends, the dead go with the job, and a new job is subscribed again", async () => {
    const s = await service(job("2.30.7"));
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    w.tick();
    await w.settled();
    await expect.poll(() => w.snapshot().monitor).toBe("subscribed");
    await s.emit({ type: "PEER_DEAD", peer: { host: "10.0.0.1", pid: 4001, cudaDevs: [1] } });
    await expect.poll(() => w.snapshot().dead).toEqual(["10.0.0.1:4001"]);
    await w.settled();
    await s.stop();
    await expect.poll(() => w.snapshot().monitor).toBe("off");
    // Nothing listens: nothing is asked, and the job's dead are forgotten.
    clock.t = 30_000;
    w.tick();
    await w.settled();
    expect(w.snapshot().listener).toBe("none");
    expect(w.snapshot().queries.get("unreachable")).toBe(0);
    expect(w.snapshot().dead).toEqual([]);
  });

  it("NCCL 2.28.9 (no monitor mode): never asked, so no second connection; hasMonitorMode reads the version", async () => {
    const s = await service(job("2.28.9"));
    const { w } = watch(s.port);
    w.tick();
    await w.settled();
    expect(w.snapshot().queries.get("ok")).toBe(1);
    expect(w.snapshot().monitor).toBe("off");
    expect(s.connections()).toBe(1);
    expect(s.commands()).not.toContain("MONITOR lifecycle");
    expect([hasMonitorMode("2.28.9"), hasMonitorMode("2.29.2"), hasMonitorMode("3.0.1"), hasMonitorMode(undefined), hasMonitorMode("2.24.3")]).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });
});
