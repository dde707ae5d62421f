/**
 * The job view (collectors/nccl/ras/job-view.ts): anchor communicator, querier and succession, read
 * from reports rendered by the fake RAS service's renderer (test/fakes/ras/render.mjs) and parsed
 * by the real parsers.
 */
import { describe, expect, it } from "vitest";
import { jobViewFromLogs, jobViewOf, type LoggedComm } from "../../../../collectors/nccl/ras/job-view.js";
import { rasReportFromJson } from "../../../../collectors/nccl/ras/parse-json.js";
import type { RasReport } from "../../../../collectors/nccl/ras/parse-text.js";
import { lastTextReport } from "../../../../collectors/nccl/ras/watch.js";
import { renderJson, renderText, uniformJob, withMissing, type RasComm, type RasJob } from "../../../fakes/ras/render.mjs";

const VERSION = "2.29.7";

function jsonReport(job: RasJob): RasReport {
  const r = rasReportFromJson(renderJson(job));
  expect(r).toBeDefined();
  return r as RasReport;
}

/** The communicator of a uniform job. */
function comm(o: { nodes: number; ranksPerNode: number; hash: string; hostOf?: (n: number) => string; pidBase?: number }): RasComm {
  const c = uniformJob({ version: VERSION, counts: { AllReduce: 10 }, ...o }).comms[0];
  expect(c).toBeDefined();
  return c as RasComm;
}

const hosts =
  (...h: string[]) =>
  (n: number): string =>
    h[n] as string;

describe("jobViewOf (JSON reports)", () => {
  it("one communicator: its hash, size, and its nodes in the order of their lowest rank", () => {
    const job = uniformJob({ version: VERSION, nodes: 3, ranksPerNode: 2, hostOf: hosts("10.9.0.3", "10.9.0.1", "10.9.0.2"), counts: { AllReduce: 4 } });
    expect(jobViewOf(jsonReport(job))).toEqual({
      jobId: "0x49bbd7790311d5eb",
      size: 6,
      succession: ["10.9.0.3", "10.9.0.1", "10.9.0.2"],
      initialising: false,
    });
  });

  it("the succession follows each node's lowest rank, not the order of the ranks in the report", () => {
    const c = comm({ nodes: 1, ranksPerNode: 6, hash: "0x77" });
    // Node A hosts ranks 1 and 4, B ranks 0 and 5, C ranks 2 and 3; listed in reverse.
    const nodeOf = ["10.0.0.11", "10.0.0.10", "10.0.0.12", "10.0.0.12", "10.0.0.10", "10.0.0.11"];
    c.ranks = c.ranks.map((r) => ({ ...r, host: nodeOf[r.rank] as string })).reverse();
    const v = jobViewOf(jsonReport({ version: VERSION, comms: [c] }));
    expect(v?.succession).toEqual(["10.0.0.11", "10.0.0.10", "10.0.0.12"]);
    expect(v?.jobId).toBe("0x0000000000000077");
  });

  it("the anchor is the largest communicator, wherever it is listed", () => {
    // A 2-rank communicator with a lower hash, listed first, whose rank 0 lives on the world's last node.
    const sub = comm({ nodes: 2, ranksPerNode: 1, hash: "0x1", hostOf: hosts("10.0.0.4", "10.0.0.3") });
    sub.ranks = sub.ranks.map((r) => ({ ...r, pid: 4000 + 6 + r.rank }));
    const world = comm({ nodes: 4, ranksPerNode: 2, hash: "0xabc", hostOf: hosts("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4") });
    const v = jobViewOf(jsonReport({ version: VERSION, comms: [sub, world] }));
    expect(v).toEqual({ jobId: "0x0000000000000abc", size: 8, succession: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"], initialising: false });
  });

  it("ties: the lowest commHash, compared as a number (0x9 before 0x10)", () => {
    const a = comm({ nodes: 2, ranksPerNode: 2, hash: "0x10", hostOf: hosts("10.0.1.1", "10.0.1.2") });
    const b = comm({ nodes: 2, ranksPerNode: 2, hash: "0x9", hostOf: hosts("10.0.2.2", "10.0.2.1"), pidBase: 5000 });
    for (const comms of [
      [a, b],
      [b, a],
    ]) {
      const v = jobViewOf(jsonReport({ version: VERSION, comms }));
      expect(v?.jobId).toBe("0x0000000000000009");
      expect(v?.size).toBe(4);
      expect(v?.succession).toEqual(["10.0.2.2", "10.0.2.1"]);
    }
  });

  it("the nodes of missing ranks stay in the succession", () => {
    const job = uniformJob({ version: VERSION, nodes: 3, ranksPerNode: 2, counts: { AllReduce: 4 } });
    // Every rank of the second node is missing.
    const v = jobViewOf(jsonReport(withMissing(job, 0, [2, 3], { dead: true })));
    expect(v).toEqual({ jobId: "0x49bbd7790311d5eb", size: 6, succession: ["10.0.0.1", "10.0.0.2", "10.0.0.3"], initialising: false });
  });

  it("a missing rank 0 still names its node the querier", () => {
    const job = uniformJob({ version: VERSION, nodes: 3, ranksPerNode: 2, hostOf: hosts("10.0.0.5", "10.0.0.6", "10.0.0.7"), counts: { AllReduce: 4 } });
    const v = jobViewOf(jsonReport(withMissing(job, 0, [0])));
    expect(v?.succession).toEqual(["10.0.0.5", "10.0.0.6", "10.0.0.7"]);
    expect(v?.size).toBe(6);
  });

  it("the missing-comma JSON of NCCL 2.28 gives the same view", () => {
    const job = uniformJob({ version: "2.28.9", nodes: 3, ranksPerNode: 2, hostOf: hosts("10.0.0.5", "10.0.0.6", "10.0.0.7"), counts: { AllReduce: 4 } });
    const v = jobViewOf(jsonReport(withMissing(job, 0, [0, 1])));
    expect(v?.succession).toEqual(["10.0.0.5", "10.0.0.6", "10.0.0.7"]);
  });

  it("initialising when a rank's init is in progress (init_state 7)", () => {
    const job = uniformJob({ version: VERSION, nodes: 2, ranksPerNode: 2, counts: { AllReduce: 4 } });
    const c = job.comms[0] as RasComm;
    c.ranks = c.ranks.map((r) => (r.rank === 3 ? { ...r, status: { initState: 7 } } : r));
    const v = jobViewOf(jsonReport(job));
    expect(v?.initialising).toBe(true);
    expect(v?.succession).toEqual(["10.0.0.1", "10.0.0.2"]);
  });

  it("initialising when a rank of another communicator than the anchor is in init", () => {
    const world = comm({ nodes: 2, ranksPerNode: 2, hash: "0xabc" });
    const sub = comm({ nodes: 2, ranksPerNode: 1, hash: "0x1", pidBase: 6000 });
    sub.ranks = sub.ranks.map((r) => (r.rank === 1 ? { ...r, status: { initState: 7 } } : r));
    const v = jobViewOf(jsonReport({ version: VERSION, comms: [world, sub] }));
    expect(v?.jobId).toBe("0x0000000000000abc");
    expect(v?.initialising).toBe(true);
  });

  it("not initialising when every rank's init is complete, even with other status", () => {
    const job = uniformJob({ version: VERSION, nodes: 2, ranksPerNode: 2, counts: { AllReduce: 4 } });
    const c = job.comms[0] as RasComm;
    c.ranks = c.ranks.map((r) => (r.rank === 1 ? { ...r, status: { finalizeCalled: true } } : r));
    expect(jobViewOf(jsonReport(job))?.initialising).toBe(false);
  });

  it("undefined for a text report (NCCL before 2.28.7)", () => {
    const job = uniformJob({ version: "2.26.2", nodes: 2, ranksPerNode: 2, countsOf: (r) => ({ AllReduce: r === 1 ? 6 : 5 }) });
    const report = lastTextReport(renderText(job));
    // The text was read as a report (a rank behind), yet it names no node of every rank.
    expect(report?.comms.map((c) => [c.kind, c.commHash])).toEqual([["MISMATCH", "49bbd7790311d5eb"]]);
    expect(jobViewOf(report as RasReport)).toBeUndefined();
  });

  it("undefined for a JSON report without communicators", () => {
    const report: RasReport = { lineNo: 1, table: [], comms: [], processes: [], timeouts: 0, full: [] };
    expect(jobViewOf(report)).toBeUndefined();
  });
});

describe("jobViewFromLogs", () => {
  it("undefined when the logs know no live rank here", () => {
    expect(jobViewFromLogs([], false)).toBeUndefined();
    expect(jobViewFromLogs([{ commId: "0xa", nranks: 8, localRanks: [] }], false)).toBeUndefined();
  });

  it("the anchor is the largest communicator with a rank here; querier when it hosts its rank 0", () => {
    const comms: LoggedComm[] = [
      { commId: "0xbig", nranks: 16, localRanks: [] },
      { commId: "0xsmall", nranks: 2, localRanks: [0] },
      { commId: "0xmid", nranks: 8, localRanks: [3, 2] },
    ];
    expect(jobViewFromLogs(comms, false)).toEqual({
      view: { jobId: "0xmid", size: 8, succession: [], initialising: false },
      hostsRankZero: false,
    });
    expect(jobViewFromLogs([...comms, { commId: "0xworld", nranks: 8, localRanks: [4, 0] }], true)).toEqual({
      view: { jobId: "0xmid", size: 8, succession: [], initialising: true },
      hostsRankZero: false,
    });
  });

  it("ties: the lowest commId", () => {
    const comms: LoggedComm[] = [
      { commId: "0xb", nranks: 8, localRanks: [1] },
      { commId: "0xa", nranks: 8, localRanks: [0] },
      { commId: "0xc", nranks: 8, localRanks: [0] },
    ];
    expect(jobViewFromLogs(comms, false)).toEqual({ view: { jobId: "0xa", size: 8, succession: [], initialising: false }, hostsRankZero: true });
  });
});
