/**
 * Init that never completed (logs/findings/init.ts), on the real captures: a 4-node job that hangs
 * after Init START (NVIDIA/nccl-tests #311, no Init COMPLETE on any of its 8 ranks), an excerpt cut
 * during init, and a whole run whose init completed. The one scenario no capture holds (some ranks
 * completed init and went on to a collective, one did not) is built from the same capture's lines.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { readCapture } from "../../../../helpers/fixtures.js";

const HANG_AT_INIT = "nccl/01-full-2.23.4-4node-ib-sharp-collnet-hang.log";
const CUT_IN_INIT = "nccl/22-init-ibext-sharp-16rank-pdsh-prefix.log";
const INIT_COMPLETED = "nccl/02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log";

const analyze = (name: string, text: string) => analyzeLogs([{ name, text }]);

describe("init that never completed", () => {
  it("names the 8 ranks of the job that logged Init START and never Init COMPLETE, at info: the logs may end during init", () => {
    const r = analyze("hang.log", readCapture(HANG_AT_INIT));
    const init = r.findings.filter((f) => f.summary.includes("Init START"));
    expect(init.map((f) => ({ kind: f.kind, severity: f.severity, ranks: f.ranks, comm: f.comm_id }))).toEqual([
      { kind: "hang_suspected", severity: "info", ranks: [0, 1, 2, 3, 4, 5, 6, 7], comm: "0x45701cda3f259923" },
    ]);
    expect(init[0]?.summary).toContain("Communicator 0x45701cda3f259923 (8 ranks): rank 0-7 logged Init START and no Init COMPLETE");
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
    expect(r.headline).toMatch(/^nothing wrong found at warning or above; a note below, the first: Communicator 0x45701cda3f259923/);
  });

  it("names only the ranks of an excerpt's communicator whose START it holds", () => {
    const init = analyze("cut.log", readCapture(CUT_IN_INIT)).findings.filter((f) => f.summary.includes("Init START"));
    expect(init.map((f) => [f.severity, f.ranks, f.comm_id])).toEqual([["info", [0, 1, 4, 7], "0x9ad9b5e4ab2566da"]]);
  });

  it("says nothing of init when every START has its COMPLETE", () => {
    const r = analyze("ok.log", readCapture(INIT_COMPLETED));
    expect(r.findings.filter((f) => f.summary.includes("Init START"))).toEqual([]);
  });

  it("calls the rank behind where the other ranks completed init and entered the first collective", () => {
    const lines = [
      "gpu34:34088:34116 [0] NCCL INFO ncclCommInitRank comm 0x5468150 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 7000 commId 0x70fba02a8d314739 - Init START",
      "gpu41:3928:3962 [0] NCCL INFO ncclCommInitRank comm 0x59f8cc0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 7000 commId 0x70fba02a8d314739 - Init START",
      "gpu34:34088:34116 [0] NCCL INFO ncclCommInitRank comm 0x5468150 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 7000 commId 0x70fba02a8d314739 - Init COMPLETE",
      "gpu34:34088:34088 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x10048f82700 recvbuff 0x10048f82800 count 64 datatype 7 op 0 root 0 comm 0x5468150 [nranks=2] stream 0x7f0c74002f00",
    ];
    const behind = analyze("partial.log", lines.join("\n")).findings.filter((f) => f.kind === "rank_behind");
    expect(behind.map((f) => ({ severity: f.severity, ranks: f.ranks, seq: f.seq, op: f.op, processes: f.processes, evidence: f.evidence }))).toEqual([
      { severity: "critical", ranks: [1], seq: 1, op: "AllReduce", processes: ["gpu41:3928"], evidence: ["partial.log:2"] },
    ]);
    expect(behind[0]?.summary).toContain("never completed init of communicator");
  });
});
