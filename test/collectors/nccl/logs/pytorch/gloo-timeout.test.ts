/**
 * Gloo's own timeout (logs/pytorch/gloo-timeout.ts). The real capture is nccl-pasted 495
 * (torchtune: `torch.distributed.barrier()` before a checkpoint save, `[rank2]:` prefix).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { glooTimeout } from "../../../../../collectors/nccl/logs/pytorch/gloo-timeout.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const text = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);

describe("Gloo's timeout", () => {
  it("495: rank 2 waited 1800000 ms in a recv: one critical hang_suspected naming it", () => {
    const fs = analyzeLogs([{ name: "x.log", text: text("495-") }]).findings.filter((f) => f.severity !== "info");
    expect(fs.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "critical", [2]]]);
    expect(fs[0]?.summary).toContain("Gloo timed out after 1800000 ms waiting for a recv on rank 2");
  });

  it("send and recv, with or without a prefix; the same words outside Gloo's source are nothing", () => {
    expect(
      glooTimeout(
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 600000ms for send operation to complete",
        "l:1",
      ),
    ).toEqual({
      ms: 600000,
      op: "send",
      where: "l:1",
    });
    expect(glooTimeout("Timed out waiting 5000ms for recv operation to complete", "l:1")).toBeUndefined();
    expect(glooTimeout("[x/gloo/transport/tcp/pair.cc:1] Timed out waiting for connection", "l:1")).toBeUndefined();
    const two = analyzeLogs([
      {
        name: "y.log",
        text: [0, 1, 1]
          .map(
            (r) =>
              `[rank${r}]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete`,
          )
          .join("\n"),
      },
    ]).findings;
    expect(two.map((f) => [f.kind, f.ranks, f.evidence])).toEqual([["hang_suspected", [0, 1], ["y.log:1", "y.log:2"]]]);
  });

  it("behind a failure the logs hold already it is a warning that points at it; prose that quotes it is nothing", () => {
    const gloo = (r: number): string =>
      `[rank${r}]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete`;
    const fs = analyzeLogs([
      {
        name: "z.log",
        text: [
          "[rank3]:[E ProcessGroupNCCL.cpp:915] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1204, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.",
          gloo(0),
          gloo(1),
        ].join("\n"),
      },
    ]).findings;
    expect(fs.map((f) => [f.kind, f.severity, f.ranks])).toEqual([
      ["watchdog_timeout", "critical", [3]],
      ["hang_suspected", "warning", [0, 1]],
    ]);
    expect(fs[1]?.summary).toContain("The failure these logs show elsewhere is the likely reason");
    const prose =
      "If the save takes longer you may see `RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete`.";
    expect(glooTimeout(prose, "l:1")).toBeUndefined();
  });

  it("a rank whose Gloo mesh could not connect is the failure the others' timeouts wait for (evidence.ts's order)", () => {
    const lines = [
      "[rank2]:[E421 02:05:38.764490322 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
      "[rank0]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
    ];
    const fs = analyzeLogs([{ name: "m.log", text: lines.join("\n") }]).findings;
    expect(fs.map((f) => [f.kind, f.severity, f.ranks])).toEqual([
      ["network_error", "critical", [2]],
      ["hang_suspected", "warning", [0]],
    ]);
    // Alone, the same timeout is the verdict.
    const alone = analyzeLogs([{ name: "m.log", text: lines[1] ?? "" }]).findings;
    expect(alone.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "critical", [0]]]);
  });
});
