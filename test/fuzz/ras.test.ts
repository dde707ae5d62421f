/**
 * Fuzz: the NCCL RAS report reader (collectors/nccl/ras/parse-text.ts) on the real reports of
 * test/fixtures/nccl (97, 98), their lines mutated, shuffled and repeated: it never throws, every
 * number it keeps is a finite non-negative integer, and what it keeps is bounded by its input.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RasReader, type RasReport } from "../../collectors/nccl/ras/parse-text.js";
import { rasReportFromJson } from "../../collectors/nccl/ras/parse-json.js";
import { readCapture } from "../helpers/fixtures.js";
import { mutatedText, RUNS } from "./mutate.js";

const REPORT_LINES = [
  ...readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log").split("\n"),
  ...readCapture("nccl/98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log").split("\n"),
  "  Rank 9 has launched up to operation 1203 -- GPU 1 managed by process 4242 on node 10.0.0.8",
  "DEAD",
  "  2 job processes are considered dead (unreachable via the RAS network)",
  "  Process 4252 on node 10.0.0.9 managing GPUs 2-3",
  "#0-1 (1111222233334444) ERROR",
  "  Asynchronous errors on 2 ranks",
];

function numbersOf(x: unknown, out: number[] = []): number[] {
  if (typeof x === "number") out.push(x);
  else if (Array.isArray(x)) for (const v of x) numbersOf(v, out);
  else if (x !== null && typeof x === "object") for (const v of Object.values(x)) numbersOf(v, out);
  return out;
}

function read(text: string): readonly RasReport[] {
  const r = new RasReader();
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r.reports();
}

describe("fuzz: NCCL RAS report reader", () => {
  it("mutated reports: never throws, finite non-negative integers, output bounded by the input", () => {
    fc.assert(
      fc.property(mutatedText(REPORT_LINES, 60), (text) => {
        const reports = read(text);
        const lines = text.split("\n").length;
        for (const n of numbersOf(reports)) expect(Number.isSafeInteger(n) && n >= 0, String(n)).toBe(true);
        const kept = reports.reduce((k, r) => k + r.table.length + r.comms.length + r.processes.length, reports.length);
        expect(kept).toBeLessThanOrEqual(lines);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("NCCL RAS JSON reports (ras/parse-json.ts), fuzzed", () => {
  /** Any JSON value, weighted toward the shapes a RAS document has. */
  const value = fc.letrec((tie) => ({
    any: fc.oneof({ depthSize: "small" }, fc.integer(), fc.double(), fc.string(), fc.boolean(), fc.constant(null), tie("arr"), tie("obj")),
    arr: fc.array(tie("any"), { maxLength: 4 }),
    obj: fc.dictionary(
      fc.constantFrom(
        "rank",
        "host",
        "pid",
        "cuda_dev",
        "nvml_dev",
        "status",
        "collective_counts",
        "AllReduce",
        "abort_flag",
        "async_error",
        "considered_dead",
        "hash",
        "ranks",
        "missing_ranks",
      ),
      tie("any"),
      { maxKeys: 6 },
    ),
  })).any;
  const doc = fc.record({
    communicators: fc.array(
      fc.record({
        hash: fc.oneof(fc.constant("0x49bbd7790311d5eb"), fc.string()),
        ranks: fc.array(
          fc.oneof(
            value,
            fc.record({
              rank: fc.integer(),
              pid: value,
              host: value,
              collective_counts: fc.dictionary(fc.constantFrom("AllReduce", "AllGather"), fc.oneof(fc.integer({ min: 0, max: 5 }), value)),
              status: value,
            }),
          ),
        ),
        missing_ranks: value,
      }),
      { maxLength: 4 },
    ),
    ras: fc.oneof(fc.record({ timeouts_count: value }), value),
  });

  it("any document with RAS's keys and odd values: never throws, and every number kept is finite", () => {
    fc.assert(
      fc.property(doc, (d) => {
        const r = rasReportFromJson(JSON.stringify(d, null, 2));
        if (r === undefined) return;
        for (const n of numbersOf(r)) expect(Number.isFinite(n)).toBe(true);
        // Per communicator: a mismatch per op name (at most 32), one of status, one error, one incomplete.
        expect(r.comms.length).toBeLessThanOrEqual(d.communicators.length * 35);
      }),
      { numRuns: RUNS },
    );
  });
});
