/**
 * Flight Recorder, live, end to end: the built agent, a job known from NCCL RAS alone (the fake RAS
 * service: rank 12 on another node stops), and two fake PyTorch ranks here that own their
 * debug-info FIFOs and dump the real H100 Flight Recorder dumps when written to. The RAS hang
 * makes the agent poke the pipes; /metrics then carries the dumps' verdict, and the log names the
 * rank behind with the frames.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RasJob } from "../fakes/ras/render.mjs";
import { eventually, fakesDir, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { startRasJob, type RasJobService } from "../helpers/ras-service.js";
import { tempDir } from "./env.js";

let agent: RunningAgent | undefined;
let ras: RasJobService | undefined;
const ranks: ChildProcess[] = [];

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await ras?.stop();
  ras = undefined;
  for (const r of ranks.splice(0)) r.kill("SIGTERM");
});

/** Ranks 0-1 here (this test's pid: alive), 2-3 on 10.0.0.2; rank 3 one AllReduce behind. */
const job: RasJob = {
  version: "2.29.7",
  comms: [
    {
      hash: "0x5555000011112222",
      size: 4,
      ranks: [0, 1, 2, 3].map((r) => ({
        rank: r,
        host: r < 2 ? "127.0.0.1" : "10.0.0.2",
        pid: r < 2 ? process.pid : 6000 + r,
        cudaDev: r % 2,
        counts: { AllReduce: r === 3 ? 82 : 83 },
      })),
    },
  ],
};

describe("Flight Recorder, live, end to end", () => {
  it("a RAS hang pokes the ranks' pipes; the dumps' verdict is on /metrics and in the log", async () => {
    const dir = tempDir();
    for (const rank of [0, 1]) {
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
          join(fixturesDir, `fr/h100-2026-11-24/nccl_trace_rank_${rank}`),
          "--poll-ms",
          "1000",
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      ranks.push(child);
      let out = "";
      child.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
      await eventually(() => out.includes("ready"), 10_000);
    }
    ras = await startRasJob(dir, job);
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${join(dir, "logs")}`,
      "--collector.nccl.hang-threshold=3s",
      `--collector.nccl.ras-addr=127.0.0.1:${ras.port}`,
      "--collector.nccl.ras-settle=1ms", // the fake service is ready at once
      "--collector.nccl.ras-poll-known-defective", // its NCCL version is in the defect table
      "--collector.nccl.ras-interval=1s",
      `--collector.nccl.flight-recorder.dump=${join(dir, "nccl_trace_rank_")}`,
      `--collector.nccl.flight-recorder.pipe=${join(dir, "pipe_")}`,
    ]);
    const a = agent;
    const t0 = Date.now();
    const text = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, 'ringwatch_nccl_fr_rank_behind{process_group="0",rank="1"}') === 1 ? t : undefined;
    }, 45_000);
    const seconds = (Date.now() - t0) / 1000;
    // Threshold 3 s + a 1 s query + the 5 s evaluation that pokes + a dump within 1 s + two 5 s looks.
    expect(seconds).toBeLessThan(30);
    expect(sample(text, 'ringwatch_nccl_hang_suspected{comm_id="0x5555000011112222"}')).toBe(1);
    expect(sample(text, 'ringwatch_nccl_fr_pokes_total{result="ok"}')).toBe(2);
    expect(sample(text, 'ringwatch_nccl_fr_dumps_total{result="ok"}')).toBe(2);
    expect(sample(text, 'ringwatch_nccl_fr_last_collective{process_group="0",rank="0",state="enqueued"}')).toBe(83);
    expect(sample(text, 'ringwatch_nccl_fr_last_collective{process_group="0",rank="1",state="enqueued"}')).toBe(81);
    const line = a.logs().find((l) => l.includes("nccl: Flight Recorder:"));
    expect(line).toContain("rank 1 never enqueued collective #82 (all_reduce), which rank 0 waits in");
    expect(line).toContain("/opt/job/job.py:20 <module>");
    process.stdout.write(`flight recorder e2e: RAS hang to Flight Recorder verdict on /metrics in ${seconds.toFixed(1)} s\n`);
  });
});
