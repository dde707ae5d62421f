/**
 * Production mode end to end: a job that writes no COLL line (no log at all here), only NCCL's RAS
 * service (test/fakes/nccl-ras --job, NCCL 2.29.7's protocol and JSON). The built agent asks it,
 * and /metrics carries the hang, the evidence, the rank behind on the other node and the identity
 * of this node's ranks; the verdict drops when the job moves again. The fake runs as root, as a job
 * in a container usually does: that is why its answers are believed with no log naming its process
 * (docs/nccl.md, "Who may answer"; test/security/ras-forge.test.ts checks the other cases).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RasJob } from "../fakes/ras/render.mjs";
import { eventually, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { startRasJob, type RasJobService } from "../helpers/ras-service.js";
import { tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
let agent: RunningAgent | undefined;
let ras: RasJobService | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await ras?.stop();
  ras = undefined;
});

/** Ranks 0-7 here (127.0.0.1, this test's own pid: a live process), 8-15 on 10.0.0.2; rank 12 at AllReduce `behindAt`. */
function job(top: number, behindAt: number): RasJob {
  return {
    version: "2.29.7",
    comms: [
      {
        hash: COMM,
        size: 16,
        ranks: Array.from({ length: 16 }, (_, r) => ({
          rank: r,
          host: r < 8 ? "127.0.0.1" : "10.0.0.2",
          pid: r < 8 ? process.pid : 5140 + r,
          cudaDev: r % 8,
          nvmlDev: r % 8,
          counts: { Broadcast: 1, Reduce: 0, AllGather: 7, ReduceScatter: 0, AllReduce: r === 12 ? behindAt : top },
        })),
      },
    ],
  };
}

describe("production mode: NCCL RAS alone", () => {
  it("rank 12 on the other node stops: the hang, its evidence and the rank behind on /metrics; gone when the job moves again", async () => {
    const dir = tempDir();
    ras = await startRasJob(dir, job(40, 39));
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      "--collector.nccl.hang-threshold=4s",
      `--collector.nccl.ras-addr=127.0.0.1:${ras.port}`,
      "--collector.nccl.ras-settle=1ms", // the fake service is ready at once
      "--collector.nccl.ras-poll-known-defective", // its NCCL version is in the defect table
      "--collector.nccl.ras-interval=1s",
    ]);
    const a = agent;
    const t0 = Date.now();
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
    }, 30_000);
    // Threshold 4 s + one 1 s interval + the 5 s evaluation at most, and the first query at start.
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(sample(hung, `ringwatch_nccl_hang_evidence{comm_id="${COMM}",source="ras"}`)).toBe(1);
    expect(sample(hung, `ringwatch_nccl_ras_rank_behind{comm_id="${COMM}",rank="12",process="10.0.0.2:5152"}`)).toBe(1);
    expect(samplesOf(hung, "ringwatch_nccl_ras_rank_behind")).toHaveLength(1);
    // This node's ranks: none behind (no rank_behind series: none fires), and the identity of all 8
    // from RAS, with the hang (so the alert names the pid).
    expect(samplesOf(hung, "ringwatch_nccl_rank_behind")).toEqual([]);
    const info = samplesOf(hung, "ringwatch_nccl_rank_info");
    expect(info).toHaveLength(8);
    for (let r = 0; r < 8; r++)
      expect(info, `rank ${r}`).toContain(
        `ringwatch_nccl_rank_info{comm_id="${COMM}",rank="${r}",nranks="16",pid="${process.pid}",host_pid="",cuda_dev="${r}",bus_id="",nccl_version="2.29.7"} 1`,
      );
    expect(samplesOf(hung, "ringwatch_nccl_ras_collective_mismatch")).toEqual([]);
    expect(ras.commands().slice(0, 4)).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "STATUS"]);
    await eventually(
      () => Promise.resolve(a.logs().some((l) => l.includes("rank 12 (process 5152 on 10.0.0.2, GPU 4) never entered AllReduce #40")) ? true : undefined),
      10_000,
    );

    // The job moves again: the counts change at the next query and the verdict drops.
    await ras.setJob(job(41, 41));
    const moved = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 0 ? t : undefined;
    }, 10_000);
    expect(samplesOf(moved, "ringwatch_nccl_ras_rank_behind")).toEqual([]);
    expect(samplesOf(moved, "ringwatch_nccl_hang_evidence")).toEqual([]);
    // No longer suspect: its ranks' identity goes with the hang; the communicator stays watched.
    expect(samplesOf(moved, "ringwatch_nccl_rank_info")).toEqual([]);
    expect(samplesOf(moved, "ringwatch_nccl_hang_suspected")).toEqual([`ringwatch_nccl_hang_suspected{comm_id="${COMM}"} 0`]);
  });

  it("monitor mode (NCCL 2.29+): a dead peer is on /metrics at once, long before the next 60 s query", async () => {
    const dir = tempDir();
    ras = await startRasJob(dir, job(40, 40));
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      `--collector.nccl.ras-addr=127.0.0.1:${ras.port}`,
      "--collector.nccl.ras-settle=1ms", // the fake service is ready at once
      "--collector.nccl.ras-poll-known-defective", // its NCCL version is in the defect table
      "--collector.nccl.ras-interval=60s",
      // Asked at once at start: an elected querier's first query would come at a random moment of the 60 s.
      "--collector.nccl.ras-querier=every-node",
    ]);
    const a = agent;
    const r = ras;
    await eventually(async () => (sample(await a.scrape(), "ringwatch_nccl_ras_monitor_subscribed") === 1 ? true : undefined), 15_000);
    const t0 = Date.now();
    await r.emit({ type: "PEER_DEAD", peer: { host: "10.0.0.2", pid: 5152, cudaDevs: [4] } });
    const dead = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_ras_dead_process{process="10.0.0.2:5152"}`) === 1 ? t : undefined;
    }, 10_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(sample(dead, `ringwatch_nccl_ras_monitor_events_total{event="PEER_DEAD"}`)).toBe(1);
    // The event asked for the status at once: two STATUS queries although the interval is 60 s.
    await eventually(() => Promise.resolve(r.commands().filter((c) => c === "STATUS").length === 2 ? true : undefined), 10_000);
    expect(a.logs().some((l) => l.includes("process 10.0.0.2:5152 (GPU 4) of the job is dead (PEER_DEAD)"))).toBe(true);
  });
});
