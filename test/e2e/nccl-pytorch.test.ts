/**
 * PyTorch's own lines, live: the built agent follows a log directory, a job's stderr log gets the
 * watchdog lines of a real hang (test/fixtures/nccl/93: ranks 1 and 2 still wait in BROADCAST
 * #532339, which rank 0 got past), and /metrics says which process group hangs, who is behind and
 * at which work, with no COLL line, no RAS and no dump. The verdict is logged once.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { listFixtures, readCapture } from "../helpers/fixtures.js";
import { tempDir } from "./env.js";

let agent: RunningAgent | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

const capture = (prefix: string): string => {
  const name = listFixtures("nccl", ".log").find((f) => f.startsWith(prefix));
  if (name === undefined) throw new Error(`no fixture ${prefix}`);
  return readCapture(`nccl/${name}`);
};

describe("PyTorch's lines on /metrics", () => {
  it("93: PG 0 hangs at work 532340, ranks 1 and 2 behind; the mismatch counter counts DETAIL's errors", async () => {
    const dir = tempDir();
    const log = join(dir, "train-stderr.log");
    writeFileSync(log, "");
    agent = await startAgent(["--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", `--collector.nccl.path=${dir}`]);
    const a = agent;
    const before = await a.scrape();
    expect(samplesOf(before, "ringwatch_pytorch_hang_suspected")).toEqual([]);

    // One write, so that a scrape sees both captures or neither.
    appendFileSync(log, `${capture("93-")}${readCapture("nccl-pasted/" + listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("16-")))}\n`);
    const hung = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, 'ringwatch_pytorch_hang_suspected{process_group="PG 0"}') === 1 ? t : undefined;
    }, 15_000);
    expect(sample(hung, 'ringwatch_pytorch_rank_behind{process_group="PG 0",rank="1"}')).toBe(1);
    expect(sample(hung, 'ringwatch_pytorch_rank_behind{process_group="PG 0",rank="2"}')).toBe(1);
    expect(samplesOf(hung, "ringwatch_pytorch_rank_behind").filter((l) => l.includes('process_group="PG 0"'))).toHaveLength(2);
    expect(sample(hung, 'ringwatch_pytorch_hang_work_seq{process_group="PG 0"}')).toBe(532340);
    expect(sample(hung, 'ringwatch_pytorch_watchdog_timeouts_total{rank="0",op_type="_ALLGATHER_BASE"}')).toBe(1);
    // 16: DETAIL's fingerprint mismatch of ranks 1 and 0, reported once by rank 1's line.
    expect(samplesOf(hung, "ringwatch_pytorch_collective_mismatches_total").reduce((n, l) => n + Number(l.split(" ").pop()), 0)).toBe(1);
    expect(sample(hung, 'ringwatch_pytorch_collective_mismatch{process_group=""}')).toBe(1);
    // No NCCL communicator is known: the NCCL verdicts stay empty.
    expect(samplesOf(hung, "ringwatch_nccl_hang_suspected")).toEqual([]);
    await eventually(() => Promise.resolve(a.logs().some((l) => l.includes("PyTorch's lines: In PG 0, ranks 1,2 still wait")) ? true : undefined), 5_000);
    await a.scrape();
    expect(a.logs().filter((l) => l.includes("PyTorch's lines: In PG 0, ranks 1,2 still wait"))).toHaveLength(1);
  });
});
