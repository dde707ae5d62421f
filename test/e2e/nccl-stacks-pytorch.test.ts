/**
 * Live Python stacks from PyTorch's own lines alone, end to end: a job whose logs hold no COLL line
 * and no RAS (off), only NCCL's version line (which names each rank's process, host:pid) and then
 * the ProcessGroupNCCL watchdog lines of a real 2-rank hang (test/fixtures/nccl-device/h100-2026-11-24:
 * rank 0's watchdog times out in ALLREDUCE SeqNum=82, rank 1 enqueued only up to work 81). The ranks
 * are real `sleep` processes; a third process's log names no process group. The built agent calls
 * PG 0 hung from PyTorch's lines, takes the stacks of the group's two processes once by the fake
 * py-spy (test/fakes/py-spy), never the third's, and publishes the culprit keyed by process_group
 * with comm_id empty, until the ranks' processes exit.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { fixture, tempDir } from "./env.js";

const HOST = hostname().split(".")[0] as string;
let agent: RunningAgent | undefined;
let procs: ChildProcess[] = [];

afterEach(async () => {
  for (const p of procs) p.kill("SIGTERM");
  procs = [];
  await agent?.stop();
  agent = undefined;
});

function sleeper(): ChildProcess {
  const p = spawn("sleep", ["300"], { stdio: "ignore" });
  procs.push(p);
  return p;
}

async function stop(ps: readonly ChildProcess[]): Promise<void> {
  await Promise.all(ps.map((p) => new Promise((res) => (p.exitCode !== null || p.signalCode !== null ? res(null) : (p.once("exit", res), p.kill("SIGTERM"))))));
}

/** A rank's stderr: NCCL's version line (NCCL_DEBUG=VERSION) under its process's host:pid, then PyTorch's lines. */
function rankLog(pid: number, pytorch: string): string {
  return `${HOST}:${pid}:${pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n${pytorch}`;
}

const culpritLines = (a: RunningAgent): string[] => a.logs().filter((l) => l.includes("Python stacks of process group"));

describe("live Python stacks from PyTorch's lines alone", () => {
  it("PG 0 hung by its watchdog lines: its ranks' stacks taken once; the culprit by process_group, comm_id empty; gone when they exit", async () => {
    const logs = tempDir();
    const dumps = tempDir("rw-pyspy-");
    const ranks = [sleeper(), sleeper()];
    const other = sleeper();
    const pids = ranks.map((p) => p.pid as number);
    const collective = readFileSync(fixture("stacks/02-pyspy-accelerate-3104-deepspeed-zero3-threads-all-gather.txt"), "utf8");
    writeFileSync(join(dumps, "default.txt"), collective.slice(collective.indexOf("# [turn 5")));
    writeFileSync(join(dumps, `${pids[1]}.txt`), readFileSync(fixture("stacks/01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    const callLog = join(dumps, "calls");
    const calls = (): string[] => (existsSync(callLog) ? readFileSync(callLog, "utf8").trim().split("\n") : []);
    agent = await startAgent(
      [
        "--no-collector.gpu",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        "--no-collector.job",
        `--collector.nccl.path=${logs}`,
        "--collector.nccl.hang-threshold=4s",
        "--no-collector.nccl.ras",
        "--collector.nccl.stacks.source=py-spy",
      ],
      { PATH: `${fakesDir}:${process.env.PATH ?? ""}`, FAKE_PYSPY_DUMPS: dumps, FAKE_PYSPY_LOG: callLog },
    );
    const a = agent;
    const device = (f: string): string => readFileSync(fixture(`nccl-device/h100-2026-11-24/${f}`), "utf8");
    writeFileSync(join(logs, "rank0-stderr.log"), rankLog(pids[0] as number, device("torch-hang-rank0.log")));
    writeFileSync(join(logs, "rank1-stderr.log"), rankLog(pids[1] as number, device("torch-hang-rank1.log")));
    writeFileSync(join(logs, "other-stderr.log"), rankLog(other.pid as number, ""));
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_nccl_stack_culprit_info").length > 0 ? t : undefined;
    }, 40_000);
    // PyTorch's lines alone: no communicator is known, PG 0 hangs.
    expect(samplesOf(hung, "ringwatch_nccl_hang_suspected")).toEqual([]);
    expect(sample(hung, 'ringwatch_pytorch_hang_suspected{process_group="PG 0 (default_pg)"}')).toBe(1);
    expect(sample(hung, 'ringwatch_pytorch_rank_behind{process_group="PG 0 (default_pg)",rank="1"}')).toBe(1);
    const series = samplesOf(hung, "ringwatch_nccl_stack_culprit_info");
    expect(series).toHaveLength(1);
    expect(series[0]).toContain(`{comm_id="",process_group="PG 0 (default_pg)",rank="1",pid="${pids[1]}",`);
    expect(series[0]).toContain(
      `function="__next__",file="fairseq/data/iterators.py",line="648",innermost="threading.py:302 wait",source="py-spy",why="behind"`,
    );
    expect(calls().sort()).toEqual(pids.map((p) => `dump --pid ${p} --nonblocking`).sort());
    expect(sample(hung, `ringwatch_nccl_stack_collections_total{source="py-spy",result="ok"}`)).toBe(2);
    await eventually(() => culpritLines(a).length > 0, 10_000);
    expect(culpritLines(a)).toHaveLength(1);
    // More evaluations while PyTorch's verdict holds: nothing asked again.
    await new Promise((r) => setTimeout(r, 6000));
    expect(calls()).toHaveLength(2);
    expect(culpritLines(a)).toHaveLength(1);
    // The ranks' processes exit: the group has no live process here, the culprit goes (PyTorch's verdict holds 15 minutes).
    await stop(ranks);
    await eventually(async () => samplesOf(await a.scrape(), "ringwatch_nccl_stack_culprit_info").length === 0, 20_000);
    expect(calls()).toHaveLength(2);
    expect(calls().some((c) => c.includes(`--pid ${other.pid} `))).toBe(false);
  }, 90_000);
});
