/**
 * NCCL RAS reports (ncclras text output): the two real captures, and synthetic entries for the
 * forms no capture holds, written with the format strings of NCCL's src/ras/client_support.cc
 * (2.26): a single rank behind, DEAD and INCOMPLETE processes, INCOMPLETE and ERROR communicators,
 * a status mismatch, a communication timeout.
 */
import { describe, expect, it } from "vitest";
import { splitCounts } from "../../../../collectors/nccl/ras/counts.js";
import { RasReader, type RasReport } from "../../../../collectors/nccl/ras/parse-text.js";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { readCapture } from "../../../helpers/fixtures.js";

function read(text: string): readonly RasReport[] {
  const r = new RasReader();
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r.reports();
}

/** A report as `ncclras` prints it, with the given Errors and Warnings sections. */
function report(table: string, errors: string, warnings: string): string {
  return [
    "NCCL version 2.26.2 compiled with CUDA 12.6",
    "",
    "Job summary",
    "===========",
    "",
    "  Nodes  Processes         GPUs  Processes     GPUs",
    "(total)   per node  per process    (total)  (total)",
    "      2          8            1         16       16",
    "",
    "Communicators... (0.00s)",
    "=============",
    "",
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
    "    #  in group  per comm  per node  per comm  in group",
    table,
    "",
    "Errors",
    "======",
    "",
    errors,
    "Warnings",
    "========",
    "",
    warnings,
  ].join("\n");
}

describe("NCCL RAS reports", () => {
  it("97 (real): the summary table and the AllGather count mismatch, ranks 12 and 13 ahead at 641", () => {
    const [r, ...more] = read(readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log"));
    expect(more).toEqual([]);
    expect(r?.table).toEqual([{ comms: 1, ranks: 32, status: "RUNNING", errors: "MISMATCH" }]);
    expect(r?.processes).toEqual([]);
    expect(r?.comms).toEqual([
      {
        kind: "MISMATCH",
        commHash: "fa93daea854b060b",
        lineNo: 24, // of the capture without its provenance line (readCapture)
        ops: [
          {
            op: "AllGather",
            groups: [
              { count: 30, opCount: 640, ranks: [] },
              {
                count: 2,
                opCount: 641,
                ranks: [
                  { rank: 12, gpu: "4", nvmlDev: 4, pid: 323032, node: "10.137.190.124" },
                  { rank: 13, gpu: "5", nvmlDev: 5, pid: 323033, node: "10.137.190.124" },
                ],
              },
            ],
          },
        ],
        statusGroups: [],
        errors: [],
        ranks: [],
      },
    ]);
  });

  it("98 (real): status OK for 256 ranks; the PyTorch lines after it end nothing and add nothing", () => {
    const [r, ...more] = read(readCapture("nccl/98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log"));
    expect(more).toEqual([]);
    expect(r?.table).toEqual([{ comms: 1, ranks: 256, status: "RUNNING", errors: "OK" }]);
    expect(r?.comms).toEqual([]);
  });

  it("a single rank behind, on a line of its own, with the other ranks' count", () => {
    const [r] = read(
      report(
        "    0         1         2         8        16        16   RUNNING  MISMATCH",
        "",
        [
          "#0-0 (0049bbd7790311d5) MISMATCH",
          "  Communicator ranks have different AllReduce operation counts",
          "  15 ranks have launched up to operation 1204",
          "  Rank 9 has launched up to operation 1203 -- GPU 1 managed by process 4242 on node 10.0.0.8",
          "",
        ].join("\n"),
      ),
    );
    expect(r?.comms[0]).toMatchObject({
      commHash: "0049bbd7790311d5",
      ops: [
        {
          op: "AllReduce",
          groups: [
            { count: 15, opCount: 1204, ranks: [] },
            { count: 1, opCount: 1203, ranks: [{ rank: 9, gpu: "1", nvmlDev: 1, pid: 4242, node: "10.0.0.8" }] },
          ],
        },
      ],
    });
  });

  it("the real H100 hang (NCCL 2.28.9): one block per collective type, never merged; rank 1 alone is behind", () => {
    // Rank 1 stopped before AllReduce #61; rank 0 launched AllReduce #61 and AllGather #13. NCCL
    // writes each type's block, then a blank line (client_support.cc); 1-rank groups are rank lines.
    const text = report(
      "    0         1         2         1         2         2   RUNNING  MISMATCH",
      "",
      [
        "#0-0 (52b1b8d0e5e3f6a1) MISMATCH",
        "  Communicator ranks have different AllGather operation counts",
        "  Rank 0 has launched up to operation 13 -- GPU 0 managed by process 608 on node 127.0.0.1",
        "  Rank 1 has launched up to operation 12 -- GPU 0 managed by process 609 on node 127.0.0.1",
        "",
        "  Communicator ranks have different AllReduce operation counts",
        "  Rank 0 has launched up to operation 61 -- GPU 0 managed by process 608 on node 127.0.0.1",
        "  Rank 1 has launched up to operation 60 -- GPU 0 managed by process 609 on node 127.0.0.1",
        "",
      ].join("\n"),
    );
    const [r] = read(text);
    expect(r?.comms[0]?.ops.map((o) => [o.op, o.groups.map((g) => [g.opCount, g.ranks.map((x) => x.rank)])])).toEqual([
      [
        "AllGather",
        [
          [13, [0]],
          [12, [1]],
        ],
      ],
      [
        "AllReduce",
        [
          [61, [0]],
          [60, [1]],
        ],
      ],
    ]);
    const split = splitCounts(r?.comms[0]?.ops ?? []);
    expect(split?.behind.map((x) => [x.rank, x.pid])).toEqual([[1, 609]]);
    expect(split?.ahead.map((x) => x.rank)).toEqual([0]);
    expect(split?.crossed).toEqual([]);
    const f = analyzeLogs([{ name: "ras.txt", text }]).findings;
    expect(f.map((x) => [x.kind, x.ranks, x.processes, x.op, x.seq])).toEqual([["rank_behind", [1], ["127.0.0.1:609"], "AllGather", 13]]);
  });

  it("ranks that launched more of one type and fewer of another issued different collectives: none is behind", () => {
    const [r] = read(
      report(
        "    0         1         1         4         4         4   RUNNING  MISMATCH",
        "",
        [
          "#0-0 (00000000000000aa) MISMATCH",
          "  Communicator ranks have different Broadcast operation counts",
          "  3 ranks have not launched any operations",
          "  Rank 2 has launched up to operation 1 -- GPU 2 managed by process 72 on node 10.0.0.1",
          "",
          "  Communicator ranks have different AllReduce operation counts",
          "  3 ranks have launched up to operation 30",
          "  Rank 2 has launched up to operation 29 -- GPU 2 managed by process 72 on node 10.0.0.1",
          "",
        ].join("\n"),
      ),
    );
    const split = splitCounts(r?.comms[0]?.ops ?? []);
    expect(split?.behind).toEqual([]);
    expect(split?.crossed.map((x) => x.rank)).toEqual([2]);
    expect(split?.ops.map((o) => [o.op, o.low, o.top, o.below, o.atTop])).toEqual([
      ["Broadcast", 0, 1, 3, 1],
      ["AllReduce", 29, 30, 1, 3],
    ]);
  });

  it("dead and missing processes, incomplete and failing communicators, a status mismatch, a timeout", () => {
    const [r] = read(
      report(
        "    0         2         2         8        16        16   RUNNING  INCOMPLETE",
        [
          "INCOMPLETE",
          "  Missing communicator data from 1 job process",
          "  Process 4250 on node 10.0.0.9 managing GPU 0",
          "",
          "DEAD",
          "  2 job processes are considered dead (unreachable via the RAS network)",
          "  Process 4251 on node 10.0.0.9 managing GPU 1",
          "  Process 4252 on node 10.0.0.9 managing GPUs 2-3",
          "",
          "#0-0 (49bbd7790311d5eb) INCOMPLETE",
          "  Missing communicator data from 2 ranks",
          "  Rank 3 -- GPU 3 managed by process 4252 on node 10.0.0.9",
          "  Rank 4 -- [process information not found]",
          "",
          "#0-1 (1111222233334444) ERROR",
          "  Asynchronous errors on 2 ranks",
          "  2 ranks reported remote process exited or there was a network error",
          "  Rank 5 -- GPU 5 managed by process 4253 on node 10.0.0.9",
          "  Rank 6 -- GPU 6 managed by process 4254 on node 10.0.0.9",
          "",
        ].join("\n"),
        [
          "TIMEOUT",
          "  Encountered 3 communication timeouts while gathering communicator data",
          "",
          "#0-0 (49bbd7790311d5eb) MISMATCH",
          "  Communicator ranks have different status",
          "  14 ranks have status RUNNING",
          "  Rank 7 has status ABORT -- GPU 7 managed by process 4255 on node 10.0.0.9",
          "",
        ].join("\n"),
      ),
    );
    expect(r?.processes).toEqual([
      { kind: "INCOMPLETE", count: 1, lineNo: 20, processes: [{ pid: 4250, node: "10.0.0.9", gpus: "0" }] },
      {
        kind: "DEAD",
        count: 2,
        lineNo: 24,
        processes: [
          { pid: 4251, node: "10.0.0.9", gpus: "1" },
          { pid: 4252, node: "10.0.0.9", gpus: "2-3" },
        ],
      },
    ]);
    expect(r?.timeouts).toBe(3);
    const [incomplete, error, status] = r?.comms ?? [];
    expect(incomplete).toMatchObject({ kind: "INCOMPLETE", missingRanks: 2, ranks: [{ rank: 3, pid: 4252 }, { rank: 4 }] });
    expect(incomplete?.ranks[1]).toEqual({ rank: 4 });
    expect(error).toMatchObject({
      kind: "ERROR",
      commHash: "1111222233334444",
      errors: ["Asynchronous errors on 2 ranks", "2 ranks reported remote process exited or there was a network error"],
    });
    expect(error?.ranks.map((x) => [x.rank, x.pid])).toEqual([
      [5, 4253],
      [6, 4254],
    ]);
    expect(status).toMatchObject({
      kind: "MISMATCH",
      statusGroups: [
        { count: 14, status: "RUNNING", ranks: [] },
        { count: 1, status: "ABORT", ranks: [{ rank: 7, gpu: "7", pid: 4255, node: "10.0.0.9" }] },
      ],
    });
  });

  it("two reports in one file are two reports; lines outside a report are ignored", () => {
    const one = report("    0         1         2         8        16        16   RUNNING        OK", "", "");
    const reports = read(`[rank0]: some PyTorch line\n#0-0 (1234) MISMATCH\n${one}\n${one}`);
    expect(reports).toHaveLength(2);
    expect(reports.map((r) => r.comms.length)).toEqual([0, 0]);
  });
});
