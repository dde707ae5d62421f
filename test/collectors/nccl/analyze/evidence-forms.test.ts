/**
 * `ringwatch analyze` on two more forms of evidence pasted as text: Horovod's stall inspector
 * (logs/horovod/) and the text of PyTorch's Flight Recorder analyzer, torchfrtrace
 * (flight-recorder/text-*.ts). The real captures (nccl-pasted/71-76, nccl/96) and, for the cases no
 * capture holds, lines built from the writers' format strings: the exact findings each gives.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import type { Finding, Report } from "../../../../collectors/nccl/verdict/report.js";
import { readCapture } from "../../../helpers/fixtures.js";

const analyzeCapture = (path: string): Report =>
  analyzeLogs([{ name: path.slice(path.lastIndexOf("/") + 1, path.lastIndexOf("/") + 3), text: readCapture(path) }]);
const analyzeText = (...lines: string[]): Report => analyzeLogs([{ name: "t", text: lines.join("\n") }]);
const brief = (f: Finding): object => ({
  kind: f.kind,
  severity: f.severity,
  ranks: f.ranks,
  ...(f.seq !== undefined ? { seq: f.seq } : {}),
  ...(f.process_group !== undefined ? { process_group: f.process_group } : {}),
});

describe("Horovod's stall inspector", () => {
  it.each([
    ["71-horovod-0.28.1-missing-ranks-0-and-1-broadcast-horovodrun-tags.log", [0, 1], "warning", ["71:1", "71:2", "71:3", "71:4"]],
    ["72-horovod-0.18-stalled-ranks-rank4-mpirun-tags-header-wrapped.log", [4], "warning", ["72:7", "72:8", "72:9", "72:10"]],
    ["73-horovod-0.19-stalled-ranks-rank0-tensor-list-wrapped-keras.log", [0], "warning", ["73:1", "73:2", "73:3", "73:4"]],
    // Two reports name the same rank: the stall lasts.
    ["74-horovod-0.16-operations-cc-per-tensor-missing-rank1-mpirun-torn-tags.log", [1], "critical", ["74:5", "74:6", "74:7", "74:8"]],
    ["75-horovod-0.13-warning-stalled-ops-missing-rank815-128-nodes.log", [815], "critical", ["75:5", "75:6", "75:7", "75:8"]],
  ])("%s: the missing ranks are rank_behind", (file, ranks, severity, evidence) => {
    const r = analyzeCapture(`nccl-pasted/${file}`);
    expect(r.findings.map(brief)).toEqual([{ kind: "rank_behind", severity, ranks }]);
    expect(r.findings[0]?.evidence).toEqual(evidence);
    expect(r.findings[0]?.summary).toContain("Horovod's stall inspector");
  });

  it("71: the tensors in the summary, and the stall-check time", () => {
    const f = analyzeCapture("nccl-pasted/71-horovod-0.28.1-missing-ranks-0-and-1-broadcast-horovodrun-tags.log").findings[0];
    expect(f?.summary).toContain(
      "ranks 0,1 have not submitted the tensors the other ranks submitted more than 60 s ago (broadcast.assign_conv_block_modules.0.0.bias,",
    );
  });

  it("76: only the ready ranks listed; rank 2, absent below the highest, is behind; the ready ones wait", () => {
    const r = analyzeCapture("nccl-pasted/76-horovod-0.13-stalled-ops-ready-ranks-only-rank2-absent-7-workers.log");
    expect(r.findings.map(brief)).toEqual([{ kind: "rank_behind", severity: "warning", ranks: [2] }]);
    expect(r.findings[0]?.waiting_ranks).toEqual([0, 1, 3, 4, 5, 6]);
    expect(r.findings[0]?.summary).toContain("ranks above 6 may be missing too");
  });

  it("the shutdown (`!` ranks, `Will shutdown.`): critical after one report, and says so", () => {
    const r = analyzeText(
      "[2020-10-01 10:00:00.000000: E horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ",
      "Missing ranks:",
      "3!: [allreduce.fc.weight]",
      'One or more rank (marked by "!") is stalled for longer than 300 seconds. Will shutdown.',
    );
    expect(r.findings.map(brief)).toEqual([{ kind: "rank_behind", severity: "critical", ranks: [3] }]);
    expect(r.findings[0]?.summary).toContain("rank 3 stalled past the shutdown time (300 s): Horovod shuts the job down.");
  });

  it("ready ranks with none absent below the highest: hang_suspected, the ready ranks waiting", () => {
    const r = analyzeText("Stalled ops: HorovodAllreduce_a_0 [ready ranks: 1, 0]");
    expect(r.findings.map(brief)).toEqual([{ kind: "hang_suspected", severity: "warning", ranks: [0, 1] }]);
  });
});

describe("torchfrtrace's text", () => {
  it("nccl/96: ranks 3-7 never joined #31117 of 0 (default_pg): one rank_behind with the group, the op, the waiting ranks and their stack", () => {
    const r = analyzeLogs([{ name: "96", text: readCapture("nccl/96-hang-flight-recorder-fr_trace-missing-ranks.log") }]);
    expect(r.findings.map(brief)).toEqual([{ kind: "rank_behind", severity: "critical", ranks: [3, 4, 5, 6, 7], seq: 31117, process_group: "0 (default_pg)" }]);
    const f = r.findings[0];
    expect(f).toMatchObject({ op: "all_reduce", waiting_ranks: [0, 1, 2], evidence: ["96:3", "96:4", "96:5", "96:6", "96:7", "96:8", "96:9", "96:10"] });
    expect(f?.stacks?.[0]?.frames.map((x) => x.function)).toEqual(["all_reduce", "wrapper", "sync_buffers"]);
    expect(f?.summary).toContain("called from /packages/fblearner.flow.canary/workflow#link-tree/xri_mapsr/neural_fields/models/gaussian_splatting.py:650");
  });

  it("2.5's block (`collective 5 at entry 4`, expected ranks as a count): rank 1 behind at #5", () => {
    const r = analyzeText(
      "Not all ranks joining collective 5 at entry 4",
      "group info: 0:default_pg",
      "collective: nccl:all_reduce",
      "missing ranks: {1}",
      "input sizes: [[3, 4]]",
      "output sizes: [[3, 4]]",
      "expected ranks: 2",
      "collective state: scheduled",
      "collective stack trace:",
      "  all_reduce at /home/u/torch/distributed/distributed_c10d.py:2696",
      "  <module> at /home/u/test/crash.py:44",
    );
    expect(r.findings.map(brief)).toEqual([{ kind: "rank_behind", severity: "critical", ranks: [1], seq: 5, process_group: "0 (default_pg)" }]);
    expect(r.findings[0]?.summary).toContain("called from /home/u/test/crash.py:44");
  });

  it("2.4's one line: rank 1 behind, no seq", () => {
    const r = analyzeText("Not all ranks joining collective for group 0:default_pg collective nccl:broadcast Missing ranks are {1}");
    expect(r.findings.filter((f) => f.kind === "rank_behind").map(brief)).toEqual([
      { kind: "rank_behind", severity: "critical", ranks: [1], process_group: "0 (default_pg)" },
    ]);
  });

  it("a size mismatch: collective_mismatch on the culprit rank, critical, with what each recorded", () => {
    const r = analyzeText(
      "Collective sequence number: 12 has errors",
      "internal record id: 11",
      "group info: 3:tp_group",
      "collective: nccl:all_gather",
      "input sizes: [[3, 4]]",
      "output sizes: [[6, 4]]",
      "world size: 2",
      "expected ranks: {0, 1}",
      "collective state: scheduled",
      "error msg: Culprit rank 1; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[3, 4]]' does not match found input sizes: '[[3, 5]]'",
    );
    expect(r.findings.map(brief)).toEqual([{ kind: "collective_mismatch", severity: "critical", ranks: [1], seq: 12, process_group: "3 (tp_group)" }]);
    expect(r.findings[0]).toMatchObject({ mismatch: "size", op: "all_gather", expected: "[[3, 4]]", found: "[[3, 5]]" });
  });

  it("an op mismatch names the other op; a state mismatch is a warning", () => {
    const op = analyzeText(
      "Collective sequence number: 3 has errors",
      "group info: 0",
      "collective: nccl:all_reduce",
      "error msg: Culprit rank 2; Error type: COLLECTIVE_TYPE_MISMATCH, Expected collective type: 'all_reduce' does not match found collective type: 'broadcast'",
    ).findings[0];
    expect(op).toMatchObject({
      kind: "collective_mismatch",
      severity: "critical",
      ranks: [2],
      seq: 3,
      process_group: "0",
      mismatch: "op",
      op: "all_reduce",
      other_op: "broadcast",
    });
    const state = analyzeText(
      "Collective sequence number: 9 has errors",
      "error msg: Culprit rank 0; Error type: COLLECTIVE_STATE_MISMATCH, Expected state: 'completed' does not match found state: 'scheduled'",
    ).findings[0];
    expect(state).toMatchObject({ kind: "collective_mismatch", severity: "warning", ranks: [0], seq: 9, mismatch: "state", found: "scheduled" });
  });

  it("all_to_all sizes that do not add up, and ranks without a dump", () => {
    const r = analyzeText(
      "Input/output mismatch in the collective sequence number: 7",
      "collective: nccl:all_to_all",
      "total input numel: 8",
      "total output numel: 6",
      "",
      "We cannot decide what's wrong with this collective entry because we missed FR dumps from ranks ({3}) so we don't have enough information. If you want to debug further use -j to dump all raw trace",
    );
    expect(r.findings.map(brief)).toEqual([
      { kind: "collective_mismatch", severity: "critical", ranks: [], seq: 7 },
      { kind: "rank_missing", severity: "warning", ranks: [3] },
    ]);
    expect(r.findings[0]).toMatchObject({ mismatch: "size", op: "all_to_all", expected: "8 input elements", found: "6 output elements" });
  });
});
