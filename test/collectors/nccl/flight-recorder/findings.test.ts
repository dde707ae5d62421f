/** `ringwatch analyze`'s findings and text from the real H100 Flight Recorder dumps (LogAnalysis, in process). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LogAnalysis } from "../../../../collectors/nccl/analyze/analyze.js";
import { formatReport } from "../../../../collectors/nccl/verdict/format.js";
import type { Report } from "../../../../collectors/nccl/verdict/report.js";
import { fixturesDir } from "../../../helpers/fixtures.js";

const bytes = (rank: number): Buffer => readFileSync(join(fixturesDir, `fr/h100-2026-11-24/nccl_trace_rank_${rank}`));
const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";

function analyze(...ranks: number[]): Report {
  const a = new LogAnalysis();
  for (const r of ranks) expect(a.flightRecorderDump(`nccl_trace_rank_${r}`, bytes(r)).ok).toBe(true);
  return a.report();
}

describe("Flight Recorder findings on the real H100 dumps", () => {
  it("one verdict: rank 1 never enqueued #82 (all_reduce), rank 0 waits in it, with rank 0's stack", () => {
    const r = analyze(0, 1);
    expect(r.findings).toHaveLength(1);
    const f = r.findings[0];
    expect(f).toMatchObject({
      kind: "rank_behind",
      severity: "critical",
      ranks: [1],
      processes: [],
      comm_id: null,
      seq: 82,
      op: "all_reduce",
      process_group: "0 (default_pg)",
      waiting_ranks: [0],
      evidence: ["nccl_trace_rank_1", "nccl_trace_rank_0"],
    });
    expect(f?.stacks).toEqual([
      {
        ranks: [0],
        frames: [
          { function: "all_reduce", file: `${TORCH}/distributed_c10d.py`, line: 3068 },
          { function: "wrapper", file: `${TORCH}/c10d_logger.py`, line: 83 },
          { function: "<module>", file: "/opt/job/job.py", line: 20 },
        ],
      },
    ]);
    expect(f?.summary).toBe(
      "Flight Recorder, process group 0 (default_pg): rank 1 enqueued collectives only up to #81 while rank 0 reached #83: rank 1 never enqueued collective #82 (all_reduce), " +
        "which rank 0 waits in (called from /opt/job/job.py:20). Its last collective was #81 (all_reduce, completed), called from /opt/job/job.py:20. " +
        `"Not enqueued" means that rank's Python code never got there: another code path, or stuck on the CPU (py-spy dump its process).`,
    );
    expect(r.process_groups).toEqual([
      {
        process_group: "0",
        desc: "default_pg",
        size: 2,
        missing_ranks: [],
        ranks: [
          { rank: 0, dump: "nccl_trace_rank_0", last_enqueued: 83, last_started: null, last_completed: 81 },
          { rank: 1, dump: "nccl_trace_rank_1", last_enqueued: 81, last_started: null, last_completed: 81 },
        ],
      },
    ]);
  });

  it("the text: the verdict first, rank 0's frames as file:line function, then the process group", () => {
    const text = formatReport(analyze(0, 1), { files: 2, lines: 0, dumps: 2 }).split("\n");
    expect(text.slice(0, 2)).toEqual(["ringwatch analyze: 2 file(s), 0 lines, 2 Flight Recorder dump(s), 0 process(es), 0 communicator(s)", ""]);
    expect(text[2]).toMatch(/^VERDICT: Flight Recorder, process group 0 \(default_pg\): rank 1 enqueued collectives only up to #81 while rank 0 reached #83/);
    expect(text[3]).toBe("");
    expect(text[4]).toMatch(
      /^ {2}CRITICAL rank_behind: Flight Recorder, process group 0 \(default_pg\): rank 1 .* never enqueued collective #82 \(all_reduce\), which rank 0 waits in/,
    );
    expect(text.slice(5, 10)).toEqual([
      "      rank 0 called it from:",
      `        ${TORCH}/distributed_c10d.py:3068 all_reduce`,
      `        ${TORCH}/c10d_logger.py:83 wrapper`,
      "        /opt/job/job.py:20 <module>",
      "      evidence: nccl_trace_rank_1, nccl_trace_rank_0",
    ]);
    expect(text.slice(11, 15)).toEqual([
      "PROCESS GROUPS (Flight Recorder)",
      "  0 (default_pg)  size 2  dumps 2",
      "    rank 0  last enqueued 83  started ?  completed 81  (nccl_trace_rank_0)",
      "    rank 1  last enqueued 81  started ?  completed 81  (nccl_trace_rank_1)",
    ]);
  });

  it("rank 0's dump alone: rank 1 left no dump while rank 0 waits in #82 (critical)", () => {
    const r = analyze(0);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks, f.seq, f.op, f.waiting_ranks, f.count])).toEqual([
      ["rank_missing", "critical", [1], 82, "all_reduce", [0], 1],
    ]);
    expect(r.findings[0]?.summary).toContain(
      "no dump from rank 1, while rank 0, the only rank with a dump, waits in collective #82 (all_reduce) (called from /opt/job/job.py:20)",
    );
  });

  it("rank 1's dump alone: only that rank 0 left no dump (a warning: rank 1 waits in nothing)", () => {
    const r = analyze(1);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["rank_missing", "warning", [0]]]);
  });

  it("a truncated dump: a dump_unreadable warning, and its rank counted as without a dump", () => {
    const a = new LogAnalysis();
    expect(a.flightRecorderDump("nccl_trace_rank_0", bytes(0)).ok).toBe(true);
    const bad = a.flightRecorderDump("nccl_trace_rank_1", bytes(1).subarray(0, 4000));
    expect(bad).toEqual({ ok: false, source: "nccl_trace_rank_1", rank: 1, error: "truncated: the pickle ends before its STOP" });
    const r = a.report();
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([
      ["rank_missing", "critical", [1]],
      ["dump_unreadable", "warning", [1]],
    ]);
    expect(r.findings[0]?.summary).toContain("no dump from rank 1 (the dump of rank 1 could not be read)");
    expect(r.findings[1]?.summary).toBe("Flight Recorder dump nccl_trace_rank_1 (rank 1) could not be read: truncated: the pickle ends before its STOP.");
  });
});
