/**
 * NCCL Inspector, end to end: the built agent follows a directory of Inspector files
 * (`<host>-pid<pid>.log`, records rendered as NCCL 2.30's writer prints them) of a four-rank job
 * on this node whose rank 2 arrives 50 ms late, and a second communicator whose bandwidth halves
 * and halves again; /metrics names the straggler with its delay, the drop, each communicator's bus
 * bandwidth, and the per-rank series of both (suspect: a straggler, a drop).
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { simulateInspectorJob } from "../helpers/inspector-job.js";
import { tempDir } from "./env.js";

let agent: RunningAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

function write(dir: string, files: Map<string, string[]>): void {
  for (const [name, lines] of files) appendFileSync(join(dir, name), lines.map((l) => `${l}\n`).join(""));
}

describe("NCCL Inspector, end to end", () => {
  it("a 50 ms straggler and a bandwidth drop, from the Inspector's files alone", async () => {
    const dir = join(tempDir(), "nccl-inspector-unknown-jobid");
    mkdirSync(dir);
    const startUs = Date.now() * 1000 - 60_000_000;
    const slow = simulateInspectorJob({
      seed: 7,
      nranks: 4,
      count: 120,
      commId: "0x1111aaaa2222bbbb",
      format: "2.30",
      straggler: { rank: 2, delayMs: 50 },
      startUs,
      pidBase: 7000,
      hostname: "gpu-a",
    });
    const drop = simulateInspectorJob({
      seed: 8,
      nranks: 4,
      count: 200,
      commId: "0x3333cccc4444dddd",
      format: "2.30",
      slowdown: { from: 160, factor: 0.25 },
      startUs,
      pidBase: 7100,
      hostname: "gpu-a",
    });
    write(dir, slow.files);
    write(dir, drop.files);
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      "--no-collector.nccl.ras",
      `--collector.nccl.path=${join(dir, "..", "logs")}`,
      `--collector.nccl.inspector.path=${dir}`,
    ]);
    const a = agent;
    const text = await eventually(async () => {
      const t = await a.scrape();
      // Every file read to its end (the follower reads files in turns, and the straggler can be named
      // from ranks 1-3 before rank 0's file is read): the straggler, the drop, all 120 records of each rank.
      const allRead = [0, 1, 2, 3].every((r) => sample(t, `ringwatch_nccl_inspector_collectives_total{comm_id="0x1111aaaa2222bbbb",rank="${r}"}`) === 120);
      return allRead &&
        sample(t, 'ringwatch_nccl_straggler{comm_id="0x1111aaaa2222bbbb",rank="2"}') === 1 &&
        sample(t, 'ringwatch_nccl_bandwidth_drop{comm_id="0x3333cccc4444dddd"}') === 1
        ? t
        : undefined;
    }, 20_000);
    // Rank 2 alone: no series for the ranks that are not stragglers, nor for the other communicator.
    expect(samplesOf(text, "ringwatch_nccl_straggler")).toEqual(['ringwatch_nccl_straggler{comm_id="0x1111aaaa2222bbbb",rank="2"} 1']);
    const delay = sample(text, 'ringwatch_nccl_straggler_delay_seconds{comm_id="0x1111aaaa2222bbbb",rank="2"}') ?? NaN;
    expect(delay).toBeGreaterThan(0.045);
    expect(delay).toBeLessThan(0.055);
    // The drop where it fires, no series for the communicator whose bandwidth holds.
    expect(samplesOf(text, "ringwatch_nccl_bandwidth_drop")).toEqual(['ringwatch_nccl_bandwidth_drop{comm_id="0x3333cccc4444dddd"} 1']);
    // Each communicator's bus bandwidth (its largest message size), always.
    expect(
      samplesOf(text, "ringwatch_nccl_comm_busbw_bytes_per_second")
        .map((l) => /comm_id="([^"]+)"/.exec(l)?.[1])
        .sort(),
    ).toEqual(["0x1111aaaa2222bbbb", "0x3333cccc4444dddd"]);
    // Both communicators are suspect (a straggler; a bandwidth drop): the per-rank series of their 4
    // ranks each (docs/metrics.md, NCCL series budget).
    const busbw = samplesOf(text, "ringwatch_nccl_inspector_busbw_bytes_per_second");
    expect(busbw.length).toBeGreaterThanOrEqual(8);
    for (const c of ["0x1111aaaa2222bbbb", "0x3333cccc4444dddd"])
      expect(new Set(busbw.filter((l) => l.includes(`comm_id="${c}"`)).map((l) => /rank="(\d+)"/.exec(l)?.[1])).size, c).toBe(4);
    expect(sample(text, 'ringwatch_nccl_inspector_records_skipped_total{reason="garbage"}')).toBe(0);
    await eventually(
      () => (a.logs().some((l) => l.includes("nccl: NCCL Inspector: rank 2 (gpu-a:7002) of communicator 0x1111aaaa2222bbbb arrives about")) ? true : undefined),
      10_000,
    );
  });
});
