/**
 * Forms the twenty-first blind set brought, from its real captures (test/fixtures/nccl-pasted
 * 594, 601): NCCL 1.x's WARN line with no header, and a gdb backtrace of a thread stopped in a CUDA
 * launch, with no NCCL call.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { nccl1Warn } from "../../../../collectors/nccl/logs/parse/nccl1-warn.js";
import type { Finding } from "../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

const text = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const serious = (t: string): Finding[] => analyzeLogs([{ name: "x.log", text: t }]).findings.filter((f) => f.severity !== "info");
const brief = (fs: readonly Finding[]): [string, string, number[]][] => fs.map((f) => [f.kind, f.severity, f.ranks]);

describe("NCCL 1.x's WARN (594: MXNet's kvstore, NCCL 1.3.4)", () => {
  it("`WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'` is a CUDA failure inside NCCL, of no known process", () => {
    const fs = serious(text("594-"));
    expect(brief(fs)).toEqual([["nccl_error", "critical", []]]);
    expect(fs[0]?.summary).toContain(`"Cuda failure 'invalid resource handle'"`);
    expect(fs[0]?.evidence).toEqual(["x.log:12"]);
  });

  it("reads the source location and the message; other lines that open with WARN are none", () => {
    expect(nccl1Warn("WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'")).toMatchObject({
      kind: "warn",
      warnKind: "cuda_error",
      file: "src/reduce.cu",
      line: 126,
      message: "Cuda failure 'invalid resource handle'",
    });
    for (const line of [
      "WARN: disk almost full",
      "WARN src/reduce.cu Cuda failure",
      "WARN src/reduce.cu:12a Cuda failure",
      "WARN 2024-05-01 12:30:45 slow step",
      "WARN src/init.cu:88",
      "  WARN src/reduce.cu:126 Cuda failure",
    ])
      expect(nccl1Warn(line), line).toBeUndefined();
  });
});

describe("gdb: a thread stopped in a CUDA launch or synchronize (601)", () => {
  it("cudaLaunchKernel spinning in libcuda's sched_yield, no NCCL call: a hang_suspected warning that asks for a second backtrace", () => {
    const fs = serious(text("601-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(/^A native backtrace \(gdb\) shows a thread stopped inside CUDA's cudaLaunchKernel: it was waiting there when stopped\. /);
    expect(fs[0]?.summary).toContain("a second one a minute later in the same place");
  });

  it("a trace with an NCCL call is NCCL's wait, the CUDA synchronize inside it not told again; after a crash signal, nothing", () => {
    const trace = [
      'Thread 1 (Thread 0x7f1 (LWP 10) "python"):',
      "#0  0x3 in sched_yield () from /lib/libc.so.6",
      "#1  0x4 in cudaStreamSynchronize () from /lib/libcudart.so.12",
      "#2  0x5 in ncclCommDestroy () from /lib/libnccl.so.2",
      "#3  0x6 in c10d::NCCLComm::~NCCLComm() () from /lib/libtorch_cuda.so",
    ];
    const fs = serious(trace.join("\n"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("inside NCCL's ncclCommDestroy (called from c10d::NCCLComm::~NCCLComm)");
    const sync = [
      "#0  0x3 in sched_yield () from /lib/libc.so.6",
      "#1  0x4 in cuCtxSynchronize () from /lib/libcuda.so.1",
      "#2  0x5 in main () at train.cc:12",
    ];
    expect(serious(sync.join("\n"))[0]?.summary).toContain("inside CUDA's cuCtxSynchronize (called from main)");
    const crashed = ['Thread 1 "python" received signal SIGSEGV, Segmentation fault.', ...sync];
    expect(serious(crashed.join("\n"))).toEqual([]);
  });
});
