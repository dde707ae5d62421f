/**
 * The nccl collector end to end: the built agent follows the logs that real rank processes write,
 * and /metrics names the hung communicator and the rank behind; the verdict drops when the job ends.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { startRasService, type RasService } from "../helpers/ras-service.js";
import { oneRankBehind, rasText } from "../helpers/ras-text.js";
import { tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
let ranks: ChildProcess[] = [];
let agent: RunningAgent | undefined;
let ras: RasService | undefined;

afterEach(async () => {
  await ras?.stop();
  ras = undefined;
  for (const r of ranks) r.kill("SIGTERM");
  ranks = [];
  await agent?.stop();
  agent = undefined;
});

/** Ranks 0..n-1 of a communicator of `nranks` (the others run on other nodes). */
function startRanks(dir: string, n: number, env: (rank: number) => NodeJS.ProcessEnv, nranks = n): ChildProcess[] {
  ranks = Array.from({ length: n }, (_, r) =>
    spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), String(nranks), COMM], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100", ...env(r) },
      stdio: "ignore",
    }),
  );
  return ranks;
}

describe("nccl collector end to end", () => {
  it("a rank that never enters collective #40: hang and that rank behind on /metrics; the verdict drops when the job ends", async () => {
    const dir = tempDir();
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      "--collector.nccl.hang-threshold=4s",
    ]);
    const a = agent;
    const t0 = Date.now();
    startRanks(dir, 8, (r) => (r === 5 ? { FAKE_RANK_STOP_BEFORE: "40" } : { FAKE_RANK_STALL_AFTER: "40" }));
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
    }, 30_000);
    const ttv = Date.now() - t0;
    // 40 collectives at 100 ms (~4 s), then the 4 s threshold: the verdict lands a few seconds later.
    expect(ttv).toBeGreaterThan(6000);
    expect(sample(hung, `ringwatch_nccl_rank_behind{comm_id="${COMM}",rank="5"}`)).toBe(1);
    expect(samplesOf(hung, "ringwatch_nccl_rank_behind").filter((l) => l.endsWith(" 1"))).toHaveLength(1);
    expect(sample(hung, `ringwatch_nccl_rank_collectives_total{comm_id="${COMM}",rank="0"}`)).toBe(40);
    expect(sample(hung, `ringwatch_nccl_rank_collectives_total{comm_id="${COMM}",rank="5"}`)).toBe(39);
    expect(samplesOf(hung, "ringwatch_nccl_rank_info")).toHaveLength(8);
    expect(samplesOf(hung, "ringwatch_nccl_rank_info").every((l) => l.includes('nccl_version="2.21.5"') && l.includes('nranks="8"'))).toBe(true);
    // every() holds on an empty list: the family must have series before their labels prove anything.
    const transports = samplesOf(hung, "ringwatch_nccl_transport_info");
    expect(transports.length).toBeGreaterThan(0);
    expect(transports.filter((l) => !l.includes('net="IB",gdr="enabled"'))).toEqual([]);
    expect(sample(hung, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
    // The verdict is also logged once, by the evaluation that runs every 5 s.
    await eventually(
      () => Promise.resolve(a.logs().some((l) => l.includes("hang suspected on communicator") && l.includes("rank 5 never entered")) ? true : undefined),
      10_000,
    );
    expect(a.logs().filter((l) => l.includes("hang suspected on communicator"))).toHaveLength(1);

    for (const r of ranks) r.kill("SIGTERM");
    await Promise.all(ranks.map((r) => new Promise((res) => (r.exitCode !== null ? res(null) : r.once("exit", res)))));
    const after = await a.scrape(); // processes gone: the verdict drops at once
    expect(sample(after, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(0);
    expect(samplesOf(after, "ringwatch_nccl_rank_behind").filter((l) => l.endsWith(" 1"))).toEqual([]);
  });

  it("the rank behind runs on another node: every local rank waits in #40, and NCCL RAS names rank 12 on 10.0.0.2", async () => {
    const dir = tempDir();
    // What NCCL's RAS service of this job answers: 15 of 16 ranks launched AllReduce #40.
    const report = rasText({
      nodes: 2,
      ranksPerNode: 8,
      warnings: oneRankBehind({ hash: COMM.slice(2), op: "AllReduce", ranks: 16, top: 40, rank: 12, gpu: 4, pid: 5150, node: "10.0.0.2" }),
    });
    ras = await startRasService(dir, report);
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
      "--collector.nccl.ras-interval=2s",
    ]);
    const a = agent;
    startRanks(dir, 8, () => ({ FAKE_RANK_STALL_AFTER: "40" }), 16);
    const named = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_ras_rank_behind{comm_id="${COMM}",rank="12",process="10.0.0.2:5150"}`) === 1 ? t : undefined;
    }, 40_000);
    expect(sample(named, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(1);
    // This node alone cannot tell: all 8 of its ranks entered #40.
    expect(samplesOf(named, "ringwatch_nccl_rank_behind").filter((l) => l.endsWith(" 1"))).toEqual([]);
    // A rank is behind, not a mismatch of collectives (the ranks did not take different code paths).
    expect(samplesOf(named, "ringwatch_nccl_ras_collective_mismatch")).toEqual([]);
    expect(sample(named, 'ringwatch_nccl_ras_findings{kind="rank_behind"}')).toBe(1);
    // The same mismatch across queries that span the 4 s threshold: asked every 2 s, from the start.
    const asked = sample(named, 'ringwatch_nccl_ras_queries_total{result="ok",reason="periodic"}') ?? 0;
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(sample(named, `ringwatch_nccl_hang_evidence{comm_id="${COMM}",source="ras"}`)).toBe(1);
    expect(sample(named, "ringwatch_nccl_ras_last_report_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(ras.commands().slice(0, 4)).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "STATUS"]);
    await eventually(
      () => Promise.resolve(a.logs().some((l) => l.includes("rank 12 (process 5150 on 10.0.0.2, GPU 4) never entered AllReduce #40")) ? true : undefined),
      5_000,
    );

    for (const r of ranks) r.kill("SIGTERM");
    await Promise.all(ranks.map((r) => new Promise((res) => (r.exitCode !== null ? res(null) : r.once("exit", res)))));
    const after = await a.scrape(); // the job ended: the hang and what RAS said about it go at once
    expect(sample(after, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(0);
    expect(samplesOf(after, "ringwatch_nccl_ras_rank_behind")).toEqual([]);
    expect(samplesOf(after, "ringwatch_nccl_ras_collective_mismatch")).toEqual([]);
  });

  it("a healthy job raises nothing and every line is read", async () => {
    const dir = tempDir();
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      "--collector.nccl.hang-threshold=3s",
    ]);
    const a = agent;
    startRanks(dir, 4, () => ({}));
    await new Promise((r) => setTimeout(r, 6000));
    const t = await a.scrape();
    expect(sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(0);
    const counts = samplesOf(t, "ringwatch_nccl_rank_collectives_total").map((l) => Number(l.split(" ")[1]));
    expect(counts).toHaveLength(4);
    expect(Math.min(...counts)).toBeGreaterThan(30);
    expect(sample(t, "ringwatch_nccl_log_files")).toBe(4);
  });
});
