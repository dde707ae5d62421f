/**
 * The stack PyTorch prints from its Flight Recorder on a watchdog timeout (logs/pytorch/failed-stack.ts),
 * on the real H100 capture (test/fixtures/nccl-device/h100-2026-11-24/torch-hang-rank0.log): the
 * timeout finding of rank 0 carries the frames it called the collective from, innermost first.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stackFrame } from "../../../../../collectors/nccl/logs/pytorch/failed-stack.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { fixturesDir } from "../../../../helpers/fixtures.js";

const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";
const log = readFileSync(join(fixturesDir, "nccl-device", "h100-2026-11-24", "torch-hang-rank0.log"), "utf8");

describe("the failed collective's stack", () => {
  it("a frame row is `#<i> <function> from <file>:<line>`; other rows are none", () => {
    expect(stackFrame(`#1 wrapper from ${TORCH}/c10d_logger.py:83`)).toEqual({ function: "wrapper", file: `${TORCH}/c10d_logger.py`, line: 83 });
    expect(stackFrame("#2 <module> from /opt/job/job.py:20")).toEqual({ function: "<module>", file: "/opt/job/job.py", line: 20 });
    expect(stackFrame("# not a frame")).toBeUndefined();
    expect(stackFrame("#0 all_reduce from nowhere")).toBeUndefined();
  });

  it("the real capture: rank 0's timeout carries its three frames and the line that opened them", () => {
    const r = analyzeLogs([{ name: "torch-hang-rank0.log", text: log }]);
    const t = r.findings.filter((f) => f.kind === "watchdog_timeout");
    expect(t.map((f) => [f.ranks, f.seq, f.stacks])).toEqual([
      [
        [0],
        82,
        [
          {
            ranks: [0],
            frames: [
              { function: "all_reduce", file: `${TORCH}/distributed_c10d.py`, line: 3068 },
              { function: "wrapper", file: `${TORCH}/c10d_logger.py`, line: 83 },
              { function: "<module>", file: "/opt/job/job.py", line: 20 },
            ],
          },
        ],
      ],
    ]);
    expect(t[0]?.evidence).toContain("torch-hang-rank0.log:5");
  });

  it("a block whose rank has no timeout finding is given to none", () => {
    const other = log.replace(/\[rank0\]:\[E1124 01:53:15\.950420032/, "[rank5]:[E1124 01:53:15.950420032");
    const r = analyzeLogs([{ name: "x.log", text: other }]);
    expect(r.findings.filter((f) => f.stacks !== undefined)).toEqual([]);
  });
});
