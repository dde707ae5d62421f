/**
 * nccl-tests' own failure lines (logs/nccl-tests/failure.ts): the real capture nccl-pasted 283
 * (nccl-tests #322: five processes on four hosts named HCA-NN, no NCCL line), and the captures where
 * NCCL's own lines of the same host say more (107, 31, 34: no second finding).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { parseNcclTestsFailure, parseNcclTestsPid } from "../../../../../collectors/nccl/logs/nccl-tests/failure.js";
import type { Report } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const capture = (prefix: string): Report => {
  const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? "";
  return analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
};

describe("nccl-tests' failure lines", () => {
  it("reads the host, the check, where and NCCL's words; the pid row after it; a launcher's tag before the host", () => {
    const line = "HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '";
    expect(parseNcclTestsFailure(line, "l:1")).toEqual({
      host: "HCA-128",
      pids: [],
      check: "NCCL",
      at: "common.cu:1204",
      words: "unhandled cuda error (run with NCCL_DEBUG=INFO for details) /",
      where: "l:1",
    });
    expect(parseNcclTestsPid(" .. HCA-128 pid 757466: Test failure common.cu:915")).toEqual({ host: "HCA-128", pid: 757466 });
    expect(parseNcclTestsFailure("[1,0]<stdout>:gpu5: Test CUDA failure common.cu:73 'out of memory'", "l:2")).toMatchObject({
      host: "gpu5",
      check: "CUDA",
      words: "out of memory",
    });
    // Older rows name no pid; prose is no failure line.
    expect(parseNcclTestsPid(" .. gpu5: Test failure common.cu:393")).toBeUndefined();
    expect(parseNcclTestsFailure("the Test NCCL failure we saw", "l:3")).toBeUndefined();
  });

  it("the real capture alone (283): one nccl_error with the result and the processes (HCA-22's line, cut before its words, is none)", () => {
    const r = capture("283-");
    expect(r.findings.map((f) => [f.kind, f.severity, f.processes, f.count])).toEqual([
      ["nccl_error", "critical", ["HCA-128:757466", "HCA-108:2753866", "HCA-107:2750549", "HCA-108:2753874"], 4],
    ]);
    expect(r.findings[0]?.summary).toMatch(/^nccl-tests stopped: an NCCL call failed with "unhandled cuda error" \(common\.cu:1204\) on HCA-128:757466, /);
  });

  it("where NCCL's own lines of that host are in the logs they tell the failure: no finding of nccl-tests' lines (107, 31, 34)", () => {
    for (const prefix of ["107-", "31-", "34-"]) {
      const r = capture(prefix);
      expect(
        r.findings.filter((f) => f.summary.startsWith("nccl-tests stopped")),
        prefix,
      ).toEqual([]);
    }
  });

  it("a note at info about the host (NCCL's RAS service's bind) does not hide its failure", () => {
    const r = analyzeLogs([
      {
        name: "l",
        text: "gpu5:2002:2002 [1] ras/client_support.cc:160 NCCL WARN Call to bind failed: Address already in use\ngpu5: Test CUDA failure common.cu:892 'out of memory'\n .. gpu5 pid 2001: Test failure common.cu:915",
      },
    ]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.processes])).toEqual([
      ["nccl_error", "critical", ["gpu5:2001"]],
      ["nccl_error", "info", ["gpu5:2002"]],
    ]);
  });

  it("ncclRemoteError's words are a network error", () => {
    const r = analyzeLogs([
      { name: "l", text: "n1: Test NCCL failure common.cu:900 'remote process exited or there was a network error'\n .. n1 pid 7: Test failure common.cu:915" },
    ]);
    expect(r.findings.map((f) => [f.kind, f.processes])).toEqual([["network_error", ["n1:7"]]]);
  });
});
