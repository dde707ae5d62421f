/**
 * Forms the twenty-second blind set brought, from its real captures (test/fixtures/nccl-pasted 614,
 * 618): Horovod's `Missing ranks:` lists that cross (each rank missing what the other submitted), and
 * a `py-spy dump --native` thread stopped inside NCCL's calls.
 */
import { describe, expect, it } from "vitest";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

const header =
  "[2020-12-29 16:51:57.726092: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.";
const stall = (...rows: string[]): string => [header, "Missing ranks:", ...rows].join("\n");

describe("Horovod's `Missing ranks:` lists that cross (614)", () => {
  it("rank 0 misses a broadcast, rank 1 six allreduces and more (` ...`): rank 1's cut list may hide the broadcast, so ranks behind", () => {
    const fs = seriousFindings(pastedText("614-"));
    expect(brief(fs)).toEqual([["rank_behind", "warning", [0, 1]]]);
  });

  it("each missing what the other's list shows it submitted: a collective_mismatch; a cut list proves only the names before its last", () => {
    const both = seriousFindings(stall("0: [broadcast.x]", "1: [allreduce.a]"));
    expect(brief(both)).toEqual([["collective_mismatch", "critical", [0, 1]]]);
    expect(both[0]?.summary).toContain("rank 0 submitted allreduce.a; rank 1 submitted broadcast.x");
    // Horovod sorts each list: `allgather.x` would stand before `allreduce.b` in rank 1's, so rank 1 submitted it.
    expect(brief(seriousFindings(stall("0: [allgather.x]", "1: [allreduce.a, allreduce.b ...]")))).toEqual([["collective_mismatch", "critical", [0, 1]]]);
    // `broadcast.x` would stand after `allreduce.b`, where the list was cut.
    expect(brief(seriousFindings(stall("0: [broadcast.x]", "1: [allreduce.a, allreduce.b ...]")))).toEqual([["rank_behind", "warning", [0, 1]]]);
  });

  it("lists that share a tensor, and the per-tensor form's rank sets, are ranks behind, not a mismatch", () => {
    expect(brief(seriousFindings(stall("0: [allreduce.a, allreduce.b]", "1: [allreduce.b]")))).toEqual([["rank_behind", "warning", [0, 1]]]);
    expect(brief(seriousFindings(stall("2: [allreduce.a]")))).toEqual([["rank_behind", "warning", [2]]]);
    const perTensor = [header, "Stalled ops:allreduce.a [missing ranks: 1]", "allreduce.b [missing ranks: 1, 2]"].join("\n");
    expect(brief(seriousFindings(perTensor))).toEqual([["rank_behind", "warning", [1, 2]]]);
  });
});

describe("py-spy dump --native: a thread stopped inside NCCL's calls (618)", () => {
  it("the main thread in ncclGroupEnd under ProcessGroupNCCL::getNCCLComm: a hang_suspected warning, a wait in communicator init", () => {
    const fs = seriousFindings(pastedText("618-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(
      /^A native backtrace \(py-spy --native\) shows a thread stopped inside NCCL's ncclGroupEnd \(called from c10d::ProcessGroupNCCL::getNCCLComm\): /,
    );
    expect(fs[0]?.summary).toContain("A communicator's init returns only when every rank has joined it");
  });

  it("a dump behind `[rankN]:` names that rank; a dump of Python frames alone is no native wait", () => {
    const dump = (rank: number, native: boolean): string[] => [
      `[rank${rank}]:Process ${4000 + rank}: python train.py`,
      `[rank${rank}]:Python v3.10.12 (/usr/bin/python3.10)`,
      `[rank${rank}]:`,
      `[rank${rank}]:Thread ${4000 + rank} (idle): "MainThread"`,
      ...(native ? [`[rank${rank}]:    ncclAllReduce (enqueue.cc:2109)`, `[rank${rank}]:    c10d::ProcessGroupNCCL::allreduce_impl (libtorch_cuda.so)`] : []),
      `[rank${rank}]:    all_reduce (torch/distributed/distributed_c10d.py:2050)`,
      `[rank${rank}]:    train_step (train.py:88)`,
    ];
    const fs = seriousFindings([...dump(3, true), ...dump(5, false)].join("\n"));
    // Rank 5's Python-only stack differs from rank 3's: the stacks' own outlier finding, beside rank 3's wait.
    expect(brief(fs)).toEqual([
      ["stack_outlier", "warning", [5]],
      ["hang_suspected", "warning", [3]],
    ]);
    expect(fs[1]?.summary).toContain("inside NCCL's ncclAllReduce (called from c10d::ProcessGroupNCCL::allreduce_impl)");
    // Alone, rank 5's idle all_reduce is torch.distributed's note, raised as the one evidence; no native wait.
    const alone = seriousFindings(dump(5, false).join("\n"));
    expect(brief(alone)).toEqual([["hang_suspected", "warning", [5]]]);
    expect(alone[0]?.summary).toMatch(/^A py-spy dump shows a thread idle inside torch\.distributed's all_reduce /);
  });
});
