/**
 * Rotation (rename + create, the job writing the path again) of more files than the follower keeps
 * descriptors for (64): 128 rank files of a 16-node job, rotated five times while the job writes.
 * No line may be lost or read twice, and nothing was truncated, so no truncation may be counted.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { JobWriter } from "./lib/job-writer.js";

let root: string;
let agent: RunningAgent | undefined;
let writer: JobWriter;
let text = "";

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rw-rotate-many-"));
  agent = await startAgent(
    [
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${root}`,
      "--collector.nccl.check-pids=false",
      // Every rank's progress, though the job is healthy.
      "--collector.nccl.rank-series=always",
    ],
    {},
    30_000,
  );
  writer = new JobWriter(
    join(root, "job"),
    { nodes: Array.from({ length: 16 }, (_, i) => `rot-many-${i}`), ranksPerNode: 8, seed: 9, comms: [], stepMs: 200 },
    "path",
  );
  const write = async (ticks: number): Promise<void> => {
    for (let i = 0; i < ticks; i++) {
      writer.step(300);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // Before each rotation the follower has read every line written (as it has, hours later, when
  // logrotate runs on a node; a loaded machine may lag seconds behind the writer, and ringwatch's
  // global line count cannot tell which file's tail is still unread). What this test holds is the
  // rotation itself with more files than descriptors: no line read twice, none of the new files'
  // lost, no truncation counted. A tail still unread at the rename is nccl-rotation.test.ts's case.
  const caughtUp = async (lines: number): Promise<void> => {
    for (let i = 0; i < 240; i++) {
      if ((sample(await (agent as RunningAgent).scrape(), "ringwatch_nccl_log_lines_total") ?? 0) >= lines) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  await write(10);
  for (let round = 0; round < 5; round++) {
    await write(10);
    await caughtUp(writer.lines);
    for (const f of writer.files()) {
      renameSync(f, `${f}.1`); // over the previous .1, as logrotate's rotate 1 does
      writeFileSync(f, "");
    }
    await write(5);
  }
  await write(10);
  await caughtUp(writer.lines);
  await new Promise((r) => setTimeout(r, 2000));
  text = await agent.scrape();
  console.log(
    `rotation of 128 files: ${sample(text, "ringwatch_nccl_log_lines_total")} of ${writer.lines} lines read, ${sample(text, "ringwatch_nccl_log_truncations_total")} truncations counted, ${wrongRanks().length} ranks with a wrong progress`,
  );
}, 400_000);

/**
 * Ranks whose ringwatch_nccl_rank_progress differs from what they wrote (JobWriter.expectedProgress:
 * the job spans 16 nodes, so its communicator numbers its operations and the progress is opCount + 1
 * of each rank's last COLL line), and ranks on /metrics the job does not have.
 */
function wrongRanks(): string[] {
  const counted = new Map<string, number>();
  for (const l of samplesOf(text, "ringwatch_nccl_rank_progress")) {
    const m = /comm_id="([^"]+)",rank="(\d+)"\} (\d+)/.exec(l);
    if (m) counted.set(`${m[1]}/${m[2]}`, Number(m[3]));
  }
  const want = writer.expectedProgress();
  return [
    ...[...want].filter(([key, n]) => counted.get(key) !== n).map(([key, n]) => `rank ${key}: wrote up to ${n}, counted ${counted.get(key) ?? "none"}`),
    ...[...counted.keys()].filter((key) => !want.has(key)).map((key) => `rank ${key}: on /metrics, not in the job`),
  ];
}

afterAll(async () => {
  await agent?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("rotating 128 hot files (more than the 64 descriptors the follower keeps)", () => {
  it("followed every file", () => {
    expect(writer.files()).toHaveLength(128);
    expect(sample(text, "ringwatch_nccl_log_files")).toBe(256); // each file and its .1
  });

  // Two causes made this fail before (lines lost or read twice, rotations counted as truncations):
  // a renamed file not looked at before the next rotation deleted it (now its directory is
  // rescanned at once when a file loses its last path), and the empty file created after
  // `rotate 1` renamed over `.1` getting the deleted file's inode number back, with a birth time
  // equal to its ctime that was not trusted (now trusted once birth times are known to be real
  // here: tail-state.ts birthTimes).
  it("reads every line once: every rank's progress is what it wrote, and the lines read are the lines written", () => {
    expect(writer.expectedProgress().size).toBe(128);
    expect(wrongRanks()).toEqual([]);
    expect(sample(text, "ringwatch_nccl_log_lines_total")).toBe(writer.lines);
  });

  it("counts no truncation", () => {
    expect(sample(text, "ringwatch_nccl_log_truncations_total")).toBe(0);
  });
});
