/**
 * Horovod's coordinator refusing a tensor the ranks submitted differently (logs/horovod/mismatch.ts):
 * the real capture is nccl-pasted 424 (TF/Keras, mpirun's `[1,2]<stderr>:` tags); the other forms
 * follow Horovod's format strings (controller.cc ConstructResponse).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const run = (lines: readonly string[]): Finding[] => analyzeLogs([{ name: "job.log", text: lines.join("\n") }]).findings;
const serious = (fs: readonly Finding[]): Finding[] => fs.filter((f) => f.severity !== "info");

describe("Horovod's Mismatched ... errors", () => {
  it("424: the CPU/GPU device selection error, reported by rank 2, is one critical collective_mismatch naming no rank", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("424-")) ?? "";
    const fs = serious(analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings);
    expect(fs.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["collective_mismatch", "critical", []]]);
    expect(fs[0]?.summary).toContain('"Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device GPU, but another rank specified device CPU."');
    expect(fs[0]?.summary).toContain("reported by rank 2");
  });

  it("each form of the coordinator's words, once per message however many ranks print it", () => {
    const shapes =
      "Mismatched ALLREDUCE tensor shapes: One rank sent a tensor with dimension 0 equal to 3, but another rank sent a tensor with dimension 0 equal to 4.";
    const fs = serious(
      run([
        `[1,0]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: ${shapes}`,
        `[1,1]<stderr>:horovod.common.exceptions.HorovodInternalError: ${shapes}`,
        "[1,1]<stderr>:RuntimeError: Mismatched data types: One rank had type float32, but another rank had type int64.",
        "Mismatched BROADCAST root ranks: One rank specified root rank 0, but another rank specified root rank 1.",
      ]),
    );
    expect(fs.map((f) => f.kind)).toEqual(["collective_mismatch", "collective_mismatch", "collective_mismatch"]);
    expect(fs[0]?.summary).toContain("reported by ranks 0,1");
    expect(fs[0]).toMatchObject({ count: 2, evidence: ["job.log:1", "job.log:2"] });
    expect(fs[2]?.summary).toContain("(Horovod does not say which rank differs)");
  });

  it("every rank's log printing it is one finding; a decimal in the words does not end the sentence", () => {
    const line = (r: number): string =>
      `[1,${r}]<stderr>:horovod.common.exceptions.HorovodInternalError: Mismatched prescale and/or postscale factors: One rank sent factors (1, 1), but another rank sent factors (0.5, 1). Please check.`;
    const fs = serious(analyzeLogs([0, 1, 2].map((r) => ({ name: `rank${r}.log`, text: line(r) }))).findings);
    expect(fs).toHaveLength(1);
    expect(fs[0]?.summary).toContain('"Mismatched prescale and/or postscale factors: One rank sent factors (1, 1), but another rank sent factors (0.5, 1)."');
    expect(fs[0]?.summary).toContain("reported by ranks 0-2");
    expect(fs[0]?.evidence).toEqual(["rank0.log:1", "rank1.log:1", "rank2.log:1"]);
  });

  it("a Python repr of the error (`HorovodInternalError('...')`) is the same message as the plain one", () => {
    const words =
      "Mismatched ALLREDUCE tensor shapes: One rank sent a tensor with dimension 0 equal to 3, but another rank sent a tensor with dimension 0 equal to 4.";
    const fs = serious(run([`horovod.common.exceptions.HorovodInternalError: ${words}`, `RuntimeError: HorovodInternalError('${words}')`]));
    expect(fs).toHaveLength(1);
    expect(fs[0]?.count).toBe(2);
  });

  it("other words that say mismatched are nothing", () => {
    expect(serious(run(["ValueError: Mismatched shapes: (3,) vs (4,)", "Mismatched keys: One rank of the table"]))).toEqual([]);
  });
});
