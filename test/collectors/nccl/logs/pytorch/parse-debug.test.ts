/**
 * TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatches and monitoredBarrier failures, on the real
 * lines of the pasted corpus (test/fixtures/nccl-pasted/16, 19, 20, 21): both fingerprints as far
 * as the paste kept them, the older form without separators, the ranks that failed the barrier.
 */
import { describe, expect, it } from "vitest";
import { parseText } from "../../../../../collectors/nccl/logs/parse/line.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const events = (prefix: string): ReturnType<typeof parseText> => {
  const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix));
  if (name === undefined) throw new Error(`no fixture ${prefix}`);
  return parseText(readCapture(`nccl-pasted/${name}`)).filter((e) => e.kind === "pt_mismatch" || e.kind === "pt_barrier");
};

describe("PyTorch DETAIL mismatches and monitoredBarrier", () => {
  it("16: the same ALLREDUCE #3104 with different shapes on ranks 1 and 0", () => {
    expect(events("16-")[0]).toMatchObject({
      kind: "pt_mismatch",
      rankA: 1,
      a: { seq: 3104, op: "ALLREDUCE", shape: "195812480", dtype: "BFloat16" },
      rankB: 0,
      b: { seq: 3104, op: "ALLREDUCE", shape: "51123456" },
    });
  });

  it("19: the older form without separators, BARRIER #1 on rank 1 vs #0 on rank 2", () => {
    expect(events("19-")[0]).toMatchObject({ kind: "pt_mismatch", rankA: 1, a: { seq: 1, op: "BARRIER" }, rankB: 2, b: { seq: 0, op: "BARRIER" } });
  });

  it("20: ALLREDUCE vs BROADCAST at #485", () => {
    expect(events("20-")[0]).toMatchObject({
      rankA: 1,
      a: { seq: 485, op: "ALLREDUCE", shape: "25", dtype: "Float" },
      rankB: 0,
      b: { seq: 485, op: "BROADCAST" },
    });
  });

  it("21: ranks 6 failed to pass monitoredBarrier, reported by rank 0 after its timeout", () => {
    expect(events("21-")[0]).toMatchObject({ kind: "pt_barrier", ranks: [6], reporter: 0, timeoutMs: 180000000000 });
  });
});

describe("a fingerprint with or without tensors (issue 29)", () => {
  it("65: rank 7's `SequenceNumber=0OpType=REDUCE` has no tensors, rank 1's has", () => {
    expect(events("65-")[0]).toMatchObject({
      kind: "pt_mismatch",
      rankA: 1,
      a: { seq: 101, op: "ALLGATHER", shape: "1", dtype: "Long", tensors: true },
      rankB: 7,
      b: { seq: 0, op: "REDUCE", tensors: false },
    });
  });

  it("19: both BARRIER fingerprints have no tensors", () => {
    expect(events("19-")[0]).toMatchObject({ a: { seq: 1, op: "BARRIER", tensors: false }, b: { seq: 0, op: "BARRIER", tensors: false } });
  });
});
