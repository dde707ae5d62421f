/**
 * gdb's backtraces among the logs: a thread stopped inside one of NCCL's calls is a hang_suspected
 * (nccl-pasted 443 in the corpus; test/fixtures/gdb/ here); NCCL's own threads, and a backtrace
 * after a crash signal, are none.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { gdbFrame, ncclCall } from "../../../../../collectors/nccl/logs/native/gdb-backtrace.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const gdb = (prefix: string): string => {
  const f = listFixtures("gdb", ".txt").find((x) => x.startsWith(prefix)) ?? "";
  return readCapture(`gdb/${f}`);
};
const findings = (text: string): [string, string, string][] =>
  analyzeLogs([{ name: "bt.txt", text }]).findings.map((f) => [f.kind, f.severity, f.summary.split(/: (?:it was|they were) /)[0] ?? ""]);

describe("gdb backtraces", () => {
  it("an application thread inside ncclGroupEnd (nccl issue 899): a hang_suspected warning naming the call and its caller", () => {
    const fs = analyzeLogs([{ name: "bt.txt", text: gdb("01-") }]).findings;
    expect(fs.map((f) => [f.kind, f.severity, f.evidence])).toEqual([["hang_suspected", "warning", ["bt.txt:4"]]]);
    expect(fs[0]?.summary).toMatch(
      /^A native backtrace \(gdb\) shows a thread stopped inside NCCL's ncclGroupEnd \(called from tfrt::gpu::wrapper::NcclGroupEnd\): /,
    );
    expect(fs[0]?.summary).toContain("A collective returns only when its peers take part");
  });

  it("NCCL's own threads (proxy progress and service, nccl issue 901) are no wait of the application: nothing", () => {
    expect(findings(gdb("02-"))).toEqual([]);
  });

  it("a backtrace after a crash signal is where it crashed, not where it waited: nothing from this reader", () => {
    const bt = [
      "Program received signal SIGSEGV, Segmentation fault.",
      "#0  0x00007f04fc9e6a92 in ?? () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
      "#1  0x00007f04fc98d6e6 in ncclGroupEnd () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
    ];
    expect(findings(bt.join("\n"))).toEqual([]);
    // Attached afterwards to a process that waits: a wait again.
    const attached = [
      ...bt,
      "Attaching to process 4242",
      "#0  0x00007f04fc98d6e6 in ncclCommDestroy () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
      "#1  0x0000555555554a3c in main ()",
    ];
    expect(findings(attached.join("\n"))).toEqual([
      ["hang_suspected", "warning", "A native backtrace (gdb) shows a thread stopped inside NCCL's ncclCommDestroy (called from main)"],
    ]);
  });

  it("threads in different calls: one finding per kind of wait, each naming its calls", () => {
    const text = [
      'Thread 2 (Thread 0x7f0 (LWP 11) "python"):',
      "#0  0x1 in usleep () from /lib/libc.so.6",
      "#1  0x2 in pncclCommInitRankConfig () from /lib/libnccl.so.2",
      'Thread 1 (Thread 0x7f1 (LWP 10) "python"):',
      "#0  0x3 in sched_yield () from /lib/libc.so.6",
      "#1  0x4 in ncclAllReduce () from /lib/libnccl.so.2",
      "#2  0x5 in ncclGroupEnd () from /lib/libnccl.so.2",
      "#3  0x6 in c10d::ProcessGroupNCCL::allreduce_impl(at::Tensor&) () from /lib/libtorch_cuda.so",
    ].join("\n");
    expect(findings(text).map(([k, , s]) => [k, s])).toEqual([
      ["hang_suspected", "A native backtrace (gdb) shows a thread stopped inside NCCL's ncclCommInitRankConfig"],
      ["hang_suspected", "A native backtrace (gdb) shows a thread stopped inside NCCL's ncclGroupEnd (called from c10d::ProcessGroupNCCL::allreduce_impl)"],
    ]);
  });

  it("reads gdb's frame rows: with and without an address, C++ signatures cut, no other row", () => {
    expect(gdbFrame("#6  0x00007f67471be402 in pncclCommInitRankConfig () from /lib/x86_64-linux-gnu/libnccl.so.2")).toEqual({
      n: 6,
      fn: "pncclCommInitRankConfig",
    });
    expect(gdbFrame("#4  ncclProxyProgress (proxyState_=0x5603cb96d1e0) at proxy.cc:868")).toEqual({ n: 4, fn: "ncclProxyProgress" });
    expect(gdbFrame("#10 0x00007f05da06d3e5 in tfrt::gpu::wrapper::CclGroupEnd(tfrt::gpu::wrapper::Platform) () from /x.so")).toEqual({
      n: 10,
      fn: "tfrt::gpu::wrapper::CclGroupEnd",
    });
    for (const row of ["# comment", "#include <nccl.h>", "#0x1 in f ()", "    () from /usr/lib/libtorch_cuda.so"]) expect(gdbFrame(row), row).toBeUndefined();
    expect([ncclCall("pncclCommInitRankConfig"), ncclCall("ncclProxyProgress"), ncclCall("ncclCommDestroy")]).toEqual([
      { call: "ncclCommInitRankConfig", wait: "init" },
      undefined,
      { call: "ncclCommDestroy", wait: "teardown" },
    ]);
  });
});
