/**
 * 10,000 NCCL log files (the follower's cap) laid out as NCCL_DEBUG_FILE=%h/nccl-%p.log: 9,000
 * there when the agent starts, 1,000 more created while it runs, 100 of them then appended to.
 * The agent starts, answers every scrape throughout, follows every file and reads every line,
 * without a descriptor per file. Prints what it measured; the goals on scrape latency (under a
 * second) and memory (under 400 MB) are checked by scripts/faults/many-files.mjs.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { AT_START, LATER, manyFilesSummary, maxFds, runManyFiles, type ManyFilesResult } from "./lib/many-files.js";

let r: ManyFilesResult;

beforeAll(async () => {
  r = await runManyFiles();
  console.log(manyFilesSummary(r));
}, 120_000);

describe("10,000 log files in %h/%p directories", () => {
  it("follows every file and reads every line, dropping none", () => {
    expect(r.trackedAfterMs).toBeGreaterThan(0);
    expect(r.filesWritten).toBe(AT_START + LATER);
    expect(sample(r.final, "ringwatch_nccl_log_files")).toBe(AT_START + LATER);
    expect(sample(r.final, "ringwatch_nccl_log_lines_total")).toBe(r.linesWritten);
    expect(sample(r.final, "ringwatch_nccl_log_files_dropped_total")).toBe(0);
    expect(sample(r.final, "ringwatch_nccl_log_read_errors_total")).toBe(0);
    expect(sample(r.final, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
  });

  it("answers every scrape while it walks, reads and watches them", () => {
    expect(r.scrapes.length).toBeGreaterThan(10);
    expect(r.scrapes.filter((s) => s.status !== 200)).toEqual([]);
  });

  it("holds descriptors bounded (no descriptor per file)", () => {
    expect(r.proc.length).toBeGreaterThan(0);
    expect(maxFds(r)).toBeLessThan(200);
  });
});
