/**
 * The nccl collector end to end: the built agent follows the logs that real rank processes write,
 * and /metrics names the hung communicator and the rank behind; the verdict drops when the job ends.
 * The series budget (docs/metrics.md, "NCCL series budget"): a healthy communicator has its own
 * series (hang_suspected 0, its slowest rank's progress) and none of a suspect one's (its threshold,
 * its ranks' series), which come with a suspicion (here, the hang) or with
 * --collector.nccl.rank-series=always.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { startRasService, type RasService } from "../helpers/ras-service.js";
import { oneRankBehind, rasText } from "../helpers/ras-text.js";
import { tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
const COMM2 = "0x5d1c0ffee0ddba11";
let ranks: ChildProcess[] = [];
let agent: RunningAgent | undefined;
let agent2: RunningAgent | undefined;
let ras: RasService | undefined;

afterEach(async () => {
  await ras?.stop();
  ras = undefined;
  for (const r of ranks) r.kill("SIGTERM");
  ranks = [];
  await agent?.stop();
  agent = undefined;
  await agent2?.stop();
  agent2 = undefined;
});

/** Ranks 0..n-1 of a communicator of `nranks` (the others run on other nodes); added to `ranks`. */
function startRanks(dir: string, n: number, env: (rank: number) => NodeJS.ProcessEnv, nranks = n, comm = COMM): ChildProcess[] {
  const started = Array.from({ length: n }, (_, r) =>
    spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), String(nranks), comm], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100", ...env(r) },
      stdio: "ignore",
    }),
  );
  ranks.push(...started);
  return started;
}

const exited = (rs: ChildProcess[]): Promise<unknown[]> =>
  Promise.all(rs.map((r) => new Promise((res) => (r.exitCode !== null || r.signalCode !== null ? res(null) : r.once("exit", res)))));

/** The sorted label values of `label` over a family's series. */
const labelValues = (text: string, family: string, label: string): string[] =>
  samplesOf(text, family)
    .map((l) => new RegExp(`[{,]${label}="([^"]*)"`).exec(l)?.[1] ?? "")
    .sort();

const pidsOf = (rs: ChildProcess[]): string[] => rs.map((r) => String(r.pid)).sort();

/** The families of suspect communicators and their ranks, which a healthy communicator does not have by default. */
const SUSPECT_FAMILIES = [
  "ringwatch_nccl_hang_threshold_seconds",
  "ringwatch_nccl_rank_info",
  "ringwatch_nccl_rank_progress",
  "ringwatch_nccl_rank_last_progress_timestamp_seconds",
];
/** The verdicts, absent where they do not fire. */
const VERDICT_FAMILIES = [
  "ringwatch_nccl_rank_behind",
  "ringwatch_nccl_straggler",
  "ringwatch_nccl_collective_mismatch",
  "ringwatch_nccl_hang_evidence",
  "ringwatch_nccl_bandwidth_drop",
];

/** The nccl collector alone, following `dir`, with a short hang threshold. */
function ncclOnly(dir: string, threshold: string): string[] {
  return [
    "--no-collector.gpu",
    "--no-collector.infiniband",
    "--no-collector.gdr",
    "--no-collector.mtu",
    `--collector.nccl.path=${dir}`,
    `--collector.nccl.hang-threshold=${threshold}`,
  ];
}

describe("nccl collector end to end", () => {
  it("a rank that never enters collective #40: hang and that rank behind on /metrics; the verdict drops when the job ends", async () => {
    const dir = tempDir();
    agent = await startAgent(ncclOnly(dir, "4s"));
    const a = agent;
    const t0 = Date.now();
    const started = startRanks(dir, 8, (r) => (r === 5 ? { FAKE_RANK_STOP_BEFORE: "40" } : { FAKE_RANK_STALL_AFTER: "40" }));
    // Healthy while the ranks move: the communicator's own series, no per-rank ones.
    const moving = await eventually(async () => {
      const t = await a.scrape();
      return (sample(t, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`) ?? 0) >= 10 ? t : undefined;
    }, 30_000);
    expect(samplesOf(moving, "ringwatch_nccl_hang_suspected")).toEqual([`ringwatch_nccl_hang_suspected{comm_id="${COMM}"} 0`]);
    expect(samplesOf(moving, "ringwatch_nccl_rank_info")).toEqual([]);
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
    }, 30_000);
    const ttv = Date.now() - t0;
    // 40 collectives at 100 ms (~4 s), then the 4 s threshold: the verdict lands a few seconds later.
    expect(ttv).toBeGreaterThan(6000);
    expect(samplesOf(hung, "ringwatch_nccl_rank_behind")).toEqual([`ringwatch_nccl_rank_behind{comm_id="${COMM}",rank="5"} 1`]);
    // Collectives entered, as NCCL numbers them (opCount + 1; the fake rank prints opCount n for its
    // nth collective): rank 0 entered #40 (opCount 0x28), rank 5 stopped after #39.
    expect(sample(hung, `ringwatch_nccl_rank_progress{comm_id="${COMM}",rank="0"}`)).toBe(41);
    expect(sample(hung, `ringwatch_nccl_rank_progress{comm_id="${COMM}",rank="5"}`)).toBe(40);
    expect(sample(hung, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`)).toBe(40);
    // The hung communicator's ranks are named with the hang: one rank_info per rank, with its process.
    const info = samplesOf(hung, "ringwatch_nccl_rank_info");
    expect(info).toHaveLength(8);
    expect(info.every((l) => l.includes('nccl_version="2.21.5"') && l.includes('nranks="8"'))).toBe(true);
    for (const [r, p] of started.entries())
      expect(
        info.filter((l) => l.includes(`,rank="${r}",`) && l.includes(`pid="${p.pid}"`)),
        `rank ${r}`,
      ).toHaveLength(1);
    // Found on the node (in this PID namespace, so at the pid they logged): host_pid, as ringwatch_nccl_process_job_info's.
    expect(labelValues(hung, "ringwatch_nccl_rank_info", "host_pid")).toEqual(pidsOf(started));
    expect(samplesOf(hung, "ringwatch_nccl_rank_progress")).toHaveLength(8);
    expect(samplesOf(hung, "ringwatch_nccl_rank_last_progress_timestamp_seconds")).toHaveLength(8);
    expect(sample(hung, `ringwatch_nccl_hang_threshold_seconds{comm_id="${COMM}"}`)).toBeGreaterThanOrEqual(4);
    // How each rank process reaches other nodes: one series per process (pid), IB with GPUDirect RDMA.
    const transports = samplesOf(hung, "ringwatch_nccl_process_transport_info");
    expect(labelValues(hung, "ringwatch_nccl_process_transport_info", "pid")).toEqual(pidsOf(started));
    expect(labelValues(hung, "ringwatch_nccl_process_transport_info", "host_pid")).toEqual(pidsOf(started));
    expect(transports.filter((l) => !l.includes('net="IB",gdr="enabled"'))).toEqual([]);
    expect(sample(hung, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
    expect(sample(hung, "ringwatch_nccl_series_dropped")).toBe(0);
    // The verdict is also logged once, by the evaluation that runs every 5 s.
    await eventually(
      () => Promise.resolve(a.logs().some((l) => l.includes("hang suspected on communicator") && l.includes("rank 5 never entered")) ? true : undefined),
      10_000,
    );
    expect(a.logs().filter((l) => l.includes("hang suspected on communicator"))).toHaveLength(1);

    for (const r of ranks) r.kill("SIGTERM");
    await exited(ranks);
    const after = await a.scrape(); // processes gone: the verdict drops at once, and the per-rank series with it
    expect(sample(after, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(0);
    expect(samplesOf(after, "ringwatch_nccl_rank_behind")).toEqual([]);
    for (const f of SUSPECT_FAMILIES) expect(samplesOf(after, f), f).toEqual([]);
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
      ...ncclOnly(dir, "4s"),
      `--collector.nccl.ras-addr=127.0.0.1:${ras.port}`,
      "--collector.nccl.ras-settle=1ms", // the fake service is ready at once
      "--collector.nccl.ras-poll-known-defective", // its NCCL version is in the defect table
      "--collector.nccl.ras-interval=2s",
    ]);
    const a = agent;
    const started = startRanks(dir, 8, () => ({ FAKE_RANK_STALL_AFTER: "40" }), 16);
    // RAS's report is the job's from the start: it may call the hang before every local rank's log has
    // reached #40 on a busy machine. Wait for both, then look at one scrape.
    const named = await eventually(async () => {
      const t = await a.scrape();
      const rasNamed = sample(t, `ringwatch_nccl_ras_rank_behind{comm_id="${COMM}",rank="12",process="10.0.0.2:5150"}`) === 1;
      const logsDone = sample(t, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`) === 41;
      return rasNamed && logsDone && labelValues(t, "ringwatch_nccl_rank_info", "pid").length === started.length ? t : undefined;
    }, 40_000);
    expect(sample(named, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(1);
    // This node alone cannot tell: all 8 of its ranks entered #40 (no rank_behind series: none fires).
    expect(samplesOf(named, "ringwatch_nccl_rank_behind")).toEqual([]);
    expect(sample(named, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`)).toBe(41);
    // The hung communicator's ranks here are named, with their processes.
    expect(labelValues(named, "ringwatch_nccl_rank_info", "pid")).toEqual(pidsOf(started));
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
    agent = await startAgent(ncclOnly(dir, "3s"));
    const a = agent;
    const started = startRanks(dir, 4, () => ({}));
    // Every rank entered more than 30 collectives (over 3 s of the job, the hang threshold).
    const t = await eventually(async () => {
      const t = await a.scrape();
      return (sample(t, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`) ?? 0) > 31 ? t : undefined;
    }, 30_000);
    expect(samplesOf(t, "ringwatch_nccl_hang_suspected")).toEqual([`ringwatch_nccl_hang_suspected{comm_id="${COMM}"} 0`]);
    for (const f of [...VERDICT_FAMILIES, ...SUSPECT_FAMILIES]) expect(samplesOf(t, f), f).toEqual([]);
    expect(labelValues(t, "ringwatch_nccl_process_transport_info", "pid")).toEqual(pidsOf(started));
    expect(sample(t, "ringwatch_nccl_log_files")).toBe(4);

    // Every line is read: once the ranks have ended, the lines read are the lines in the files, and
    // the slowest rank's progress is the last collective the slowest file shows (opCount + 1).
    for (const r of started) r.kill("SIGTERM");
    await exited(started);
    const texts = readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8"));
    expect(texts).toHaveLength(4);
    const lines = texts.reduce((n, x) => n + x.split("\n").length - 1, 0);
    const lastOp = (x: string): number => Math.max(...[...x.matchAll(/opCount ([0-9a-f]+) /g)].map((m) => parseInt(m[1] ?? "", 16)));
    const slowest = Math.min(...texts.map(lastOp)) + 1;
    expect(slowest).toBeGreaterThan(31);
    const read = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, "ringwatch_nccl_log_lines_total") === lines ? t : undefined;
    }, 10_000);
    expect(sample(read, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`)).toBe(slowest);
    expect(labelValues(read, "ringwatch_nccl_hang_suspected", "comm_id")).toEqual([COMM]); // still watched
  });

  it("the per-rank series: none for a healthy job, one hang_suspected 0 per communicator; all of them with --collector.nccl.rank-series=always", async () => {
    const dir = tempDir();
    const flags = ncclOnly(dir, "3s");
    // Two agents follow the same logs: the default (suspect) and always.
    agent = await startAgent(flags);
    agent2 = await startAgent([...flags, "--collector.nccl.rank-series=always"]);
    const [suspect, always] = [agent, agent2];
    // Two healthy communicators: 4 ranks of COMM, 2 of COMM2.
    const first = startRanks(dir, 4, () => ({}));
    const second = startRanks(dir, 2, () => ({}), 2, COMM2);
    const moving = (t: string): boolean =>
      [COMM, COMM2].every((c) => (sample(t, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${c}"}`) ?? 0) > 10) &&
      samplesOf(t, "ringwatch_nccl_process_transport_info").length === 6;
    const [s, t] = await eventually(async () => {
      const s = await suspect.scrape();
      const t = await always.scrape();
      return moving(s) && moving(t) ? [s, t] : undefined;
    }, 30_000);
    const healthy = [`ringwatch_nccl_hang_suspected{comm_id="${COMM}"} 0`, `ringwatch_nccl_hang_suspected{comm_id="${COMM2}"} 0`].sort();
    for (const x of [s, t]) {
      expect(samplesOf(x, "ringwatch_nccl_hang_suspected").sort()).toEqual(healthy);
      for (const f of VERDICT_FAMILIES) expect(samplesOf(x, f), f).toEqual([]);
      expect(labelValues(x, "ringwatch_nccl_process_transport_info", "pid")).toEqual(pidsOf([...first, ...second]));
      expect(sample(x, "ringwatch_nccl_series_dropped")).toBe(0);
    }
    // The default: no per-rank series of a healthy communicator.
    for (const f of SUSPECT_FAMILIES) expect(samplesOf(s, f), f).toEqual([]);
    // always: every rank of every communicator, with its process.
    const info = samplesOf(t, "ringwatch_nccl_rank_info");
    expect(info).toHaveLength(6);
    for (const [comm, rs] of [
      [COMM, first],
      [COMM2, second],
    ] as const) {
      for (const [r, p] of rs.entries()) {
        const one = info.filter((l) => l.includes(`comm_id="${comm}",rank="${r}",nranks="${rs.length}",pid="${p.pid}",`));
        expect(one, `${comm} rank ${r}`).toHaveLength(1);
        expect(one[0]).toContain('nccl_version="2.21.5"');
        expect(sample(t, `ringwatch_nccl_rank_progress{comm_id="${comm}",rank="${r}"}`)).toBeGreaterThan(10);
        expect(sample(t, `ringwatch_nccl_rank_last_progress_timestamp_seconds{comm_id="${comm}",rank="${r}"}`)).toBeGreaterThan(Date.now() / 1000 - 60);
      }
    }
    expect(samplesOf(t, "ringwatch_nccl_rank_progress")).toHaveLength(6);
    expect(samplesOf(t, "ringwatch_nccl_rank_last_progress_timestamp_seconds")).toHaveLength(6);
    expect(labelValues(t, "ringwatch_nccl_hang_threshold_seconds", "comm_id")).toEqual([COMM, COMM2].sort());
  });
});
