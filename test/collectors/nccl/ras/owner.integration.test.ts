/**
 * RasWatch with the socket-owner check (the collector always sets it): an answer is believed only
 * from a socket that a live process of a known rank holds (or root). The service is the fake job
 * (test/fakes/nccl-ras --job, NCCL 2.29.7) run as nobody, so root's rule does not apply; which pids
 * are "known ranks" is what the test says. The clock is fake; sockets and processes are real.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch, type RasOwnerSource } from "../../../../collectors/nccl/ras/watch.js";
import { withMissing, type RasJob } from "../../../fakes/ras/render.mjs";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { rasJobServices } from "../../../helpers/ras-service.js";
import { isRoot, NOBODY } from "../../../helpers/staged-build.js";

const service = rasJobServices();
const watches: RasWatch[] = [];
afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

/** Ranks 0-1 here (pid `here`), 2-4 on 10.0.0.2; rank 3 at AllReduce 39; rank 4's process (10.0.0.2:5154) dead. */
function job(here: number): RasJob {
  const all: RasJob = {
    version: "2.29.7",
    comms: [
      {
        hash: "0x49bbd7790311d5eb",
        size: 5,
        ranks: [0, 1, 2, 3, 4].map((r) => ({
          rank: r,
          host: r < 2 ? "127.0.0.1" : "10.0.0.2",
          pid: r < 2 ? here : 5150 + r,
          cudaDev: r % 2,
          counts: { AllReduce: r === 3 ? 39 : 40 },
        })),
      },
    ],
  };
  return withMissing(all, 0, [4], { dead: true });
}

function watch(port: number, owner: RasOwnerSource, clock: { t: number }): { w: RasWatch; logs: () => Array<Record<string, unknown>> } {
  const { logger, lines } = memoryLogger("info");
  const w = new RasWatch(
    {
      address: { host: "127.0.0.1", port },
      intervalMs: 30_000,
      now: () => clock.t,
      log: logger,
      deadlineMs: 3000,
      progress: { hangThresholdMs: 60_000, gapFactor: 2, maxThresholdMs: 30 * 60_000 },
      owner,
    },
    () => 0.5,
  );
  watches.push(w);
  return { w, logs: lines };
}

async function tickAt(w: RasWatch, clock: { t: number }, t: number): Promise<void> {
  clock.t = t;
  w.tick();
  await w.settled();
}

const refusals = (logs: () => Array<Record<string, unknown>>): Array<Record<string, unknown>> =>
  logs().filter((l) => String(l.msg).includes("ignored, not this node's evidence"));

describe.skipIf(!isRoot)("RasWatch believes only a rank's socket", () => {
  it("no known rank: counted, logged once, never asked for the report; the rank's pid known: believed; unknown again: forgotten", async () => {
    const s = await service(job(0), { user: NOBODY });
    const pid = s.child.pid ?? -1;
    await s.setJob(job(pid));
    let pids: number[] = [];
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, { procfsRoot: () => "/proc", rankPids: () => pids }, clock);

    for (const t of [0, 30_000, 60_000, 90_000]) await tickAt(w, clock, t);
    let snap = w.snapshot();
    expect(snap.queries.get("untrusted")).toBe(4);
    expect(snap.queries.get("ok")).toBe(0);
    expect(snap.report).toBeUndefined();
    expect(snap.dead).toEqual([]);
    expect(snap.progress).toEqual([]);
    expect(snap.monitor).toBe("off");
    // Refused at the greeting: the forged report is never asked for.
    expect(s.commands()).toEqual(Array.from({ length: 4 }, () => "CLIENT PROTOCOL 2"));
    const [refused, ...more] = refusals(logs);
    expect(more).toEqual([]);
    expect(refused?.level).toBe(40);
    expect(refused?.msg).toContain("its socket belongs to uid 65534, not root, and the followed logs name no live NCCL rank process on this node");
    expect(refused?.socket_uid).toBe(65534);

    // The same service, now a process of a rank the logs know: believed, and followed in monitor mode.
    pids = [process.pid, pid];
    await tickAt(w, clock, 120_000);
    snap = w.snapshot();
    expect(snap.queries.get("ok")).toBe(1);
    expect(snap.report?.version).toBe("2.29.7");
    expect(snap.dead).toEqual(["10.0.0.2:5154"]);
    expect(logs().find((l) => String(l.msg).includes("answers"))?.socket_owner).toBe(`held by rank process ${pid}`);
    await expect.poll(() => w.snapshot().monitor).toBe("subscribed");
    await s.emit({ type: "PEER_DEAD", peer: { host: "10.0.0.2", pid: 5152, cudaDevs: [0] } });
    await expect.poll(() => w.snapshot().dead).toEqual(["10.0.0.2:5154", "10.0.0.2:5152"]);
    await w.settled();

    // The rank's process is no longer known (it ended, as the logs say): what it said goes, and the
    // refusal is a new episode, logged once more.
    pids = [process.pid];
    const untrustedBefore = w.snapshot().queries.get("untrusted") ?? 0;
    await tickAt(w, clock, 150_000);
    snap = w.snapshot();
    expect(snap.queries.get("untrusted")).toBe(untrustedBefore + 1);
    expect(snap.report).toBeUndefined();
    expect(snap.dead).toEqual([]);
    expect(snap.monitor).toBe("off");
    expect(refusals(logs)).toHaveLength(2);
    expect(refusals(logs)[1]?.msg).toContain(
      "its socket (uid 65534) is held by none of the 1 live NCCL rank process the followed logs name on this node, nor by their user",
    );
  });

  it("a monitor subscription gets the same check: refused before MONITOR is sent, and counted", async () => {
    const s = await service(job(0), { user: NOBODY });
    const pid = s.child.pid ?? -1;
    await s.setJob(job(pid));
    // Known for the status query, unknown by the time the monitor connects.
    let calls = 0;
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, { procfsRoot: () => "/proc", rankPids: () => (calls++ === 0 ? [pid] : []) }, clock);
    await tickAt(w, clock, 0);
    expect(w.snapshot().queries.get("ok")).toBe(1);
    await expect.poll(() => w.snapshot().queries.get("untrusted")).toBe(1);
    expect(calls).toBe(2);
    expect(w.snapshot().monitor).toBe("off");
    expect(s.commands()).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "STATUS", "CLIENT PROTOCOL 2"]);
    expect(refusals(logs).map((l) => String(l.msg))).toEqual([
      `nccl: NCCL RAS monitor subscription at 127.0.0.1:${s.port} ignored, not this node's evidence: its socket belongs to uid 65534, not root, and the followed logs name no live NCCL rank process on this node (counted in ringwatch_nccl_ras_queries_total{result="untrusted"}; docs/nccl.md, "Who may answer")`,
    ]);
  });

  it("a procfs where the tables cannot be found: nothing is believed (unseen)", async () => {
    const s = await service(job(0), { user: NOBODY });
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, { procfsRoot: () => "/nonexistent-procfs", rankPids: () => [s.child.pid ?? -1] }, clock);
    await tickAt(w, clock, 0);
    expect(w.snapshot().queries.get("untrusted")).toBe(1);
    expect(refusals(logs)[0]?.msg).toContain("is not in /nonexistent-procfs/net/tcp or tcp6");
  });
});
