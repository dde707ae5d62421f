/**
 * PyTorch's lines from several ranks of one process group, read as one picture
 * (findings/pytorch-groups.ts, pytorch-errors.ts, pytorch-debug.ts). The lines follow PyTorch
 * 2.4-2.8's exact wording (the real ones are in test/fixtures/nccl-pasted/); the numbers are
 * chosen so that each case has one right verdict: S is the oldest work some rank has not completed.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../../../../collectors/nccl/verdict/report.js";

const H = (rank: number, pg = "[PG ID 0 PG GUID 0(default_pg) Rank"): string =>
  `[rank${rank}]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:1664] ${pg} ${rank}]`;
/** The watchdog's status line of a rank whose work `failed` timed out. */
const status = (rank: number, failed: number, enq: number, done: number): string =>
  `${H(rank)} Exception (either an error or timeout) detected by watchdog at work: ${failed}, last enqueued NCCL work: ${enq}, last completed NCCL work: ${done}.`;
/** A rank that dumped on another's signal, with its own status. */
const dumped = (rank: number, from: number, enq: number, done: number): string =>
  `${H(rank)} Received a dump signal due to a collective timeout from  rank ${from} and we will try our best to dump the debug info. Last enqueued NCCL work: ${enq}, last completed NCCL work: ${done}.`;

const run = (lines: readonly string[]): Finding[] => analyzeLogs([{ name: "job.log", text: lines.join("\n") }]).findings;
const kinds = (fs: readonly Finding[]): string[] => fs.map((f) => f.kind);

describe("who is behind in a process group", () => {
  it("a rank that completed all it enqueued, while another waits in the next work, never enqueued it", () => {
    const fs = run([status(1, 11, 15, 10), dumped(0, 1, 10, 10)]);
    const behind = fs.find((f) => f.kind === "rank_behind");
    expect(behind).toMatchObject({ ranks: [0], seq: 11, process_group: "PG 0 (default_pg)" });
    expect(behind?.summary).toContain(
      "rank 0 enqueued NCCL work only up to #10 and completed all of it while others reached #15: it never enqueued #11, which rank 1 waits in",
    );
  });

  it("a rank that enqueued the work but did not complete it, while others did, is behind below Python", () => {
    const fs = run([status(0, 10, 10, 9), dumped(1, 0, 15, 12)]);
    const behind = fs.find((f) => f.kind === "rank_behind");
    expect(behind).toMatchObject({ ranks: [0], seq: 10 });
    expect(behind?.summary).toContain("enqueued work #10 but completed only up to #9 while rank 1 completed up to #12");
  });

  it("07: every rank enqueued the work (one ran ahead enqueueing more) and none completed it: the collective hangs, nobody is behind", () => {
    const fs = run([status(12, 2070, 2070, 2069), status(3, 2070, 2082, 2069), status(14, 2070, 2070, 2069)]);
    expect(kinds(fs)).not.toContain("rank_behind");
    expect(fs.find((f) => f.kind === "hang_suspected")).toMatchObject({ ranks: [3, 12, 14], seq: 2070 });
  });

  it("a rank thousands of collectives behind is said to be far behind", () => {
    const fs = run([dumped(0, 1, 100, 100), status(1, 5000, 5000, 4999)]);
    const behind = fs.find((f) => f.kind === "rank_behind");
    expect(behind).toMatchObject({ ranks: [0], seq: 101 });
    expect(behind?.summary).toContain("That is 4900 collectives");
  });

  it("nothing pending anywhere: no culprit is invented", () => {
    expect(kinds(run([dumped(0, 1, 50, 50), dumped(1, 0, 50, 50)]))).not.toContain("rank_behind");
    expect(kinds(run([dumped(0, 1, 50, 50), dumped(1, 0, 50, 50)]))).not.toContain("hang_suspected");
  });
});

describe("the group of a watchdog line that names none (03)", () => {
  const wd = (rank: number, seq: number, op: string): string =>
    `[rank${rank}]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=${seq}, OpType=${op}, NumelIn=32, NumelOut=32, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.`;
  const st = (rank: number, guid: number, seq: number, enq: number, done: number): string =>
    `[rank${rank}]:[E218 04:54:22.864535778 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID ${guid} Rank 1] Exception (either an error or timeout) detected by watchdog at work: ${seq}, last enqueued NCCL work: ${enq}, last completed NCCL work: ${done}.`;

  it("is the group of the same rank's status line about the same work; two groups are not compared", () => {
    const fs = run([wd(13, 216, "ALLTOALL_BASE"), st(13, 119, 216, 220, 215), wd(15, 57, "ALLREDUCE"), st(15, 112, 57, 57, 56)]);
    const wds = fs.filter((f) => f.kind === "watchdog_timeout").map((f) => [f.ranks, f.process_group, f.seq]);
    expect(wds).toEqual(
      expect.arrayContaining([
        [[13], "PG 119", 216],
        [[15], "PG 112", 57],
      ]),
    );
    expect(kinds(fs)).not.toContain("rank_behind");
  });

  it("else the one named group whose ranks time out in the same work", () => {
    const fs = run([wd(3, 57, "ALLREDUCE"), wd(4, 57, "ALLREDUCE"), st(4, 112, 57, 57, 56)]);
    expect(fs.find((f) => f.kind === "watchdog_timeout" && f.ranks.includes(3))).toMatchObject({ ranks: [3, 4], process_group: "PG 112" });
  });
});

describe("PyTorch's error lines", () => {
  it("38: a watchdog that died on a CUDA error is a GPU fault on that rank, said first", () => {
    const f = run([
      "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
    ]);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ kind: "nccl_error", ranks: [0], process_group: "PG 3" });
    expect(f[0]?.summary).toMatch(
      /^A CUDA error stopped PyTorch's NCCL watchdog on rank 0 \(PG 3\): CUDA error: an illegal memory access was encountered\. The fault is on that rank's GPU/,
    );
  });

  it("30: ncclRemoteError with its last error on the next row is a network error naming the rank and the error", () => {
    const f = run([
      "[rank3]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3763, remote process exited or there was a network error, NCCL version 2.28.8",
      "[rank3]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
      "[rank3]: Last error:",
      "[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
    ]);
    expect(f.map((x) => [x.kind, x.ranks])).toEqual([["network_error", [3]]]);
    expect(f[0]?.summary).toContain("last error: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE)");
  });
});

describe("DETAIL and monitoredBarrier", () => {
  const fp = (rank: number, seq: number): string =>
    `[I ProcessGroupWrapper.cpp:562] [Rank ${rank}] Running collective: CollectiveFingerPrint(SequenceNumber=${seq}, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda))`;

  it("11: where the log stops, the rank at the lower Running collective is behind (a warning: the log may just end)", () => {
    const f = run([fp(0, 1276), fp(1, 1276), fp(2, 1276), fp(0, 1277), fp(1, 1277), fp(3, 1276), fp(3, 1277)]);
    expect(f.map((x) => [x.kind, x.severity, x.ranks, x.seq])).toEqual([["rank_behind", "warning", [2], 1277]]);
  });

  it("ranks that all stopped at the same collective: nothing", () => {
    expect(run([fp(0, 9), fp(1, 9)])).toEqual([]);
  });

  it("22: gloo's barrier errors: the rank it waited for failed, the job stops there", () => {
    const f = run([
      "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    ]);
    expect(f.map((x) => [x.kind, x.ranks])).toEqual([["hang_suspected", [0, 3]]]);
    expect(f[0]?.summary).toMatch(/^Rank 0 failed or died: rank 3 reached monitoredBarrier/);
  });
});
