/**
 * Live Python stacks from the other evidence sources, end to end: a production job that writes no
 * COLL line, only NCCL RAS (test/fakes/nccl-ras --job: it runs as root, as a job in a container
 * usually does, so its socket is verified as root's). Ranks 0-7 are on this node: ranks 0-6 are
 * root's processes (real `sleep` children), rank 7's pid is a process of another user (uid 65534).
 * RAS alone calls the hang (rank 12, on another node, is behind): the built agent takes the stacks
 * of the 7 root processes once by the fake py-spy (test/fakes/py-spy), never rank 7's (counted
 * `untrusted`, logged once), and publishes the culprit keyed by comm_id.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RasJob } from "../fakes/ras/render.mjs";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { startRasJob, type RasJobService } from "../helpers/ras-service.js";
import { fixture, tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
let agent: RunningAgent | undefined;
let ras: RasJobService | undefined;
let procs: ChildProcess[] = [];
const asRoot = process.getuid?.() === 0;

afterEach(async () => {
  for (const p of procs) p.kill("SIGTERM");
  procs = [];
  await agent?.stop();
  agent = undefined;
  await ras?.stop();
  ras = undefined;
});

function sleeper(uid?: number): ChildProcess {
  const p = spawn("sleep", ["300"], { stdio: "ignore", ...(uid !== undefined ? { uid, gid: uid } : {}) });
  procs.push(p);
  return p;
}

/** Ranks 0-7 here with `pids`, 8-15 on 10.0.0.2; rank 12 at AllReduce `behindAt`. */
function job(pids: readonly number[], top: number, behindAt: number): RasJob {
  return {
    version: "2.29.7",
    comms: [
      {
        hash: COMM,
        size: 16,
        ranks: Array.from({ length: 16 }, (_, r) => ({
          rank: r,
          host: r < 8 ? "127.0.0.1" : "10.0.0.2",
          pid: r < 8 ? (pids[r] as number) : 5140 + r,
          cudaDev: r % 8,
          nvmlDev: r % 8,
          counts: { Broadcast: 1, Reduce: 0, AllGather: 7, ReduceScatter: 0, AllReduce: r === 12 ? behindAt : top },
        })),
      },
    ],
  };
}

describe.skipIf(!asRoot)("live Python stacks from NCCL RAS alone", () => {
  it("a RAS-only hang: the stacks of this node's root processes taken once; another user's pid RAS names never asked", async () => {
    const dir = tempDir();
    const dumps = tempDir("rw-pyspy-");
    const ranks = [...Array.from({ length: 7 }, () => sleeper()), sleeper(65534)];
    const pids = ranks.map((p) => p.pid as number);
    const collective = readFileSync(fixture("stacks/02-pyspy-accelerate-3104-deepspeed-zero3-threads-all-gather.txt"), "utf8");
    writeFileSync(join(dumps, "default.txt"), collective.slice(collective.indexOf("# [turn 5")));
    writeFileSync(join(dumps, `${pids[3]}.txt`), readFileSync(fixture("stacks/01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    const callLog = join(dumps, "calls");
    const calls = (): string[] => (existsSync(callLog) ? readFileSync(callLog, "utf8").trim().split("\n") : []);
    ras = await startRasJob(dir, job(pids, 40, 39));
    agent = await startAgent(
      [
        "--no-collector.gpu",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        "--no-collector.job",
        `--collector.nccl.path=${dir}`,
        "--collector.nccl.hang-threshold=4s",
        `--collector.nccl.ras-addr=127.0.0.1:${ras.port}`,
        "--collector.nccl.ras-settle=1ms",
        "--collector.nccl.ras-poll-known-defective",
        "--collector.nccl.ras-interval=1s",
        "--collector.nccl.stacks.source=py-spy",
      ],
      { PATH: `${fakesDir}:${process.env.PATH ?? ""}`, FAKE_PYSPY_DUMPS: dumps, FAKE_PYSPY_LOG: callLog },
    );
    const a = agent;
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_nccl_stack_culprit_info").length > 0 ? t : undefined;
    }, 40_000);
    expect(sample(hung, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(1);
    const [series] = samplesOf(hung, "ringwatch_nccl_stack_culprit_info");
    expect(series).toContain(`comm_id="${COMM}"`);
    expect(series).toContain(`rank="3",pid="${pids[3]}"`);
    expect(series).toContain(`source="py-spy",why="outlier"`);
    expect(calls().sort()).toEqual(
      pids
        .slice(0, 7)
        .map((p) => `dump --pid ${p} --nonblocking`)
        .sort(),
    );
    expect(sample(hung, `ringwatch_nccl_stack_collections_total{source="py-spy",result="ok"}`)).toBe(7);
    expect(sample(hung, `ringwatch_nccl_stack_collections_total{source="py-spy",result="untrusted"}`)).toBe(1);
    const refused = a.logs().filter((l) => l.includes("NCCL RAS names here not asked"));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain(String(pids[7]));
    // More evaluations and queries while the hang lasts: nothing asked again.
    const before = a.logs().filter((l) => l.includes(`Python stacks of communicator ${COMM} (`)).length;
    expect(before).toBe(1);
    await new Promise((r) => setTimeout(r, 6000));
    expect(calls()).toHaveLength(7);
    expect(a.logs().filter((l) => l.includes(`Python stacks of communicator ${COMM} (`))).toHaveLength(1);
    expect(a.logs().filter((l) => l.includes("NCCL RAS names here not asked"))).toHaveLength(1);
  }, 90_000);
});
