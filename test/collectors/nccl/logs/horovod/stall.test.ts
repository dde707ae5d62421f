/**
 * Horovod's stall inspector lines: every form of its writer (stall_inspector.cc, before 0.17
 * operations.cc), read from the real captures in test/fixtures/nccl-pasted/71-76 and, for the forms
 * no capture holds (the shutdown, `[ready ranks], [missing ranks]`, all on one line), from lines
 * built from the writer's format strings.
 */
import { describe, expect, it } from "vitest";
import { StallReader, contentStart, parseStallLine, type StallReport } from "../../../../../collectors/nccl/logs/horovod/stall.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

function read(text: string): StallReader {
  const r = new StallReader();
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r;
}
const capture = (n: string): StallReader => read(readCapture(`nccl-pasted/${n}`));
const ranksOf = (r: StallReport | undefined): [number, string[], boolean][] => [...(r?.ranks ?? [])].map(([k, v]) => [k, v.tensors, v.shutdown]);

const HEADER =
  "One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds. " +
  "This may indicate that different ranks are trying to submit different tensors or that only subset of ranks is submitting tensors, which will cause deadlock. ";

describe("parseStallLine", () => {
  it("launcher tags: OpenMPI's, one or more, and horovodrun's", () => {
    expect(contentStart("[1,0]<stderr>:4: [a]")).toBe(14);
    expect(contentStart("[1,0]<stderr>:[1,0]<stderr>:Stalled ranks:")).toBe(28);
    expect(contentStart("[0] Missing ranks:")).toBe(4);
    expect(contentStart("[0]<stderr>:Missing ranks:")).toBe(12);
    expect(contentStart("[2019-04-13 13:55:31.858119: W x.cc:1] y")).toBe(0);
  });

  it("the header, with its seconds, a LOG(ERROR) header, and a wrapped header's rest", () => {
    expect(parseStallLine(`[2023-06-26 07:23:58.477178: W /tmp/x/horovod/common/stall_inspector.cc:107] ${HEADER}`)).toEqual({
      kind: "header",
      seconds: 60,
      error: false,
    });
    expect(parseStallLine(`[2023-06-26 07:23:58.477178: E horovod/common/stall_inspector.cc:105] ${HEADER}`)).toMatchObject({ kind: "header", error: true });
    expect(parseStallLine("er of ranks for more than 120 seconds. This may indicate that different ranks are trying to submit")).toEqual({
      kind: "header_rest",
      seconds: 120,
    });
  });

  it("rank lines (`4: [...]`, `4!: [...]`), the writer's ` ...` mark, and a list cut by the line's end", () => {
    expect(parseStallLine("[1,0]<stderr>:4!: [a.0, a.1 ...]")).toEqual({
      kind: "rank",
      rank: 4,
      shutdown: true,
      tensors: ["a.0", "a.1"],
      closed: true,
      more: true,
    });
    expect(parseStallLine("0: [x, ")).toEqual({ kind: "rank", rank: 0, shutdown: false, tensors: ["x"], closed: false, more: false });
    expect(parseStallLine("2: [x, y]")).toEqual({ kind: "rank", rank: 2, shutdown: false, tensors: ["x", "y"], closed: true, more: false });
    expect(parseStallLine("12: not a list")).toBeUndefined();
  });

  it("the shutdown line", () => {
    expect(parseStallLine('One or more rank (marked by "!") is stalled for longer than 180 seconds. Will shutdown.')).toEqual({
      kind: "shutdown",
      seconds: 180,
    });
  });

  it("tensor lines: `[missing ranks: ...]`, `[ready ranks: ...]`, both (mid-2018), several on one line (the oldest form)", () => {
    expect(parseStallLine("v0/HorovodAllreduce_x_0 [missing ranks: 0, 1, 3, 4]")).toEqual({
      kind: "tensors",
      tensors: [{ name: "v0/HorovodAllreduce_x_0", missing: [0, 1, 3, 4] }],
    });
    expect(parseStallLine("b_0 [ready ranks: 1, 2], [missing ranks: 0]")).toEqual({ kind: "tensors", tensors: [{ name: "b_0", ready: [1, 2], missing: [0] }] });
    expect(parseStallLine(`WARNING: ${HEADER}Stalled ops: a_0 [ready ranks: 5, 1], b_0 [ready ranks: 2, 0, 1], c_0 [ready`)).toEqual({
      kind: "section",
      section: "ops",
      tensors: [
        { name: "a_0", ready: [5, 1] },
        { name: "b_0", ready: [2, 0, 1] },
      ],
      header: { seconds: 60 },
    });
  });

  it("ordinary lines are nothing", () => {
    expect(parseStallLine("INFO:root:[step 20999]  mlm_loss=1.41707  nsp_loss= 0.02")).toBeUndefined();
    expect(parseStallLine("I0821 01:57:42.623394 47595311335168 tf_logging.py:115] Saving checkpoint to path /work/model.ckpt")).toBeUndefined();
  });
});

describe("StallReader on the real captures", () => {
  it("71 (0.28.1, `Missing ranks:`, horovodrun tags): ranks 0 and 1, six tensors each, 60 s", () => {
    const r = capture("71-horovod-0.28.1-missing-ranks-0-and-1-broadcast-horovodrun-tags.log");
    expect(r.reports).toHaveLength(1);
    expect(r.reports[0]).toMatchObject({ headerLine: 1, seconds: 60, lines: [1, 2, 3, 4] });
    expect(ranksOf(r.reports[0]).map(([rank, t, s]) => [rank, t.length, s])).toEqual([
      [0, 6, false],
      [1, 6, false],
    ]);
    expect(r.reports[0]?.ranks.get(0)?.tensors[0]).toBe("broadcast.assign_conv_block_modules.0.0.bias");
  });

  it("72 (`Stalled ranks:`, mpirun tags, header wrapped): rank 4, the seconds from the wrapped rest", () => {
    const r = capture("72-horovod-0.18-stalled-ranks-rank4-mpirun-tags-header-wrapped.log");
    expect(r.reports).toHaveLength(1);
    expect(r.reports[0]).toMatchObject({ headerLine: 7, seconds: 60, lines: [7, 8, 9, 10] });
    expect(ranksOf(r.reports[0])).toEqual([[4, ["horovod_allreduce.0", "horovod_allreduce.1", "horovod_allreduce.10", "horovod_all"], false]]);
  });

  it("73 (`Stalled ranks:`, rank 0's list wrapped onto the next line): all six tensors", () => {
    const r = capture("73-horovod-0.19-stalled-ranks-rank0-tensor-list-wrapped-keras.log");
    expect(ranksOf(r.reports[0]).map(([rank, t]) => [rank, t.length, t[5]])).toEqual([
      [0, 6, "training/Adadelta_Allreduce/HorovodAllreduce_Adadelta_1_gradients_AddN_109_0"],
    ]);
    expect(r.reports[0]?.lines).toEqual([1, 2, 3, 4]);
  });

  it("74 (0.16 per-tensor LOG lines, torn mpirun tags): the previous report's tail, then a report of three tensors, rank 1", () => {
    const r = capture("74-horovod-0.16-operations-cc-per-tensor-missing-rank1-mpirun-torn-tags.log");
    expect(r.reports.map((x) => [x.headerLine, x.tensors.map((t) => t.missing)])).toEqual([
      [undefined, [[1], [1], [1], [1]]],
      [5, [[1], [1], [1]]],
    ]);
    expect(r.reports[0]?.tensors[1]?.name).toBe("HorovodBroadcast_conv2d_1_kernel_0");
    expect(r.reports[1]?.tensors[0]?.name).toBe("HorovodBroadcast_dense_1_bias_0");
  });

  it("75 (std::cerr `WARNING: ... Stalled ops:`): two reports of rank 815, then a header the paste cut", () => {
    const r = capture("75-horovod-0.13-warning-stalled-ops-missing-rank815-128-nodes.log");
    expect(r.reports.map((x) => [x.headerLine, x.tensors.map((t) => t.missing)])).toEqual([
      [1, [[815], [815]]],
      [5, [[815], [815]]],
      [10, []],
    ]);
  });

  it("76 (`[ready ranks: ...]` only): six tensors, all ready on 0,1,3-6, across the gap line", () => {
    const r = capture("76-horovod-0.13-stalled-ops-ready-ranks-only-rank2-absent-7-workers.log");
    expect(r.reports).toHaveLength(1);
    expect(r.reports[0]?.tensors.map((t) => t.ready)).toEqual(Array.from({ length: 6 }, () => [5, 6, 3, 1, 4, 0]));
    expect(r.reports[0]?.tensors[0]?.name).toBe("HorovodBroadcast_InceptionV3_Logits_Conv2d_1c_1x1_weights_0");
  });
});

describe("StallReader on the writer's other forms", () => {
  it("the shutdown: `!` ranks and the closing line", () => {
    const r = read(
      [
        `[2019-03-20 10:00:00.000000: E horovod/common/operations.cc:700] ${HEADER}`,
        "Stalled ranks:",
        "2!: [allreduce.a, allreduce.b]",
        "3: [allreduce.a]",
        'One or more rank (marked by "!") is stalled for longer than 180 seconds. Will shutdown.',
      ].join("\n"),
    );
    expect(ranksOf(r.reports[0])).toEqual([
      [2, ["allreduce.a", "allreduce.b"], true],
      [3, ["allreduce.a"], false],
    ]);
    expect(r.reports[0]?.shutdown).toEqual({ seconds: 180, line: 5 });
  });

  it("a rank line outside a report is not read, and a report keeps at most 8 of them", () => {
    expect(read("4: [a]").reports).toEqual([]);
    const r = read(Array.from({ length: 12 }, () => `${HEADER}\nMissing ranks:\n1: [t]`).join("\n"));
    expect([r.reports.length, r.count]).toEqual([8, 12]);
  });
});

describe("the stall warning alone (pasted 307, Horovod 0.21: one line, no rank or tensor after it)", () => {
  it("is a hang_suspected warning that names no rank; after a report that named ranks, that report says where the job is", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("307-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "warning", []]]);
    expect(r.findings[0]?.summary).toMatch(/^Horovod's stall inspector reported tensors that some ranks submitted and the others did not for more than 60 s; /);
    const named = analyzeLogs([{ name: "h", text: `${HEADER}\nMissing ranks:\n1: [t]\n${HEADER}` }]);
    expect(named.findings.map((f) => [f.kind, f.ranks])).toEqual([["rank_behind", [1]]]);
  });
});

describe("the oldest form's one-line report (pasted 281, 2018: `loss_Mean_0 [ready ranks: 3]` beside the gradients' `[ready ranks: 2, 0, 1]`)", () => {
  it("each line is a report of its own, with the seconds its header says", () => {
    const r = read(
      `WARNING: ${HEADER}Stalled ops: a_0 [ready ranks: 0]\nWARNING: ${HEADER.replace("60 seconds", "120 seconds")}Stalled ops: a_0 [ready ranks: 1]`,
    );
    expect(r.reports.map((x) => [x.headerLine, x.seconds, x.tensors.map((t) => t.ready)])).toEqual([
      [1, 60, [[0]]],
      [2, 120, [[1]]],
    ]);
  });

  it("tensor sets that cross (each has a rank the other lacks) are a collective_mismatch naming every rank; nested sets leave the late ranks", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("281-")) ?? "";
    const fs = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings;
    expect(fs.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["collective_mismatch", "critical", [0, 1, 2, 3]]]);
    expect(fs[0]?.summary).toMatch(
      /^Horovod's stall inspector: the ranks submitted different tensors more than 60 s ago \(rank 3 submitted HorovodAllreduce_loss_Mean_0; ranks 0-2 submitted /,
    );
    // Nested: rank 3 submitted a_0 and b_0, ranks 0-2 only b_0 (rank 3 waits for them in a_0): no crossing.
    const nested = analyzeLogs([{ name: "h", text: `WARNING: ${HEADER}Stalled ops: a_0 [ready ranks: 3], b_0 [ready ranks: 2, 0, 1, 3]` }]).findings;
    expect(nested.map((f) => f.kind)).toEqual(["hang_suspected"]);
    const crossed = analyzeLogs([{ name: "h", text: `WARNING: ${HEADER}Stalled ops: a_0 [ready ranks: 3, 1], b_0 [ready ranks: 2, 0, 1]` }]).findings;
    expect(crossed.map((f) => [f.kind, f.ranks])).toEqual([["collective_mismatch", [0, 1, 2, 3]]]);
  });
});
