/**
 * A process killed by a signal, as UCX's handler reports it (logs/crash/caught-signal.ts). The real
 * capture is nccl-pasted 383 (Megatron-LM in an NGC container: `Caught signal 7 (Bus error:
 * nonexistent physical address)` with a backtrace in ncclGroupEnd, among NCCL's init lines).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { caughtSignal } from "../../../../../collectors/nccl/logs/crash/caught-signal.js";
import type { Finding } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const run = (lines: readonly string[]): Finding[] => analyzeLogs([{ name: "job.log", text: lines.join("\n") }]).findings;

describe("UCX's Caught signal", () => {
  it("the header's forms: the pid padded with blanks, or not; anything else is no crash", () => {
    expect(caughtSignal("[09677202c889:5283 :0:5704] Caught signal 7 (Bus error: nonexistent physical address)")).toEqual({
      process: "09677202c889:5283",
      tid: 5704,
      signal: 7,
      what: "Bus error: nonexistent physical address",
    });
    expect(caughtSignal("[node-1:12345:0:12399] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)")).toMatchObject({
      process: "node-1:12345",
      signal: 11,
    });
    for (const l of ["Caught signal 11 (Segmentation fault)", "[a b:1:0:2] Caught signal 11 (x)", "[host:12:0] Caught signal 11 (x)"])
      expect(caughtSignal(l)).toBeUndefined();
  });

  it("383: the crash of 09677202c889:5283 in ncclGroupEnd, a critical nccl_error with the /dev/shm advice (its lines give it no rank)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("383-")) ?? "";
    const fs = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings.filter((f) => f.severity !== "info");
    expect(fs.map((f) => [f.kind, f.severity, f.processes])).toEqual([["nccl_error", "critical", ["09677202c889:5283"]]]);
    expect(fs[0]?.summary).toContain(
      "Process 09677202c889:5283 crashed: signal 7 (Bus error: nonexistent physical address), caught by UCX's handler, in ncclGroupEnd.",
    );
    expect(fs[0]?.summary).toContain("/dev/shm too small");
    expect(fs[0]?.ranks).toEqual([]);
  });

  it("a segmentation fault outside NCCL says so without the /dev/shm advice; two crashes of one process are one finding", () => {
    const fs = run([
      "[n1:40:0:41] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))",
      "==== backtrace (tid:     41) ====",
      " 0 0x0000000000043090 killpg()  ???:0",
      " 1 0x00000000000a1b2c my_kernel_launch()  ???:0",
      "=================================",
      "[n1:40:0:42] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))",
    ]);
    expect(fs.map((f) => [f.kind, f.evidence])).toEqual([["nccl_error", ["job.log:1", "job.log:6"]]]);
    expect(fs[0]?.summary).not.toContain("/dev/shm");
    expect(fs[0]?.summary).not.toContain(", in ");
  });

  it("behind a launcher's tag; backtraces matched to their crash by thread; older UCX's rows", () => {
    expect(caughtSignal("[1,3]<stderr>:[gpu-node-02:41236:0:41301] Caught signal 7 (Bus error: nonexistent physical address)")).toMatchObject({
      process: "gpu-node-02:41236",
      tid: 41301,
    });
    expect(caughtSignal("3: [n:1:0:2] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))")?.what).toBe(
      "Segmentation fault: address not mapped to object at address (nil)",
    );
    const fs = run([
      "[node-a:100:0:110] Caught signal 7 (Bus error: nonexistent physical address)",
      "[node-a:200:0:210] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)",
      "==== backtrace (tid:    110) ====",
      " 0  /usr/lib/x86_64-linux-gnu/libnccl.so.2(ncclGroupEnd+0x1d) [0x7f00]",
      "=================================",
      "==== backtrace (tid:    210) ====",
      " 0 0x0000000000001234 myapp_compute()  ???:0",
      "=================================",
    ]);
    expect(fs.map((f) => [f.processes, f.summary.includes("in ncclGroupEnd")])).toEqual([
      [["node-a:100"], true],
      [["node-a:200"], false],
    ]);
  });
});
