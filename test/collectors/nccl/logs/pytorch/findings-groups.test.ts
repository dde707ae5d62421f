/**
 * PyTorch's lines from several ranks of one process group, read as one picture
 * (findings/pytorch-groups.ts, pytorch-errors.ts, pytorch-debug.ts). The lines follow PyTorch
 * 2.4-2.8's exact wording (the real ones are in test/fixtures/nccl-pasted/); the numbers are
 * chosen so that each case has one right verdict: S is the oldest work some rank has not completed.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

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

  it("07: every rank enqueued the work (one ran ahead enqueueing more) and none completed it: the collective hangs, nobody is behind, said in the timeout's one finding", () => {
    const fs = run([status(12, 2070, 2070, 2069), status(3, 2070, 2082, 2069), status(14, 2070, 2070, 2069)]);
    expect(kinds(fs)).toEqual(["watchdog_timeout"]);
    expect(fs[0]).toMatchObject({ ranks: [3, 12, 14], seq: 2070 });
    expect(fs[0]?.summary).toContain("Every rank shown (3,12,14) entered it and none completed it (enqueued up to #2082)");
  });

  it("without a timeout of that work, every rank in it and none completing it is a hang of its own", () => {
    const fs = run([dumped(0, 1, 2070, 2069), dumped(1, 0, 2070, 2069)]);
    expect(fs.filter((f) => f.kind !== "watchdog_timeout" || f.seq !== undefined).map((f) => [f.kind, f.ranks, f.seq])).toEqual([
      ["hang_suspected", [0, 1], 2070],
    ]);
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
        [[13], "PG 11 (GUID 119)", 216],
        [[15], "PG 11 (GUID 112)", 57],
      ]),
    );
    expect(kinds(fs)).not.toContain("rank_behind");
  });

  it("else the one named group whose ranks time out in the same work", () => {
    const fs = run([wd(3, 57, "ALLREDUCE"), wd(4, 57, "ALLREDUCE"), st(4, 112, 57, 57, 56)]);
    expect(fs.find((f) => f.kind === "watchdog_timeout" && f.ranks.includes(3))).toMatchObject({ ranks: [3, 4], process_group: "PG 11 (GUID 112)" });
  });
});

describe("PyTorch's error lines", () => {
  it("38: a watchdog that died on a CUDA error is a GPU fault on that rank, said first", () => {
    const f = run([
      "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
    ]);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ kind: "nccl_error", ranks: [0], process_group: "PG 2 (GUID 3)" });
    expect(f[0]?.summary).toMatch(
      /^A CUDA error stopped PyTorch's NCCL watchdog on rank 0 \(PG 2 \(GUID 3\)\): CUDA error: an illegal memory access was encountered\. The fault is on that rank's GPU/,
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

describe("issue 29: -1, status-only ranks, unnamed groups, newer backends' names", () => {
  const wd = (rank: number, seq: number, op: string, prefix = ""): string =>
    `${prefix}[rank${rank}]:[E314 14:33:45.172185860 ProcessGroupNCCL.cpp:607] [Rank ${rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=${seq}, OpType=${op}, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600009 milliseconds before timing out.`;

  it("last completed -1 is nothing completed (the first work is 1), not work #0 pending: no rank behind", () => {
    // Rank 1's status says -1 (PyTorch 2.4+); rank 0 only printed its watchdog line for SeqNum=1.
    const fs = run([status(1, 1, 1, -1), wd(0, 1, "ALLREDUCE")]);
    expect(kinds(fs)).not.toContain("rank_behind");
    expect(fs.find((f) => f.kind === "watchdog_timeout")).toMatchObject({ ranks: [0, 1], seq: 1, process_group: "PG 0 (default_pg)" });
    expect(fs.find((f) => f.kind === "watchdog_timeout")?.summary).toContain("none completed it");
  });

  it("-1 beside a rank that completed work #1: the -1 rank is behind at #1, not #0", () => {
    const fs = run([status(1, 1, 1, -1), dumped(0, 1, 3, 1)]);
    expect(fs.find((f) => f.kind === "rank_behind")).toMatchObject({ ranks: [1], seq: 1 });
  });

  it("01/07: a rank that printed only its status line about the timed-out work joins that work's timeout", () => {
    const fs = run([wd(0, 7753, "_REDUCE_SCATTER_BASE"), status(0, 7753, 7755, 7752), status(2, 7753, 7755, 7752)]);
    const wds = fs.filter((f) => f.kind === "watchdog_timeout");
    expect(wds.map((f) => [f.ranks, f.seq, f.process_group])).toEqual([[[0, 2], 7753, "PG 0 (default_pg)"]]);
  });

  it("a status-only rank at another work keeps its own finding", () => {
    const fs = run([wd(0, 7753, "ALLREDUCE"), status(0, 7753, 7755, 7752), status(2, 7754, 7755, 7753)]);
    const wds = fs.filter((f) => f.kind === "watchdog_timeout").map((f) => [f.ranks, f.seq]);
    expect(wds).toEqual([
      [[0], 7753],
      [[2], 7754],
    ]);
  });

  it("02: unnamed watchdog lines 32,000 SeqNums apart are of different groups: no rank behind", () => {
    const old = (rank: number, seq: number): string =>
      `[E ProcessGroupNCCL.cpp:458] [Rank ${rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=${seq}, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625251 milliseconds before timing out.`;
    const fs = run([old(0, 96117), old(0, 96120), old(7, 64088)]);
    expect(kinds(fs)).not.toContain("rank_behind");
    expect(fs.filter((f) => f.kind === "watchdog_timeout").map((f) => [f.ranks, f.seq])).toEqual([
      [[0], 96117],
      [[0], 96120],
      [[7], 64088],
    ]);
  });

  it("93: unnamed watchdog lines two SeqNums apart are still one group: the lower ranks are behind", () => {
    const fs = run([wd(1, 532339, "BROADCAST"), wd(2, 532339, "BROADCAST"), wd(0, 532341, "_ALLGATHER_BASE")]);
    expect(fs.find((f) => f.kind === "rank_behind")).toMatchObject({ ranks: [1, 2], seq: 532340, process_group: "PG 0" });
  });

  it("a group described gloo:/ncclx: is read like any other, and named as the line names it", () => {
    const st = (rank: number, desc: string): string =>
      `[rank${rank}]:[E1127 10:00:00.000000000 ProcessGroupNCCL.cpp:1785] [PG ID 3 PG GUID 17(${desc}) Rank ${rank}] Exception (either an error or timeout) detected by watchdog at work: 42, last enqueued NCCL work: 42, last completed NCCL work: 41.`;
    const fs = run([wd(0, 42, "ALLREDUCE"), st(0, "ncclx:tp"), wd(1, 42, "ALLREDUCE"), st(1, "ncclx:tp")]);
    expect(fs.map((f) => [f.kind, f.ranks, f.seq, f.process_group])).toEqual([["watchdog_timeout", [0, 1], 42, "PG 3 (GUID 17, ncclx:tp)"]]);
    const g = run([st(0, "gloo:dp"), wd(0, 42, "ALLREDUCE")]);
    expect(g.find((f) => f.kind === "watchdog_timeout")).toMatchObject({ ranks: [0], seq: 42, process_group: "PG 3 (GUID 17, gloo:dp)" });
  });

  it("TorchComms' NCCL backend (c10d/nccl2): `[TC][rank=N][name=X] Operation timed out after N ms` is a watchdog timeout of group X", () => {
    const tc = (rank: number, name: string): string =>
      `[rank${rank}]:[E1127 10:00:00.000000000 WorkNCCL.cpp:190] [TC][rank=${rank}][name=${name}] Operation timed out after 600012 ms`;
    const fs = run([tc(0, "ncclx:dp"), tc(3, "ncclx:dp")]);
    expect(fs.find((f) => f.kind === "watchdog_timeout")).toMatchObject({ ranks: [0, 3], process_group: "PG ncclx:dp" });
  });
});

describe("watchdog lines of one work with different sizes", () => {
  const timeout = (rank: number, op: string, numel: number, pg = "[PG ID 2 PG GUID 5(tp) Rank"): string =>
    `[rank${rank}]:[E1101 10:00:00.000000000 ProcessGroupNCCL.cpp:632] ${pg} ${rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3497, OpType=${op}, NumelIn=${numel}, NumelOut=${numel * 2}, Timeout(ms)=1800000) ran for 1800045 milliseconds before timing out.`;

  it("the real capture (pasted 277, ms-swift ZeRO-3): _ALLGATHER_BASE 3497 with NumelIn 1572864 and 512 is a mismatch, not a collective that does not finish", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("277-")) ?? "";
    const fs = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings;
    expect(fs.map((f) => [f.kind, f.ranks, f.seq, f.op])).toEqual([
      ["collective_mismatch", [0, 1], 3497, "_ALLGATHER_BASE"],
      ["watchdog_timeout", [0, 1], 3497, "_ALLGATHER_BASE"],
    ]);
    expect(fs[0]?.summary).toContain("with different sizes: rank 0 with NumelIn=1572864, rank 1 with NumelIn=512.");
    expect(fs[1]?.summary).not.toContain("the collective itself does not finish");
  });

  it("where ranks may pass different sizes (all-to-all's uneven splits) or the sizes agree: no mismatch", () => {
    expect(run([timeout(0, "ALLTOALL_BASE", 100), timeout(1, "ALLTOALL_BASE", 300)]).map((f) => f.kind)).toEqual(["watchdog_timeout"]);
    expect(run([timeout(0, "ALLREDUCE", 100), timeout(1, "ALLREDUCE", 100)]).map((f) => f.kind)).toEqual(["watchdog_timeout"]);
    expect(run([timeout(0, "ALLREDUCE", 100), timeout(1, "ALLREDUCE", 101)]).map((f) => f.kind)).toEqual(["collective_mismatch", "watchdog_timeout"]);
  });

  it("lines not sure of their group (no PG named, no status line), or a rank seen at two sizes (a restart, logs put together): no comparison", () => {
    expect(run([timeout(0, "ALLREDUCE", 100, "[Rank"), timeout(1, "ALLREDUCE", 101, "[Rank")]).map((f) => f.kind)).toEqual(["watchdog_timeout"]);
    expect(run([timeout(0, "BROADCAST", 1000), timeout(0, "BROADCAST", 2000)]).map((f) => f.kind)).toEqual(["watchdog_timeout"]);
  });
});

describe("a rank's own dump signal", () => {
  it("the real capture (pasted 294): rank 0 printed only `First PG on this rank to signal dumping` in PG 1; it joins PG 1's one timeout", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("294-")) ?? "";
    const text = readCapture(`nccl-pasted/${name}`);
    const fs = analyzeLogs([{ name, text }]).findings;
    expect(fs.map((f) => [f.kind, f.ranks, f.seq, f.process_group])).toEqual([["watchdog_timeout", [0, 3], 55485, "PG 1"]]);
    // Without rank 3's timeout, rank 0's signal alone says nothing of which work.
    const alone = text
      .split("\n")
      .filter((l) => l.startsWith("[rank0]"))
      .join("\n");
    expect(analyzeLogs([{ name, text: alone }]).findings).toEqual([]);
    // A rank whose watchdog died of an error of its own failed another way: it does not join the timeout.
    const failed = `[rank0]:[E1026 04:01:20.500953846 ProcessGroupNCCL.cpp:1895] [PG ID 1 PG GUID 1 Rank 0] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5\n${text}`;
    expect(
      analyzeLogs([{ name, text: failed }])
        .findings.filter((f) => f.kind === "watchdog_timeout")
        .map((f) => f.ranks),
    ).toEqual([[3]]);
  });
});

describe("DETAIL mismatches of sequence numbers", () => {
  const fp = (seq: number): string =>
    `CollectiveFingerPrint(SequenceNumber=${seq}, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))`;
  const mismatch = (a: number, b: number): Finding[] =>
    run([`RuntimeError: Detected mismatch between collectives on ranks. Rank 16 is running collective: ${fp(a)}, but Rank 1 is running collective: ${fp(b)}.`]);

  it("a rank one collective short is behind at the next one", () => {
    const fs = mismatch(1204, 1203);
    expect(fs.map((f) => [f.kind, f.ranks, f.seq])).toEqual([
      ["rank_behind", [1], 1204],
      ["collective_mismatch", [16, 1], 1204],
    ]);
  });

  it("numbers far apart began apart (Gloo's random start before PyTorch 2.1, pytorch/pytorch#101422): a mismatch, nobody behind", () => {
    const fs = mismatch(1977865401, 54090078);
    expect(fs.map((f) => [f.kind, f.ranks, f.seq])).toEqual([["collective_mismatch", [16, 1], 1977865401]]);
  });

  it("two or more apart counted apart before the check (sends and receives; pasted 262, BARRIER 17 vs 45): a mismatch, nobody behind", () => {
    expect(mismatch(1205, 1203).map((f) => f.kind)).toEqual(["collective_mismatch"]);
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("262-")) ?? "";
    const fs = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings;
    expect(fs.map((f) => [f.kind, f.ranks, f.seq, f.op])).toEqual([["collective_mismatch", [11, 0], 17, "BARRIER"]]);
  });
});

describe("issue 29 captures (nccl-pasted 64-67, 99)", () => {
  const capture = (prefix: string): Finding[] => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix));
    if (name === undefined) throw new Error(`no fixture ${prefix}`);
    return analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings;
  };
  const top = (fs: readonly Finding[]): unknown[] => fs.filter((f) => f.severity !== "info").map((f) => [f.kind, f.ranks, f.seq ?? null]);

  it("99: a rank's timeout line cut before its SeqNum repeats the whole one: one finding", () => {
    const fs = capture("99-");
    expect(fs.map((f) => [f.kind, f.ranks, f.seq, f.process_group, f.evidence.length])).toEqual([["watchdog_timeout", [3], 8, "PG 5", 1]]);
  });

  it("64: default_pg's first work never completed on rank 1 (last completed -1): a timeout at #1, nobody behind", () => {
    const fs = capture("64-");
    // "Some NCCL operations have failed or timed out" / "taking the entire process down" follow the timeout: no NCCL error of their own.
    expect(top(fs)).toEqual([["watchdog_timeout", [1], 1]]);
    expect(fs[0]?.process_group).toBe("PG 0 (default_pg)");
  });

  it("65: rank 7's `SequenceNumber=0OpType=REDUCE` is the decoded length check: a mismatch at #101, nobody behind", () => {
    const fs = capture("65-");
    expect(top(fs)).toEqual([["collective_mismatch", [1, 7], 101]]);
    expect(fs[0]).toMatchObject({ op: "ALLGATHER" });
    expect(fs[0]).not.toHaveProperty("other_op");
  });

  it("19 keeps its rank behind: two BARRIERs without tensors at 1 and 0 are real sequence numbers", () => {
    expect(top(capture("19-"))).toEqual([
      ["rank_behind", [2], 1],
      ["collective_mismatch", [1, 2], 1],
    ]);
  });

  it("67: PyTorch 2.3's `last completed NCCL work: 0` at the first work reads the same as 2.4's -1", () => {
    const fs = capture("67-");
    expect(top(fs)).toEqual([["watchdog_timeout", [3], 1]]);
    expect(fs[0]).toMatchObject({ process_group: "PG 0", op: "ALLREDUCE" });
  });

  it("01: ranks 0, 2 and 6's `Some NCCL operations have failed or timed out` are the timeout's aftermath, not NCCL errors", () => {
    const fs = capture("01-");
    expect(kinds(fs)).not.toContain("nccl_error");
    expect(fs.find((f) => f.kind === "watchdog_timeout")).toMatchObject({ ranks: [0, 2, 3, 4, 6], seq: 7753, process_group: "PG 1" });
  });

  it("299: rank 0's aftermath after rank 1's own dump signal of a timeout (no timeout line) joins that timeout, not an NCCL error", () => {
    const fs = capture("299-");
    expect(top(fs)).toEqual([["watchdog_timeout", [0, 1], 13]]);
    expect(fs[0]?.summary).toContain("Rank 0 printed only that NCCL operations failed");
  });

  it("the same aftermath lines with no timeout anywhere in the logs stay an NCCL error of that rank", () => {
    const fs = run([
      "[rank4]:[E318 07:39:53.792790830 ProcessGroupNCCL.cpp:630] [Rank 4] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
      "[rank4]:[E318 07:39:53.792795153 ProcessGroupNCCL.cpp:636] [Rank 4] To avoid data inconsistency, we are taking the entire process down.",
    ]);
    expect(fs.map((f) => [f.kind, f.ranks])).toEqual([["nccl_error", [4]]]);
  });

  it("66: rank 6's watchdog line (no group, status line cut) is in PG 9 with rank 4, same SeqNum and OpType", () => {
    const fs = capture("66-");
    expect(fs.find((f) => f.kind === "watchdog_timeout")).toMatchObject({ ranks: [4, 6], seq: 610, op: "COALESCED", process_group: "PG 2 (GUID 9)" });
    expect(kinds(fs)).not.toContain("rank_behind");
  });
});
