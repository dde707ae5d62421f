/** What the two real H100 dumps say together, and each alone. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeFrDumps } from "../../../../collectors/nccl/flight-recorder/analyze.js";
import { readFrDump } from "../../../../collectors/nccl/flight-recorder/read.js";
import type { FrRead } from "../../../../collectors/nccl/flight-recorder/types.js";
import { fixturesDir } from "../../../helpers/fixtures.js";

const read = (rank: number, name = `nccl_trace_rank_${rank}`): FrRead =>
  readFrDump(readFileSync(join(fixturesDir, `fr/h100-2026-11-24/nccl_trace_rank_${rank}`)), name);

const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";
const STACK_82 = [
  { name: "all_reduce", file: `${TORCH}/distributed_c10d.py`, line: 3068 },
  { name: "wrapper", file: `${TORCH}/c10d_logger.py`, line: 83 },
  { name: "<module>", file: "/opt/job/job.py", line: 20 },
];

describe("analyzeFrDumps on the real H100 dumps", () => {
  it("rank 1 never enqueued #82 (all_reduce), which rank 0 waits in; no mismatch, no rank missing", () => {
    const a = analyzeFrDumps([read(0), read(1)]);
    expect(a).toMatchObject({ dumps: 2, duplicates: [], unplaced: [], failed: [], truncated: false });
    expect(a.groups).toHaveLength(1);
    const g = a.groups[0];
    expect(g).toMatchObject({ name: "0", desc: "default_pg", size: 2, ranks: [0, 1], missing: [], unreadable: [], mismatches: [] });
    expect(g?.status).toEqual([
      { rank: 0, source: "nccl_trace_rank_0", lastEnqueued: 83, lastCompleted: 81 },
      { rank: 1, source: "nccl_trace_rank_1", lastEnqueued: 81, lastCompleted: 81 },
    ]);
    expect(g?.behind).toEqual({
      by: "enqueued",
      ranks: [1],
      at: 81,
      aheadRanks: [0],
      aheadAt: 83,
      last: [{ rank: 1, seq: 81, op: "all_reduce", state: "completed", frames: STACK_82 }],
    });
    expect(g?.wait).toEqual({
      seq: 82,
      op: "all_reduce",
      ranks: [0],
      states: [{ state: "scheduled", ranks: [0] }],
      stacks: [{ ranks: [0], frames: STACK_82 }],
      timeoutMs: 100000,
    });
  });

  it("the order of the dumps does not matter", () => {
    expect(analyzeFrDumps([read(1), read(0)])).toEqual(analyzeFrDumps([read(0), read(1)]));
  });

  it("rank 0's dump alone: rank 1 is missing, rank 0 waits in #82", () => {
    const g = analyzeFrDumps([read(0)]).groups[0];
    expect(g).toMatchObject({ missing: [1], unreadable: [], mismatches: [] });
    expect(g?.behind).toBeUndefined();
    expect(g?.wait).toMatchObject({ seq: 82, op: "all_reduce", ranks: [0] });
  });

  it("rank 1's dump alone: nothing waits (it completed all it enqueued), rank 0 is missing", () => {
    const g = analyzeFrDumps([read(1)]).groups[0];
    expect(g).toMatchObject({ missing: [0] });
    expect(g?.wait).toBeUndefined();
  });

  it("an unreadable dump of rank 1 counts as missing and unreadable; a second copy of rank 0 is left out; a nameless one is unplaced", () => {
    const truncated = readFrDump(readFileSync(join(fixturesDir, "fr/h100-2026-11-24/nccl_trace_rank_1")).subarray(0, 1000), "nccl_trace_rank_1");
    const a = analyzeFrDumps([read(0), truncated, read(0, "copy/nccl_trace_rank_0"), read(0, "trace.pkl")]);
    expect(a.failed).toEqual([{ source: "nccl_trace_rank_1", rank: 1, error: "truncated: the pickle ends before its STOP" }]);
    expect(a.duplicates).toEqual([{ rank: 0, source: "copy/nccl_trace_rank_0", used: "nccl_trace_rank_0" }]);
    expect(a.unplaced).toEqual(["trace.pkl"]);
    expect(a.groups[0]).toMatchObject({ missing: [1], unreadable: [1] });
  });

  it("no dumps: nothing to say", () => {
    expect(analyzeFrDumps([])).toEqual({ groups: [], dumps: 0, duplicates: [], unplaced: [], failed: [], truncated: false });
  });
});
