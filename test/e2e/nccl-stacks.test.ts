/**
 * Live Python stacks end to end: the built agent follows fake ranks' NCCL logs (test/fakes/nccl-rank;
 * rank 5 never enters collective #40, the others wait in it), suspects the hang, and takes the
 * stacks of the 8 rank processes once: from each rank's PyTorch worker server (a real python3
 * process on a real Unix socket, test/fakes/torch-worker-server.py), or from py-spy (the fake,
 * started through collectors/exec.ts, printing real captured dumps). The culprit's frame is logged
 * once and published while the hang lasts; a second episode within the minute is held by the cap;
 * with the source off nothing is started.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { fixture, tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
let procs: ChildProcess[] = [];
let agent: RunningAgent | undefined;

afterEach(async () => {
  for (const p of procs) p.kill("SIGTERM");
  procs = [];
  await agent?.stop();
  agent = undefined;
});

/** 8 ranks of COMM: rank 5 never enters #40, the others enter it and wait. */
function startRanks(dir: string): ChildProcess[] {
  const started = Array.from({ length: 8 }, (_, r) =>
    spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), "8", COMM], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100", ...(r === 5 ? { FAKE_RANK_STOP_BEFORE: "40" } : { FAKE_RANK_STALL_AFTER: "40" }) },
      stdio: "ignore",
    }),
  );
  procs.push(...started);
  return started;
}

async function stopRanks(rs: ChildProcess[]): Promise<void> {
  await Promise.all(rs.map((r) => new Promise((res) => (r.exitCode !== null || r.signalCode !== null ? res(null) : (r.once("exit", res), r.kill("SIGTERM"))))));
}

function ncclOnly(dir: string): string[] {
  return [
    "--no-collector.gpu",
    "--no-collector.infiniband",
    "--no-collector.gdr",
    "--no-collector.mtu",
    "--no-collector.job",
    `--collector.nccl.path=${dir}`,
    "--collector.nccl.hang-threshold=4s",
    "--no-collector.nccl.ras",
  ];
}

/** The fake py-spy's dumps: MainThread in DeepSpeed's all_gather_coalesced for every pid, fairseq's data loader for `culprit`. */
function pyspyDumps(culprit: number | undefined): { env: NodeJS.ProcessEnv; calls: () => string[]; dir: string } {
  const dir = tempDir("rw-pyspy-");
  const collective = readFileSync(fixture("stacks/02-pyspy-accelerate-3104-deepspeed-zero3-threads-all-gather.txt"), "utf8");
  writeFileSync(join(dir, "default.txt"), collective.slice(collective.indexOf("# [turn 5")));
  if (culprit !== undefined) writeFileSync(join(dir, `${culprit}.txt`), readFileSync(fixture("stacks/01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
  const log = join(dir, "calls");
  return {
    dir,
    env: { PATH: `${fakesDir}:${process.env.PATH ?? ""}`, FAKE_PYSPY_DUMPS: dir, FAKE_PYSPY_LOG: log },
    calls: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []),
  };
}

const culpritLines = (a: RunningAgent): string[] => a.logs().filter((l) => l.includes("Python stacks of communicator"));

describe("live Python stacks, end to end", () => {
  it("worker servers: the rank behind's frame is logged once and published while the hang lasts, then gone", async () => {
    const logs = tempDir();
    const socks = tempDir("rw-socks-");
    mkdirSync(join(socks, "site-packages"));
    // Each rank's worker server, a real python3 process on rank<N>.sock: rank 5 in its data loader.
    await Promise.all(
      Array.from({ length: 8 }, (_, r) => {
        const p = spawn(
          "python3",
          [join(fakesDir, "torch-worker-server.py"), join(socks, `rank${r}.sock`), join(socks, "site-packages"), r === 5 ? "dataloader" : "collective"],
          {
            stdio: ["ignore", "pipe", "inherit"],
          },
        );
        procs.push(p);
        return new Promise((res) => p.stdout?.once("data", res));
      }),
    );
    agent = await startAgent([...ncclOnly(logs), `--collector.nccl.stacks.worker-socket=${join(socks, "rank{rank}.sock")}`]);
    const a = agent;
    const ranks = startRanks(logs);
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_nccl_stack_culprit_info").length > 0 ? t : undefined;
    }, 40_000);
    expect(sample(hung, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(1);
    const [series] = samplesOf(hung, "ringwatch_nccl_stack_culprit_info");
    expect(series).toContain(`comm_id="${COMM}"`);
    expect(series).toContain(`rank="5"`);
    expect(series).toContain(`pid="${ranks[5]?.pid}"`);
    // The job's own innermost frame, its file as the job has it (job code keeps its absolute path).
    expect(series).toContain(`function="next_batch",file="${join(socks, "train.py")}",line="2"`);
    expect(series).toContain(`source="worker",why="behind"`);
    expect(sample(hung, `ringwatch_nccl_stack_collections_total{source="worker",result="ok"}`)).toBe(8);
    await eventually(() => culpritLines(a).length > 0, 10_000);
    expect(culpritLines(a)).toHaveLength(1);
    expect(culpritLines(a)[0]).toMatch(/rank 5, the rank behind, is at .*train\.py:2 next_batch -> .*queue\.py:\d+ get/);
    await stopRanks(ranks);
    const after = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 0 ? t : undefined;
    }, 20_000);
    // The hang is over once an evaluation has seen it end: the culprit goes with the episode.
    await eventually(async () => samplesOf(await a.scrape(), "ringwatch_nccl_stack_culprit_info").length === 0, 15_000);
    expect(sample(after, `ringwatch_nccl_stack_collections_total{source="worker",result="ok"}`)).toBe(8);
    expect(culpritLines(a)).toHaveLength(1);
  }, 90_000);

  it("py-spy: the stacks taken once; a second hang within the minute is held by the cap; py-spy not started again", async () => {
    const logs = tempDir();
    const first = pyspyDumps(undefined);
    agent = await startAgent([...ncclOnly(logs), "--collector.nccl.stacks.source=py-spy", "--collector.nccl.stacks.max-per-minute=8"], first.env);
    const a = agent;
    const ranks = startRanks(logs);
    writeFileSync(join(first.dir, `${ranks[5]?.pid}.txt`), readFileSync(fixture("stacks/01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_nccl_stack_culprit_info").length > 0 ? t : undefined;
    }, 40_000);
    const [series] = samplesOf(hung, "ringwatch_nccl_stack_culprit_info");
    expect(series).toContain(`rank="5"`);
    expect(series).toContain(`function="__next__",file="fairseq/data/iterators.py",line="648",innermost="threading.py:302 wait",source="py-spy",why="behind"`);
    expect(first.calls().sort()).toEqual(ranks.map((r) => `dump --pid ${r.pid} --nonblocking`).sort());
    expect(culpritLines(a)).toHaveLength(1);
    // The hang ends; a new one begins within the minute: its 8 collections would pass the cap of 8.
    await stopRanks(ranks);
    await eventually(async () => samplesOf(await a.scrape(), "ringwatch_nccl_stack_culprit_info").length === 0, 20_000);
    startRanks(logs);
    await eventually(async () => sample(await a.scrape(), `ringwatch_nccl_stack_collections_total{source="py-spy",result="rate_limited"}`) === 1, 40_000);
    expect(first.calls()).toHaveLength(8);
    expect(a.logs().filter((l) => l.includes("collections would pass --collector.nccl.stacks.max-per-minute"))).toHaveLength(1);
    expect(samplesOf(await a.scrape(), "ringwatch_nccl_stack_culprit_info")).toEqual([]);
  }, 120_000);

  it("source off: the hang is called, no stack is taken, py-spy never started", async () => {
    const logs = tempDir();
    const fake = pyspyDumps(undefined);
    agent = await startAgent([...ncclOnly(logs), "--collector.nccl.stacks.source=off"], fake.env);
    const a = agent;
    startRanks(logs);
    // The evaluation that logs the hang is the one that would start a collection.
    await eventually(() => a.logs().some((l) => l.includes("hang suspected on communicator")), 40_000);
    const t = await a.scrape();
    expect(sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(1);
    expect(samplesOf(t, "ringwatch_nccl_stack_culprit_info")).toEqual([]);
    expect(samplesOf(t, "ringwatch_nccl_stack_collections_total")).toEqual([]);
    expect(fake.calls()).toEqual([]);
    expect(culpritLines(a)).toEqual([]);
  }, 90_000);
});
