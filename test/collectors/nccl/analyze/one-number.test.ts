/**
 * One number per collective (issue 29, class 7), on the real H100 hang of 2026-11-24
 * (test/fixtures/nccl-device, test/fixtures/fr): rank 1 stops in Python before AllReduce #82 while
 * rank 0 entered it and enqueued AllGather #83 after it. NCCL's COLL lines (collective #N =
 * opCount N-1), PyTorch's watchdog and status lines (SeqNum) and the Flight Recorder dumps must all
 * name #82 and its op, and the report leads with one incident.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LogAnalysis, analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { fixturesDir } from "../../../helpers/fixtures.js";

const LOGS = join(fixturesDir, "nccl-device", "h100-2026-11-24");
const DUMPS = join(fixturesDir, "fr", "h100-2026-11-24");
const log = (name: string) => ({ name, text: readFileSync(join(LOGS, name), "utf8") });

describe("one number per collective on the real H100 hang", () => {
  it("the NCCL lines alone: rank 1 never entered #82 (AllReduce); rank 0 waits there, enqueued up to #83", () => {
    const r = analyzeLogs([log("nccl-vm-608.log"), log("nccl-vm-609.log")]);
    expect(r.findings.filter((f) => f.severity === "critical").map((f) => [f.kind, f.ranks, f.seq, f.op])).toEqual([
      ["rank_behind", [1], 82, "AllReduce"],
      ["hang_suspected", [0], 82, "AllReduce"],
    ]);
    expect(r.findings[0]?.summary).toContain("rank 0 entered it (and enqueued up to #83)");
  });

  it("NCCL, PyTorch and the Flight Recorder together: every hang finding names #82 and an all-reduce, in one incident", () => {
    const a = new LogAnalysis();
    for (const name of ["nccl-vm-608.log", "nccl-vm-609.log", "torch-hang-rank0.log", "torch-hang-rank1.log"]) {
      const lines = a.lines(name);
      for (const l of readFileSync(join(LOGS, name), "utf8").split("\n")) lines.line(l);
    }
    for (const d of ["nccl_trace_rank_0", "nccl_trace_rank_1"]) a.flightRecorderDump(d, readFileSync(join(DUMPS, d)));
    const r = a.report();
    const hang = r.findings.filter((f) => f.severity === "critical");
    expect(hang.length).toBeGreaterThanOrEqual(3);
    expect(hang.map((f) => [f.kind, f.seq])).toEqual(hang.map((f) => [f.kind, 82]));
    // An op, where a finding names one, is that all-reduce (NCCL's AllReduce, PyTorch's ALLREDUCE, the dump's all_reduce).
    expect(hang.flatMap((f) => (f.op === undefined ? [] : [f.op.toLowerCase().replace(/_/g, "")]))).toEqual(
      hang.flatMap((f) => (f.op === undefined ? [] : ["allreduce"])),
    );
    expect(hang.filter((f) => f.op !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(r.incidents.filter((i) => i.severity === "critical")).toHaveLength(1);
    expect(r.headline).toMatch(/#82 \((all_reduce|AllReduce)\)/);
  });
});
