/**
 * Point-to-point is no collective mismatch: a Send facing a Recv at one sequence index is the pair
 * that matches, and two communicators of one process are not compared with each other. The real
 * captures (NVIDIA/nccl #584, #787) are in the pasted corpus (files 77, 78); here the same lines,
 * in the format of those captures, with and without Init lines, and the mismatch that must still be
 * found.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";

const init = (host: string, pid: number, rank: number, ptr: string): string =>
  `${host}:${pid}:${pid + 10} [0] NCCL INFO comm ${ptr} rank ${rank} nranks 2 cudaDev 0 busId 7000 commId 0xabc123 - Init COMPLETE`;
const coll = (host: string, pid: number, dev: number, op: string, opCount: string, ptr: string): string =>
  `${host}:${pid}:${pid + 10} [${dev}] NCCL INFO ${op}: opCount ${opCount} sendbuff 0x7f505e93c000 recvbuff (nil) count 2420736 datatype 7 op 0 root 1 comm ${ptr} [nranks=2] stream 0x55f1de727ae0`;

const mismatches = (lines: string[]) =>
  analyzeLogs([{ name: "p2p.log", text: lines.join("\n") }])
    .findings.filter((f) => f.kind === "collective_mismatch")
    .map((f) => [f.op, f.other_op, f.processes]);

describe("point-to-point and collective mismatches", () => {
  it("a Send on rank 0 and a Recv on rank 1 at one index of a communicator are no mismatch", () => {
    expect(
      mismatches([init("a", 100, 0, "0x1"), init("b", 200, 1, "0x2"), coll("a", 100, 0, "Send", "0", "0x1"), coll("b", 200, 0, "Recv", "0", "0x2")]),
    ).toEqual([]);
  });

  it("an AllReduce on rank 0 facing a Broadcast on rank 1 is", () => {
    const found = analyzeLogs([
      {
        name: "p2p.log",
        text: [init("a", 100, 0, "0x1"), init("b", 200, 1, "0x2"), coll("a", 100, 0, "AllReduce", "0", "0x1"), coll("b", 200, 0, "Broadcast", "0", "0x2")].join(
          "\n",
        ),
      },
    ]).findings.filter((f) => f.kind === "collective_mismatch");
    expect(found.map((f) => [f.ranks, f.op, f.other_op, f.seq])).toEqual([[[0, 1], "AllReduce", "Broadcast", 1]]);
  });

  it("without Init lines: two pointers of one process on one GPU are two communicators, never compared", () => {
    expect(mismatches([coll("u", 1, 1, "AllReduce", "d60", "0xa"), coll("u", 1, 1, "Broadcast", "d60", "0xb")])).toEqual([]);
  });

  it("without Init lines: two processes (or one process's two GPUs) with different collectives at one opCount are a mismatch, a Send and a Recv are not", () => {
    expect(mismatches([coll("u", 1, 0, "AllReduce", "5", "0xa"), coll("v", 2, 0, "AllGather", "5", "0xb")])).toEqual([
      ["AllReduce", "AllGather", ["u:1", "v:2"]],
    ]);
    expect(mismatches([coll("u", 1, 0, "AllReduce", "5", "0xa"), coll("u", 1, 1, "AllGather", "5", "0xb")])).toEqual([
      ["AllReduce", "AllGather", ["u:1", "u:1"]],
    ]);
    expect(mismatches([coll("u", 1, 0, "Recv", "0", "0xa"), coll("u", 1, 1, "Send", "0", "0xb")])).toEqual([]);
  });
});
