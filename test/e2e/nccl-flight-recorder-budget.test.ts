/**
 * Flight Recorder, live, with hostile dumps: the built agent finds, beside the real H100 dumps of
 * ranks 0 and 1, the two hostile dumps of test/fakes/fr-big-dump.py (rank 2: 4,096 groups sharing
 * one 131,072-rank list; rank 3: one entry of 64 × 16 sizes named 50,000 times) and a real-format
 * dump that is simply too big for the agent's reader (rank 4: a 131,072-rank job's full
 * 20,000-entry buffer, more than the worker's 64 MB of heap). Before the budget, rank 2's dump grew
 * the agent to 2.6 GB and Node aborted, again after every restart. Now the agent stays up, counts
 * the three as over_budget with one log line each, and gives the real dumps' verdict.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { writeBigDump } from "../helpers/fr-big-dumps.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { hasPython } from "../helpers/fr-dumps.js";
import { tempDir } from "./env.js";

const H100 = join(fixturesDir, "fr/h100-2026-11-24");
const run = hasPython() || process.env.CI ? describe : describe.skip;

let agent: RunningAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

/** The agent's peak and current RSS (MB), from /proc. */
function rssOf(pid: number): { peakMb: number; nowMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { peakMb: kb("VmHWM") / 1024, nowMb: kb("VmRSS") / 1024 };
}

run("Flight Recorder, live, with hostile dumps", () => {
  it("the agent stays up, counts the three as over_budget with one line each, and names rank 1 behind from the real dumps", async () => {
    const dir = tempDir();
    const prefix = join(dir, "nccl_trace_rank_");
    writeBigDump("shared-ranks", `${prefix}2`, { rank: 2 });
    writeBigDump("shared-entry", `${prefix}3`, { rank: 3 });
    writeBigDump("large-job", `${prefix}4`, { rank: 4 });
    for (const r of [0, 1]) copyFileSync(join(H100, `nccl_trace_rank_${r}`), `${prefix}${r}`);
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${join(dir, "logs")}`,
      `--collector.nccl.flight-recorder.dump=${prefix}`,
    ]);
    const a = agent;
    const pid = a.child.pid as number;
    const t0 = Date.now();
    const text = await eventually(
      async () => {
        const t = await a.scrape();
        return sample(t, 'ringwatch_nccl_fr_dumps_total{result="over_budget"}') === 3 &&
          sample(t, 'ringwatch_nccl_fr_rank_behind{process_group="0",rank="1"}') === 1
          ? t
          : undefined;
      },
      { timeoutMs: 60_000, everyMs: 500, what: "the dumps counted and the verdict on /metrics" },
    );
    const seconds = (Date.now() - t0) / 1000;
    expect(a.child.exitCode).toBeNull();
    expect(sample(text, 'ringwatch_nccl_fr_dumps_total{result="ok"}')).toBe(2);
    expect(sample(text, 'ringwatch_nccl_fr_dumps_total{result="unreadable"}')).toBe(0);
    expect(sample(text, 'ringwatch_nccl_fr_last_collective{process_group="0",rank="0",state="enqueued"}')).toBe(83);
    expect(sample(text, 'ringwatch_nccl_fr_last_collective{process_group="0",rank="1",state="enqueued"}')).toBe(81);
    const refused = a.logs().filter((l) => l.includes("nccl: Flight Recorder dump") && l.includes("could not be read"));
    expect(refused).toHaveLength(3);
    expect(refused.find((l) => l.includes(`${prefix}2 `))).toContain(
      "could not be read: too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)",
    );
    expect(refused.find((l) => l.includes(`${prefix}3 `))).toContain(
      "could not be read: too large: tensor sizes over budget (more than 4,194,304 tensors and dimensions)",
    );
    expect(refused.find((l) => l.includes(`${prefix}4 `))).toContain(
      "could not be read: too large: reading it went over the reader's memory budget (64 MB of heap)",
    );
    const verdict = a.logs().find((l) => l.includes("nccl: Flight Recorder: "));
    expect(verdict).toContain("rank 1 never enqueued collective #82 (all_reduce), which rank 0 waits in");
    // Still serving after it all, and the dumps are not read again.
    const again = await a.scrape();
    expect(sample(again, 'ringwatch_nccl_fr_dumps_total{result="over_budget"}')).toBe(3);
    const rss = rssOf(pid);
    // Measured: a peak of 181-184 MB, while the worker read rank 4's dump up to its 64 MB heap, and
    // 101-104 MB after; with rank 2's dump alone beside the real ones, 109 MB (before: 4.2 GB, then an abort).
    expect(rss.peakMb).toBeLessThan(400);
    process.stdout.write(
      `flight recorder budget e2e: verdict and counts on /metrics ${seconds.toFixed(1)} s after start; agent RSS peak ${rss.peakMb.toFixed(0)} MB, now ${rss.nowMb.toFixed(0)} MB\n`,
    );
  });
});
