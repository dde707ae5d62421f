/**
 * Forms the twenty-first blind set brought, from its real captures (test/fixtures/nccl-pasted
 * 594, 601): NCCL 1.x's WARN line with no header, and a gdb backtrace of a thread stopped in a CUDA
 * launch, with no NCCL call.
 */
import { describe, expect, it } from "vitest";
import { nccl1Warn } from "../../../../collectors/nccl/logs/parse/nccl1-warn.js";
import { allFindings, brief, dumpWaits, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("NCCL 1.x's WARN (594: MXNet's kvstore, NCCL 1.3.4)", () => {
  it("`WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'` is a CUDA failure inside NCCL, of no known process", () => {
    const fs = seriousFindings(pastedText("594-"));
    expect(brief(fs)).toEqual([["nccl_error", "critical", []]]);
    expect(fs[0]?.summary).toContain(`"Cuda failure 'invalid resource handle'"`);
    expect(fs[0]?.evidence).toEqual(["x.log:12"]);
  });

  it("reads the source location and the message; other lines that open with WARN are none", () => {
    expect(nccl1Warn("WARN src/core.cu:412 Unhandled cuda error")?.file).toBe("src/core.cu");
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
      // Other loggers' `%p %c:%L` forms: a Java class, a Python module.
      "WARN com.zaxxer.hikari.pool.HikariPool:787 - Connection is not available, request timed out after 30000ms.",
      "WARN kafka.network.Processor:70 Connection reset by peer",
      "WARN health.py:10 NCCL timeout in watchdog",
    ])
      expect(nccl1Warn(line), line).toBeUndefined();
  });
});

describe("gdb: a thread stopped in a CUDA launch or synchronize (601)", () => {
  it("cudaLaunchKernel spinning in libcuda's sched_yield, no NCCL call: a note, as a healthy GPU-bound job's main thread waits there too; the one evidence, a warning", () => {
    expect(brief(dumpWaits(pastedText("601-")))).toEqual([["hang_suspected", "info", []]]);
    const fs = allFindings(pastedText("601-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("No finding here tells of a hang or a failure but these stack dumps");
    expect(fs[0]?.summary).toMatch(/^A native backtrace \(gdb\) shows a thread stopped inside CUDA's cudaLaunchKernel: it was waiting there when stopped\. /);
    expect(fs[0]?.summary).toContain("a second one a minute later in the same place");
  });

  it("a thread in NCCL is NCCL's wait, its CUDA synchronize not told again, nor another thread's; after a crash signal, nothing", () => {
    const trace = [
      'Thread 2 (Thread 0x7f2 (LWP 11) "python"):',
      "#0  0x3 in sched_yield () from /lib/libc.so.6",
      "#1  0x4 in cudaStreamSynchronize () from /lib/libcudart.so.12",
      "#2  0x5 in ncclCommDestroy () from /lib/libnccl.so.2",
      "#3  0x6 in c10d::NCCLComm::~NCCLComm() () from /lib/libtorch_cuda.so",
      'Thread 1 (Thread 0x7f1 (LWP 10) "python"):',
      "#0  0x7 in cudaEventSynchronize () from /lib/libcudart.so.12",
      "#1  0x8 in at::native::_local_scalar_dense_cuda(at::Tensor const&) () from /lib/libtorch_cuda.so",
    ];
    const fs = allFindings(trace.join("\n"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("inside NCCL's ncclCommDestroy (called from c10d::NCCLComm::~NCCLComm)");
    const sync = [
      "#0  0x3 in sched_yield () from /lib/libc.so.6",
      "#1  0x4 in cuCtxSynchronize () from /lib/libcuda.so.1",
      "#2  0x5 in main () at train.cc:12",
    ];
    expect(allFindings(sync.join("\n"))[0]?.summary).toContain("inside CUDA's cuCtxSynchronize (called from main)");
    expect(allFindings(['Thread 1 "python" received signal SIGSEGV, Segmentation fault.', ...sync].join("\n"))).toEqual([]);
  });

  it("a crash whose signal line was cut (the handler's frame, raise and abort), and a sanitizer's rows, are no wait", () => {
    const handler = [
      "#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=1) at ./nptl/pthread_kill.c:44",
      "#1  0x1 in raise () from /lib/libc.so.6",
      "#2  0x2 in abort () from /lib/libc.so.6",
      "#3  <signal handler called>",
      "#4  0x3 in ?? () from /lib/libcuda.so.1",
      "#5  0x4 in cudaLaunchKernel () from /lib/libcudart.so.12",
    ];
    expect(allFindings(handler.join("\n"))).toEqual([]);
    const terminate = [
      "#0  0x1 in raise () from /lib/libc.so.6",
      "#1  0x2 in abort () from /lib/libc.so.6",
      "#2  0x3 in ncclAllReduce () from /lib/libnccl.so.2",
    ];
    expect(allFindings(terminate.join("\n"))).toEqual([]);
    const lsan = [
      "    #0 0x7f1 in malloc (/usr/lib/libasan.so.8+0xfe1ef)",
      "    #1 0x7f2 in cudaLaunchKernel (/usr/lib/libcudart.so.12+0x6bf5e)",
      "    #2 0x7f3 in ncclCommInitRank (/usr/lib/libnccl.so.2+0x4a1b2)",
    ];
    expect(allFindings(lsan.join("\n"))).toEqual([]);
  });
});
