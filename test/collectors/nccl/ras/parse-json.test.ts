/**
 * NCCL RAS JSON reports (`ncclras -f json`, NCCL 2.28.7+). No capture of this form exists yet, so
 * the documents are written the way NCCL writes them (test/helpers/ras-json.ts).
 * The same job in text (capture 97) and in JSON must give the same findings.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { looksLikeJson, rasReportFromJson } from "../../../../collectors/nccl/ras/parse-json.js";
import { readCapture } from "../../../helpers/fixtures.js";
import { rasJson, type CommSpec, type MissingSpec, type RankSpec } from "../../../helpers/ras-json.js";

/** Capture 97's job: 4 nodes × 8 ranks; ranks 12 and 13 launched AllGather #641, the others are at #640. */
function job97(): CommSpec {
  const nodes = ["10.137.190.122", "10.137.190.124", "10.137.190.123", "10.137.190.125"]; // ranks 8-15 on .124, as in the capture
  const ranks = Array.from({ length: 32 }, (_, r): RankSpec => ({
    rank: r,
    host: nodes[Math.floor(r / 8)] as string,
    pid: 323020 + r,
    cuda: r % 8,
    counts: { AllGather: r === 12 || r === 13 ? 641 : 640, AllReduce: 96 },
  }));
  return { hash: 0xfa93daea854b060bn, size: 32, ranks };
}

describe("rasReportFromJson", () => {
  it("capture 97's job in JSON gives the findings of capture 97 in text", () => {
    const fromJson = analyzeLogs([{ name: "ras.json", text: rasJson([job97()]) }]).findings;
    const fromText = analyzeLogs([{ name: "97.txt", text: readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log") }]).findings;
    const gist = (fs: typeof fromJson): unknown[] => fs.map((f) => [f.kind, f.severity, f.ranks, f.comm_id, f.seq, f.op, f.count]);
    expect(gist(fromJson)).toEqual(gist(fromText));
    expect(gist(fromJson)).toEqual([["collective_mismatch", "critical", [12, 13], "0xfa93daea854b060b", 641, "AllGather", 2]]);
    // The JSON names the real pids of its ranks.
    expect(fromJson[0]?.processes).toEqual(["10.137.190.124:323032", "10.137.190.124:323033"]);
    expect(fromJson[0]?.evidence).toEqual(["ras.json:9"]);
  });

  it("one rank behind on another node; a hash with a leading zero digit keeps the live comm_id", () => {
    const ranks = Array.from({ length: 16 }, (_, r): RankSpec => ({
      rank: r,
      host: r < 8 ? "10.0.0.7" : "10.0.0.8",
      pid: 4230 + r,
      cuda: r % 8,
      nvml: r === 9 ? 5 : r % 8,
      counts: { AllReduce: r === 9 ? 1203 : 1204 },
    }));
    const text = rasJson([{ hash: 0x49bbd7790311d5en, size: 16, ranks }]);
    const r = rasReportFromJson(text);
    expect(r?.comms).toEqual([
      {
        kind: "MISMATCH",
        commHash: "049bbd7790311d5e",
        lineNo: 9,
        ops: [
          {
            op: "AllReduce",
            groups: [
              { count: 1, opCount: 1203, ranks: [{ rank: 9, gpu: "1 (NVML 5)", nvmlDev: 5, pid: 4239, node: "10.0.0.8" }] },
              { count: 15, opCount: 1204, ranks: [] },
            ],
          },
        ],
        statusGroups: [],
        errors: [],
        ranks: [],
      },
    ]);
    const f = analyzeLogs([{ name: "ras.json", text }]).findings;
    expect(f.map((x) => [x.kind, x.ranks, x.processes, x.comm_id, x.seq])).toEqual([["rank_behind", [9], ["10.0.0.8:4239"], "0x49bbd7790311d5e", 1204]]);
  });

  it("missing ranks (one unresponsive, one dead), an aborted rank and an asynchronous error", () => {
    const ranks = Array.from({ length: 14 }, (_, r): RankSpec => ({
      rank: r,
      host: "10.0.0.7",
      pid: 4230 + r,
      cuda: r % 8,
      counts: { AllReduce: 50 },
      abort: r === 3,
      asyncError: r === 3 ? 6 : 0,
    }));
    const missing: MissingSpec[] = [
      { rank: 14, host: "10.0.0.9", pid: 4251, cuda: 6, unresponsive: true, dead: false },
      { rank: 15, host: "10.0.0.9", pid: 4252, cuda: 7, unresponsive: true, dead: true },
    ];
    const text = rasJson([{ hash: 0x1111222233334444n, size: 16, ranks, missing }], 2);
    const r = rasReportFromJson(text);
    expect(r?.timeouts).toBe(2);
    expect(r?.processes).toEqual([{ kind: "DEAD", count: 1, lineNo: 1, processes: [{ pid: 4252, node: "10.0.0.9", gpus: "7" }] }]);
    // The text report's order: INCOMPLETE and ERROR under Errors, MISMATCH under Warnings.
    expect(r?.comms.map((e) => e.kind)).toEqual(["INCOMPLETE", "ERROR", "MISMATCH"]);
    expect(r?.comms[0]).toMatchObject({
      missingRanks: 2,
      ranks: [
        { rank: 14, node: "10.0.0.9", pid: 4251 },
        { rank: 15, node: "10.0.0.9", pid: 4252 },
      ],
    });
    expect(r?.comms[1]).toMatchObject({ errors: ["Asynchronous error on 1 rank"], ranks: [{ rank: 3 }] });
    expect(r?.comms[2]?.statusGroups).toEqual([
      { count: 13, status: "RUNNING", ranks: [] },
      { count: 1, status: "ABORT", ranks: [{ rank: 3, gpu: "3", nvmlDev: 3, pid: 4233, node: "10.0.0.7" }] },
    ]);
    const kinds = analyzeLogs([{ name: "ras.json", text }]).findings.map((f) => [f.kind, f.severity]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        ["network_error", "critical"],
        ["nccl_error", "critical"],
        ["nccl_error", "warning"],
      ]),
    );
    expect(kinds).toHaveLength(4);
  });

  it("follows NCCL's text rules: outliers counted against the communicator's size, NOCOMM, in-progress is no error", () => {
    // 32 ranks, 4 of them silent (unresponsive), 2 answered without the communicator (NOCOMM);
    // 8 of the 26 that reported are behind: 8 <= 32 × 25 %, so NCCL lists them (26 would not be).
    const ranks = Array.from({ length: 26 }, (_, r): RankSpec => ({
      rank: r,
      host: `10.0.1.${Math.floor(r / 8)}`,
      pid: 7000 + r,
      cuda: r % 8,
      counts: { AllReduce: r < 8 ? 99 : 100 },
      asyncError: r === 20 ? 7 : 0,
    }));
    const missing: MissingSpec[] = [26, 27, 28, 29].map((rank) => ({
      rank,
      host: "10.0.1.3",
      pid: 7000 + rank,
      cuda: rank % 8,
      unresponsive: true,
      dead: false,
    }));
    missing.push(...[30, 31].map((rank) => ({ rank, host: "10.0.1.3", pid: 7000 + rank, cuda: rank % 8, unresponsive: false, dead: false })));
    const text = rasJson([{ hash: 0x5555666677778888n, size: 32, ranks, missing }]).replace(
      '"init_state": 0,\n            "async_error": 0,\n            "finalize_called": false,\n            "destroy_flag": false,\n            "abort_flag": false\n          },\n          "collective_counts": {\n            "Broadcast": 0,\n            "Reduce": 0,\n            "AllGather": 0,\n            "ReduceScatter": 0,\n            "AllReduce": 100',
      '"init_state": 5,\n            "async_error": 0,\n            "finalize_called": false,\n            "destroy_flag": false,\n            "abort_flag": false\n          },\n          "collective_counts": {\n            "Broadcast": 0,\n            "Reduce": 0,\n            "AllGather": 0,\n            "ReduceScatter": 0,\n            "AllReduce": 100',
    );
    const r = rasReportFromJson(text);
    expect(r?.comms.map((e) => e.kind)).toEqual(["INCOMPLETE", "ERROR", "MISMATCH"]);
    expect(r?.comms[0]).toMatchObject({ missingRanks: 4, ranks: [{ rank: 26 }, { rank: 27 }, { rank: 28 }, { rank: 29 }] });
    // Rank 8's init_state 5 is an error; rank 20's async_error 7 (ncclInProgress) is not.
    expect(r?.comms[1]).toMatchObject({ errors: ["Initialization error on 1 rank"], ranks: [{ rank: 8 }] });
    const m = r?.comms[2];
    expect(m?.statusGroups.map((g) => [g.status, g.count, g.ranks.map((x) => x.rank)])).toEqual([
      ["RUNNING", 25, []],
      ["NOCOMM", 2, [30, 31]],
      ["INIT", 1, [8]],
    ]);
    expect(m?.ops.map((o) => o.op)).toEqual(["AllReduce"]);
    expect(m?.ops[0]?.groups.map((g) => [g.opCount, g.count, g.ranks.length])).toEqual([
      [99, 8, 8],
      [100, 18, 0],
    ]);
    const f = analyzeLogs([{ name: "ras.json", text }]).findings.find((x) => x.kind === "rank_behind");
    expect(f?.ranks).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("a document that starts with a byte-order mark is still read", () => {
    const ranks = Array.from({ length: 4 }, (_, r): RankSpec => ({
      rank: r,
      host: "10.0.0.7",
      pid: 4230 + r,
      cuda: r,
      counts: { AllReduce: r === 2 ? 4 : 5 },
    }));
    expect(rasReportFromJson(`\ufeff${rasJson([{ hash: 0xabcn, size: 4, ranks }])}`)?.comms).toHaveLength(1);
  });

  it("a healthy job gives a report with nothing in it", () => {
    const ranks = Array.from({ length: 8 }, (_, r): RankSpec => ({
      rank: r,
      host: "10.0.0.7",
      pid: 4230 + r,
      cuda: r,
      counts: { AllReduce: 77, Broadcast: 1 },
    }));
    const r = rasReportFromJson(rasJson([{ hash: 0xabcn, size: 8, ranks }]));
    expect(r).toMatchObject({ lineNo: 1, table: [], comms: [], processes: [], timeouts: 0 });
    // Every rank's counts are kept (what the live verdict compares across reports).
    expect(r?.full?.map((c) => [c.commHash, c.size, c.ranks.length, c.missing.length])).toEqual([["0000000000000abc", 8, 8, 0]]);
    expect(r?.full?.[0]?.ranks.map((x) => x.counts.get("AllReduce"))).toEqual([77, 77, 77, 77, 77, 77, 77, 77]);
  });

  it("other JSON, broken JSON and text are not RAS reports; analyze reads such files as lines", () => {
    expect(rasReportFromJson('{"a": 1}')).toBeUndefined();
    expect(rasReportFromJson('{"communicators": [], "ras": 1}')).toBeUndefined();
    expect(rasReportFromJson(rasJson([job97()]).slice(0, 500))).toBeUndefined();
    expect(rasReportFromJson("NCCL version 2.26.2 compiled with CUDA 12.6\n")).toBeUndefined();
    expect(looksLikeJson("\ufeff  \n{")).toBe(true);
    expect(looksLikeJson("x{")).toBe(false);
    const cut = rasJson([job97()]).slice(0, 500);
    expect(analyzeLogs([{ name: "cut.json", text: cut }]).findings).toEqual([]);
    // A bad hash or a rank without a number is skipped, not fatal.
    const odd = rasJson([job97()]).replace('"hash": "0xfa93daea854b060b"', '"hash": "nope"');
    expect(rasReportFromJson(odd)?.comms).toEqual([]);
  });
});
