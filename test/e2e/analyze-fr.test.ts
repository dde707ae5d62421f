/** `ringwatch analyze` (the built agent) on PyTorch Flight Recorder dumps: the real H100 ones, beside logs, and broken ones. */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { runAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { hasPython, ranksUpTo, writeJob, type FakeRank } from "../helpers/fr-dumps.js";
import { tempDir } from "./env.js";

const H100 = join(fixturesDir, "fr/h100-2026-11-24");
const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";

describe("ringwatch analyze on Flight Recorder dumps", () => {
  it("the H100 dumps: rank 1 never enqueued #82 (all_reduce) while rank 0 waits in it, with rank 0's frames", async () => {
    const r = await runAgent(["analyze", H100]);
    expect(r.code).toBe(0);
    // SOURCES.md is not a log: skipped with a word
    expect(r.stderr).toBe(`ringwatch: analyze: skipped ${join(H100, "SOURCES.md")}: Markdown, not a log\n`);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^ringwatch analyze: 2 file\(s\), \d+ lines, 2 Flight Recorder dump\(s\), 0 process\(es\), 0 communicator\(s\)$/);
    expect(lines[2]).toMatch(/^VERDICT: Flight Recorder, process group 0 \(default_pg\): rank 1 enqueued collectives only up to #81 while rank 0 reached #83/);
    expect(lines[4]).toContain(
      "CRITICAL rank_behind: Flight Recorder, process group 0 (default_pg): rank 1 enqueued collectives only up to #81 while rank 0 reached #83",
    );
    expect(lines[4]).toContain("rank 1 never enqueued collective #82 (all_reduce), which rank 0 waits in (called from /opt/job/job.py:20)");
    expect(lines.slice(5, 9)).toEqual([
      "      rank 0 called it from:",
      `        ${TORCH}/distributed_c10d.py:3068 all_reduce`,
      `        ${TORCH}/c10d_logger.py:83 wrapper`,
      "        /opt/job/job.py:20 <module>",
    ]);
    expect(r.stdout).toContain("    rank 0  last enqueued 83  started ?  completed 81");
    expect(r.stdout).toContain("    rank 1  last enqueued 81  started ?  completed 81");
  });

  it("--json: the same facts in fields", async () => {
    const r = await runAgent(["analyze", "--json", join(H100, "nccl_trace_rank_0"), join(H100, "nccl_trace_rank_1")]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]).toMatchObject({
      kind: "rank_behind",
      ranks: [1],
      seq: 82,
      op: "all_reduce",
      waiting_ranks: [0],
      process_group: "0 (default_pg)",
      evidence: [join(H100, "nccl_trace_rank_1"), join(H100, "nccl_trace_rank_0")],
    });
    expect(report.findings[0]?.stacks?.[0]?.frames[2]).toEqual({ function: "<module>", file: "/opt/job/job.py", line: 20 });
    expect(report.process_groups[0]?.ranks.map((x) => [x.rank, x.last_enqueued, x.last_completed])).toEqual([
      [0, 83, 81],
      [1, 81, 81],
    ]);
  });

  it("a truncated and a corrupt dump beside a good one: one stderr line each, findings for them, exit 0", async () => {
    const dir = tempDir();
    copyFileSync(join(H100, "nccl_trace_rank_0"), join(dir, "nccl_trace_rank_0"));
    const one = readFileSync(join(H100, "nccl_trace_rank_1"));
    writeFileSync(join(dir, "nccl_trace_rank_1"), one.subarray(0, 7000));
    const bad = Buffer.from(one);
    bad[293] = 0xff;
    writeFileSync(join(dir, "nccl_trace_rank_2"), bad);
    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split("\n")).toEqual([
      `ringwatch: analyze: ${join(dir, "nccl_trace_rank_1")}: not a readable Flight Recorder dump: truncated: the pickle ends before its STOP`,
      `ringwatch: analyze: ${join(dir, "nccl_trace_rank_2")}: not a readable Flight Recorder dump: corrupt: Unsupported opcode '255'.`,
    ]);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.findings.map((f) => [f.kind, f.ranks])).toEqual([
      ["rank_missing", [1]],
      ["dump_unreadable", [1]],
      ["dump_unreadable", [2]],
    ]);
    expect(report.findings[0]?.summary).toContain(
      "no dump from rank 1 (the dump of rank 1 could not be read), while rank 0, the only rank with a dump, waits in collective #82 (all_reduce)",
    );
  });

  it("a pickle that is no dict is read as a log, harmlessly", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "list.pkl"), Buffer.from([0x80, 0x02, 0x5d, 0x2e]));
    const r = await runAgent(["analyze", dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("ringwatch analyze: 1 file(s), 1 lines, 0 process(es)");
    expect(r.stderr).toBe("");
  });

  it("only a broken dump: exit 0, the finding says so (not 'nothing wrong')", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "nccl_trace_rank_5"), readFileSync(join(H100, "nccl_trace_rank_0")).subarray(0, 100));
    const r = await runAgent(["analyze", dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("WARNING dump_unreadable: Flight Recorder dump");
    expect(r.stdout).not.toContain("nothing wrong");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("a dump over 64 MiB is not held: read up to the limit, refused, exit 0", async () => {
    const dir = tempDir();
    const big = Buffer.alloc(64 * 1024 * 1024 + 4096);
    big.set([0x80, 2, 0x7d]); // a pickled dict, then zeros
    writeFileSync(join(dir, "nccl_trace_rank_9"), big);
    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`ringwatch: analyze: ${join(dir, "nccl_trace_rank_9")}: not a readable Flight Recorder dump: too large: over 64 MiB\n`);
    expect((JSON.parse(r.stdout) as Report).findings.map((f) => [f.kind, f.ranks])).toEqual([["dump_unreadable", [9]]]);
  });

  (hasPython() || process.env.CI ? it : it.skip)("16 dumps written by Python in one directory: rank 13 behind, the 15 others wait in #500", async () => {
    const dir = tempDir();
    const g = { name: "0", desc: "default_pg", ranks: ranksUpTo(16), pgId: 0 };
    const ranks: FakeRank[] = ranksUpTo(16).map((rank) => ({ rank, groups: [{ group: g, enqueued: rank === 13 ? 499 : 500, completed: 499 }] }));
    writeJob(dir, ranks);
    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.findings.map((f) => [f.kind, f.ranks, f.seq, f.op, f.waiting_ranks?.length])).toEqual([["rank_behind", [13], 500, "all_reduce", 15]]);
  });
});
