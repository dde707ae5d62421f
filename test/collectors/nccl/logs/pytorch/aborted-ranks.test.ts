/**
 * Ranks that show only that their communicator was aborted (NCCL's `Abort COMPLETE`, which PyTorch
 * causes after a timeout or an error), and `Process Group destroyed on rank N` on the row after an
 * error raised while the group was destroyed: whose failure the lines tell (findings.ts
 * withAbortedRanks, log.ts destroyedRank). The real captures are nccl-pasted 389, 409 and 412.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const run = (lines: readonly string[]): Finding[] => analyzeLogs([{ name: "job.log", text: lines.join("\n") }]).findings;
const capture = (prefix: string): Finding[] => {
  const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? "";
  return analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings;
};
const top = (fs: readonly Finding[]): [string, number[]][] => fs.filter((f) => f.severity !== "info").map((f) => [f.kind, f.ranks]);

const abort = (host: string, pid: number, rank: number, nranks: number): string =>
  `${host}:${pid}:${pid + 500} [${rank % 8}] NCCL INFO comm 0x1170e1b0 rank ${rank} nranks ${nranks} cudaDev ${rank % 8} busId ce000 - Abort COMPLETE`;
const timeout = (rank: number): string =>
  `[E ProcessGroupNCCL.cpp:915] [Rank ${rank}] NCCL watchdog thread terminated with exception: [Rank ${rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLGATHER, NumelIn=1, NumelOut=8, Timeout(ms)=1800000) ran for 1800522 milliseconds before timing out.`;
const systemError = ["ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ", "Last error:", ""];

describe("ranks whose communicator was aborted", () => {
  it("389: rank 4's Abort COMPLETE joins the timeout of ranks 0 and 2", () => {
    const fs = capture("389-");
    expect(top(fs)).toEqual([["watchdog_timeout", [0, 2, 4]]]);
    expect(fs[0]?.summary).toContain('Rank 4 aborted its communicator (NCCL\'s "Abort COMPLETE")');
  });

  it("a rank that aborted and also timed out is named once, and no sentence is added", () => {
    const fs = run([timeout(0), abort("a", 100, 0, 8), timeout(2)]);
    expect(top(fs)).toEqual([["watchdog_timeout", [0, 2]]]);
    expect(fs[0]?.summary).not.toContain("aborted");
  });

  it("a split communicator's rank (its own numbering) is not the job's: only the largest communicator's aborts count", () => {
    const fs = run([timeout(0), abort("a", 100, 1, 2), abort("a", 101, 5, 8)]);
    expect(top(fs)).toEqual([["watchdog_timeout", [0, 5]]]);
  });

  it("412: an ncclSystemError with an empty last error is the ranks' that aborted, 8-15", () => {
    const fs = capture("412-");
    expect(top(fs)).toEqual([["nccl_error", [8, 9, 10, 11, 12, 13, 14, 15]]]);
    expect(fs[0]?.processes).toContain("dso-s1-r1-a100-03:2349");
    expect(fs[0]?.summary).toContain("Ranks 8-15 aborted their communicators");
  });

  it("an error that names its rank keeps it; aborts of others are not added to it", () => {
    const named = ["[rank3]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "];
    expect(top(run([...named, abort("a", 100, 5, 8)]))).toEqual([["nccl_error", [3]]]);
  });

  it("aborts alone (a clean shutdown) are no finding", () => {
    expect(top(run([abort("a", 100, 0, 8), abort("a", 101, 1, 8)]))).toEqual([]);
    expect(top(run([...systemError]))).toEqual([["nccl_error", []]]);
  });
});

describe("Process Group destroyed on rank N", () => {
  it("409: the row after `what(): NCCL error in: ... unhandled cuda error` names the error's rank", () => {
    expect(top(capture("409-"))).toEqual([["nccl_error", [0]]]);
  });

  it("not after an error (a row apart, or alone) it names nothing", () => {
    const err = "  what():  NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:181, unhandled cuda error, NCCL version 21.0.3";
    expect(top(run([err, "some other line", "Process Group destroyed on rank 3"]))).toEqual([["nccl_error", []]]);
    expect(top(run(["Process Group destroyed on rank 3"]))).toEqual([]);
    expect(top(run([err, "Process Group destroyed on rank 3"]))).toEqual([["nccl_error", [3]]]);
  });
});

describe("NCCL communicator was aborted on rank N", () => {
  // NCCLComm's check once its communicator is aborted (PyTorch 1.10-2.x): `NCCL communicator was aborted on rank <rank_>. Original reason ...`.
  it("names the rank of an error, or of the timeout its reason carries, where no prefix does", () => {
    expect(top(run(["torch.distributed.DistBackendError: NCCL communicator was aborted on rank 1."]))).toEqual([["nccl_error", [1]]]);
    const fs = run([
      "RuntimeError: NCCL communicator was aborted on rank 3.  Original reason for failure was: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800391 milliseconds before timing out.",
    ]);
    expect(fs.map((f) => [f.kind, f.ranks, f.seq])).toEqual([["watchdog_timeout", [3], 12]]);
  });

  it("PyTorch 1.x raised it as a RuntimeError: an NCCL failure of that rank, also behind Open MPI's tags glued twice (nccl-pasted 506)", () => {
    const fs = run(["RuntimeError: NCCL communicator was aborted on rank 19."]);
    expect(top(fs)).toEqual([["nccl_error", [19]]]);
    expect(fs[0]?.summary).toContain("NCCL communicator was aborted");
    expect(top(run(["[1,19]<stderr>:RuntimeError[1,19]<stderr>:: NCCL communicator was aborted on rank 19."]))).toEqual([["nccl_error", [19]]]);
    // No rank it was aborted on: no finding from these words alone.
    expect(run(["RuntimeError: NCCL communicator was aborted on rank 1x"])).toEqual([]);
  });

  it("a launcher's prefix still wins; words that only look alike name nothing", () => {
    expect(top(run(["[rank5]: torch.distributed.DistBackendError: NCCL communicator was aborted on rank 1."]))).toEqual([["nccl_error", [5]]]);
    expect(top(run(["torch.distributed.DistBackendError: NCCL communicator was aborted on rank 1x"]))).toEqual([["nccl_error", []]]);
  });
});

describe("aborts that are no part of the failure (the review's cases)", () => {
  it("a clean exit's aborts: before the timeout's line, or in a log of their own, join nothing", () => {
    const before = run([abort("a", 101, 1, 8), abort("a", 102, 2, 8), timeout(0)]);
    expect(top(before)).toEqual([["watchdog_timeout", [0]]]);
    const own = analyzeLogs([
      { name: "rank0.log", text: timeout(0) },
      { name: "rank1.log", text: ["training finished successfully", abort("b", 101, 1, 8)].join("\n") },
    ]).findings;
    expect(top(own)).toEqual([["watchdog_timeout", [0]]]);
  });

  it("a communicator too small to hold the failure's ranks is a split one: its rank joins nothing", () => {
    const fs = run([timeout(5), abort("a", 100, 1, 2)]);
    expect(top(fs)).toEqual([["watchdog_timeout", [5]]]);
  });

  it("512 aborting ranks: all named, at most 12 lines cited", () => {
    const fs = run([timeout(0), ...Array.from({ length: 511 }, (_, i) => abort("a", 1000 + i, i + 1, 512))]);
    expect(fs[0]?.ranks).toHaveLength(512);
    expect(fs[0]?.evidence).toHaveLength(12);
    expect(fs[0]?.summary).toContain("Ranks 1-511 aborted their communicators");
  });
});
