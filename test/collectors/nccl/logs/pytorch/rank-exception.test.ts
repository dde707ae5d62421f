/**
 * A rank's own Python exception while other ranks hang (collectors/nccl/logs/pytorch/rank-exception.ts):
 * the real captures nccl-pasted 880 and 881 (Megatron-DeepSpeed, a rank's FileNotFoundError, then
 * the other node's watchdog timeouts), and the lines it must leave alone.
 */
import { describe, expect, it } from "vitest";
import { rankException } from "../../../../../collectors/nccl/logs/pytorch/rank-exception.js";
import { allFindings, brief, pastedText, seriousFindings } from "../../../../helpers/pasted.js";

describe("a rank's own exception while the others hang", () => {
  it("881: rank 4's FileNotFoundError is the rank ranks 0-3 waited for, the verdict before their timeouts", () => {
    const fs = seriousFindings(pastedText("881-"));
    expect(brief(fs)).toEqual([
      ["rank_behind", "critical", [4]],
      ["watchdog_timeout", "critical", [0, 1, 2, 3]],
    ]);
    expect(fs[0]?.waiting_ranks).toEqual([0, 1, 2, 3]);
    expect(fs[0]?.summary).toMatch(
      /^Rank 4 failed with an exception before the others' hang \(rank 4: FileNotFoundError: \[Errno 2\] No such file or directory: '\/home\/sd\/Megatron-DeepSpeed\/data\/index-cache\/8cbe547d3d2e5414d9e875127d540d2c_doc_idx\.npy', at x\.log:1\) and left the job: ranks 0-3, whose collective SeqNum=8 \(ALLREDUCE\) did not finish, waited for it \(their "enqueued but not completed" follows from it\)\. That exception is the cause, not the network or a GPU/,
    );
    expect(fs[0]?.evidence).toEqual(["x.log:1", "x.log:8"]);
  });

  it("880: rank 12's exception, behind pdsh's host prefix, beside ranks 0 and 4's timeouts", () => {
    const fs = seriousFindings(pastedText("880-"));
    expect(brief(fs).slice(0, 2)).toEqual([
      ["rank_behind", "critical", [12]],
      ["watchdog_timeout", "critical", [0, 4]],
    ]);
  });

  it("alone, with no rank that hangs, the exception is no rank behind; nor is a failed rank among those that timed out", () => {
    const lines = pastedText("881-").split("\n");
    expect(allFindings(lines.slice(0, 1).join("\n")).filter((f) => f.kind === "rank_behind")).toEqual([]);
    const own = lines.map((l) => l.replace("[rank4]: FileNotFoundError", "[rank1]: FileNotFoundError")).join("\n");
    expect(seriousFindings(own).filter((f) => f.kind === "rank_behind")).toEqual([]);
  });

  // Inputs written by the review of this reader (PyTorch 2.x's `[rankN]:` lines): consequences of the hang, no culprit.
  const noCulprit: [string, string][] = [
    [
      "a stop's words: a time limit's SIGTERM killed the DataLoader workers",
      "slurmstepd: error: *** STEP 88123.0 ON nodeB CANCELLED AT 2026-03-28T02:40:00 DUE TO TIME LIMIT ***\n[rank4]: RuntimeError: DataLoader worker (pid 55124) is killed by signal: Terminated. \n[rank5]: RuntimeError: DataLoader worker (pid 55125) is killed by signal: Terminated. \n[rank6]: RuntimeError: DataLoader worker (pid 55126) is killed by signal: Terminated. \n[rank7]: RuntimeError: DataLoader worker (pid 55127) is killed by signal: Terminated. \n[rank0]:[E328 01:06:50.50541420 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank1]:[E328 01:06:50.50541421 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank2]:[E328 01:06:50.50541422 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank3]:[E328 01:06:50.50541423 ProcessGroupNCCL.cpp:683] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.",
    ],
    [
      "the store gone: Broken pipe, Stop_waiting",
      "[rank0]:[E328 01:06:50.50541420 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank1]:[E328 01:06:50.50541421 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank2]:[E328 01:06:50.50541422 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank3]:[E328 01:06:50.50541423 ProcessGroupNCCL.cpp:683] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank5]: RuntimeError: Broken pipe\n[rank6]: RuntimeError: Stop_waiting response is expected",
    ],
    [
      "an exception after the timeouts, the restart's",
      "[rank0]:[E328 01:06:50.50541420 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank1]:[E328 01:06:50.50541421 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank2]:[E328 01:06:50.50541422 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank3]:[E328 01:06:50.50541423 ProcessGroupNCCL.cpp:683] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[2026-03-28 01:10:02,000] torch.distributed.elastic.agent.server.api: [WARNING] Restarting worker group\n[rank4]: FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/latest/model.pt'",
    ],
    [
      "prose that quotes the line",
      "Note from on-call: yesterday we also saw [rank4]: FileNotFoundError: [Errno 2] No such file or directory: '/x' but that was fixed\n[rank0]:[E328 01:06:50.50541420 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank1]:[E328 01:06:50.50541421 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank2]:[E328 01:06:50.50541422 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank3]:[E328 01:06:50.50541423 ProcessGroupNCCL.cpp:683] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.",
    ],
    [
      "a log's own `Error: ...`",
      "[rank6]: Error: wandb.init() timed out\n[rank6]: Error: could not open tokenizer.json, falling back\n[rank0]:[E328 01:06:50.50541420 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank1]:[E328 01:06:50.50541421 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank2]:[E328 01:06:50.50541422 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.\n[rank3]:[E328 01:06:50.50541423 ProcessGroupNCCL.cpp:683] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800014 milliseconds before timing out.",
    ],
  ];

  it.each(noCulprit)("no rank named for %s", (_what, text) => {
    expect(seriousFindings(text).filter((f) => f.kind === "rank_behind")).toEqual([]);
  });

  it("reads the traceback's last line only, and leaves the distributed layer's own exceptions alone", () => {
    expect(rankException("[rank3]: ValueError: bad batch")).toEqual({ rank: 3, exception: "ValueError", message: "bad batch" });
    expect(rankException("node2: [rank11]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")).toMatchObject({
      rank: 11,
      exception: "torch.OutOfMemoryError",
    });
    for (const l of [
      "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error",
      "[rank0]: RuntimeError: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE)",
      "[rank2]: RuntimeError: Socket Timeout",
      "[rank2]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.5]:36245",
      "[rank0]: torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
      '[rank3]:   File "/job/train.py", line 88, in train_step',
      "[rank3]:     raise ValueError: no",
      "[default3]: ValueError: a local rank's, no global rank",
      "[rank3]: Warning: something",
    ])
      expect(rankException(l)).toBeUndefined();
  });
});
