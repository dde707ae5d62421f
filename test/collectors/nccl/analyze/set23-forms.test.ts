/**
 * Forms the twenty-third blind set brought, from its real captures (test/fixtures/nccl-pasted 635,
 * 642, 645, 648), and the mends of the review of the evidence sources (analyze/evidence.ts): PyTorch's
 * store client that timed out, NCCL 2.19+'s retries a process's lines end in, a UCX backtrace whose
 * `Caught signal` line was cut, Open MPI's crash report; retries of Azure's `:` host and of a line a
 * paste glued to another; the order of the findings kept.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { storeConnectTimeout } from "../../../../collectors/nccl/logs/pytorch/store-connect.js";
import { allFindings, brief, dumpWaits, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("PyTorch's store client that timed out (635)", () => {
  it("a Ray worker's `The client socket has timed out after 1800s` to Docker's bridge: a network_error beside the watchdog's timeout", () => {
    const fs = seriousFindings(pastedText("635-"));
    expect(brief(fs).map(([k]) => k)).toEqual(["watchdog_timeout", "network_error"]);
    const net = fs.find((f) => f.kind === "network_error");
    expect(net?.summary).toMatch(/^PyTorch's store client timed out after 1800 s connecting to 172\.17\.0\.2: /);
    expect(net?.summary).toContain("Docker's default bridge");
  });

  it("reads the seconds and the address; the warning it prints while it retries is nothing", () => {
    expect(
      storeConnectTimeout("[E socket.cpp:922] [c10d] The client socket has timed out after 600s while trying to connect to (10.1.2.3, 29500).", "l:1"),
    ).toEqual({
      seconds: 600,
      peer: "10.1.2.3:29500",
      where: "l:1",
    });
    expect(
      seriousFindings(
        "[W socket.cpp:464] [c10d] The client socket has failed to connect to [::ffff:10.0.0.1]:29500 (errno: 99 - Cannot assign requested address).",
      ),
    ).toEqual([]);
  });
});

describe("NCCL's connect retries", () => {
  it("2.19+'s `retrying (21/34)` that a process's lines end in: a network_error warning, as the old retries (642)", () => {
    const fs = seriousFindings(pastedText("642-"));
    expect(brief(fs)).toEqual([["network_error", "warning", []]]);
    expect(fs[0]?.processes).toEqual(["bj4-ml-g8h20-k8s-slave1026-20250527:5971"]);
    expect(fs[0]?.summary).toContain("(Connection refused; 4 retries in these lines)");
  });

  it("the same retries followed by a line of the process: it connected, nothing", () => {
    const retry = "n1:16:63 [0] NCCL INFO socketPollConnect: connect to 10.0.0.9<52333> returned Connection refused, retrying (3/34) after sleep for 300 msec";
    expect(seriousFindings([retry, "n1:16:63 [0] NCCL INFO Connected all rings"].join("\n"))).toEqual([]);
  });

  it("a host NCCL prints as `:` (Azure's images) still retries; a retry a paste glued after another process's line is the retrying process's", () => {
    const azure = "::16674:17023 [0] NCCL INFO Call to connect returned Connection refused, retrying";
    expect(seriousFindings([azure, azure].join("\n"))[0]?.processes).toEqual(["::16674"]);
    const glued = "node2:100:101 [0] NCCL INFO Channel 00/02 :    0   1node1:200:201 [0] NCCL INFO Call to connect returned Connection refused, retrying";
    // The header at the retry's words (the paste glued the ring's last rank `1` to the host name), not node2's.
    expect(seriousFindings(glued)[0]?.processes).toEqual(["1node1:200"]);
  });
});

describe("crash handlers' reports", () => {
  it("a UCX backtrace whose `Caught signal` line was cut, ncclGroupEnd in it: a crash of a process the lines do not name (645)", () => {
    const fs = seriousFindings(pastedText("645-"));
    expect(brief(fs)).toEqual([["nccl_error", "critical", []]]);
    expect(fs[0]?.summary).toMatch(/^A process of the job \(the lines cut before its name\) crashed: caught by UCX's handler, in ncclGroupEnd\. /);
  });

  it("Open MPI's `*** Process received signal ***` names the process, its signal and NCCL's frames from its rows (648)", () => {
    expect(seriousFindings(pastedText("648-"))[0]?.summary).toMatch(/^Process rtptest1621:405884 crashed: caught by Open MPI's handler\. /);
    const report = [
      "[gpu7:4242] *** Process received signal ***",
      "[gpu7:4242] Signal: Segmentation fault (11)",
      "[gpu7:4242] Signal code: Address not mapped (1)",
      "[gpu7:4242] [ 0] /lib64/libpthread.so.0(+0xf630)[0x7f0]",
      "[gpu7:4242] [ 1] /usr/lib/libnccl.so.2(ncclGroupEnd+0x1d)[0x7f1]",
      "[gpu7:4242] *** End of error message ***",
    ];
    const fs = seriousFindings(report.join("\n"));
    expect(brief(fs)).toEqual([["nccl_error", "critical", []]]);
    expect(fs[0]?.processes).toEqual(["gpu7:4242"]);
    expect(fs[0]?.summary).toContain("crashed: signal 11 (Segmentation fault), caught by Open MPI's handler, in ncclGroupEnd.");
  });
});

describe("the evidence sources' findings keep their place", () => {
  it("a crash beside another process's CUDA failure: the crash leads, as before the sources were one list", () => {
    const r = analyzeLogs([
      {
        name: "x.log",
        text: [
          "node1:100:100 [0] enqueue.cc:123 NCCL WARN Cuda failure 'invalid argument'",
          "[node2:200:0:200] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x10)",
        ].join("\n"),
      },
    ]);
    expect(r.headline).toMatch(/^Process node2:200 crashed: signal 11/);
    expect(r.findings.map((f) => f.processes)).toEqual([["node2:200"], ["node1:100"]]);
  });
});

describe("the second review's mends", () => {
  it("store client: ms and min as well as s; prose that quotes the words, or a line without c10d's context, is nothing", () => {
    expect(
      storeConnectTimeout("[E socket.cpp:922] [c10d] The client socket has timed out after 600000ms while trying to connect to (10.1.2.3, 29500).", "l:1")
        ?.seconds,
    ).toBe(600);
    expect(
      storeConnectTimeout("torch.distributed.DistNetworkError: The client socket has timed out after 20min while trying to connect to (n1, 29500).", "l:1")
        ?.seconds,
    ).toBe(1200);
    expect(
      seriousFindings("INFO: if you see 'The client socket has timed out after 1800s while trying to connect to (MASTER_ADDR, MASTER_PORT)', check the port"),
    ).toEqual([]);
  });

  it("retries in one log and the process's next line in another: it went on, nothing (one state for all the logs)", () => {
    const r = analyzeLogs([
      {
        name: "stdout.log",
        text: "n1:16:63 [0] NCCL INFO socketPollConnect: connect to 10.0.0.9<52333> returned Connection refused, retrying (1/34) after sleep for 100 msec",
      },
      { name: "nccl.n1.16.log", text: "n1:16:63 [0] NCCL INFO Connected all rings" },
    ]);
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
  });

  it("a 2.19+ retry a paste glued after another process's line is the retrying process's", () => {
    const glued =
      "node2:100:101 [0] NCCL INFO Channel 00/02 :    0   1n1:200:201 [0] NCCL INFO socketPollConnect: connect to 10.0.0.9<52333> returned Connection refused, retrying (3/34) after sleep for 300 msec";
    expect(seriousFindings(glued)[0]?.processes).toEqual(["1n1:200"]);
  });

  it("UCX: a line that quotes `==== backtrace` is no crash; a cut header's crash that Open MPI names by pid is one crash", () => {
    expect(seriousFindings("checker: no '==== backtrace' block found for tid: 42, OK")).toEqual([]);
    const both = [
      "[gpu7:4242] *** Process received signal ***",
      "[gpu7:4242] Signal: Segmentation fault (11)",
      "[gpu7:4242] *** End of error message ***",
      "==== backtrace (tid:   4242) ====",
      " 0 0x0000000000042520 __sigaction()  ???:0",
      " 1 0x000000000007e6d1 ncclGroupEnd()  ???:0",
      "=================================",
    ];
    const fs = seriousFindings(both.join("\n"));
    expect(fs.map((f) => f.processes)).toEqual([["gpu7:4242"]]);
  });

  it("Open MPI pads a pid under 10000 (`[n1:05951]`), and several processes' reports interleave: each keeps its signal", () => {
    const rows = [
      "[n1:05951] *** Process received signal ***",
      "[n1:07002] *** Process received signal ***",
      "[n1:05951] Signal: Segmentation fault (11)",
      "[n1:07002] Signal: Bus error (7)",
      "[n1:07002] [ 1] /usr/lib/libnccl.so.2(ncclAllReduce+0x1d)[0x7f1]",
    ];
    const fs = seriousFindings(rows.join("\n"));
    expect(fs.map((f) => [f.processes[0], /signal (\d+)/.exec(f.summary)?.[1], f.summary.includes("in ncclAllReduce")])).toEqual([
      ["n1:5951", "11", false],
      ["n1:7002", "7", true],
    ]);
  });

  it("py-spy --native: a sample on its way through a launch is a note, an idle thread a warning; a Python frame named abort hides no wait", () => {
    const dump = (status: string, inner: string[], py: string[] = []): string =>
      [
        "Process 4242: python train.py",
        "Python v3.10.12 (/usr/bin/python3.10)",
        "",
        `Thread 4242 (${status}): "MainThread"`,
        ...inner.map((f) => `    ${f}`),
        "    ncclAllReduce (enqueue.cc:2109)",
        "    c10d::ProcessGroupNCCL::allreduce_impl (libtorch_cuda.so)",
        ...py.map((f) => `    ${f}`),
        "    train_step (train.py:88)",
      ].join("\n");
    const launching = dump("active", ["cudaLaunchKernelExC (libcudart.so.12)", "ncclLaunchKernel (enqueue.cc:1200)"]);
    expect(brief(dumpWaits(launching))).toEqual([["hang_suspected", "info", []]]);
    // The one evidence: raised to a warning (analyze/dump-alone.ts).
    expect(brief(allFindings(launching))).toEqual([["hang_suspected", "warning", []]]);
    expect(brief(dumpWaits(dump("idle", ["sched_yield (libc.so.6)"])))).toEqual([["hang_suspected", "warning", []]]);
    expect(brief(dumpWaits(dump("idle", ["sched_yield (libc.so.6)"], ["abort (myjob/control.py:12)"])))).toEqual([["hang_suspected", "warning", []]]);
  });

  it("a sanitizer's symbolized row (`in f(...) /src/x.cc:50:3`) is no gdb frame; a frame naming ncclCommGetAsyncError is no NCCL error", () => {
    const lsan = [
      "    #0 0x7f1 in malloc /src/asan/asan_malloc_linux.cpp:69:3",
      "    #1 0x7f3 in ncclAllReduce(void const*, void*) /src/nccl/src/collectives.cc:50:3",
    ];
    expect(allFindings(lsan.join("\n"))).toEqual([]);
    expect(seriousFindings("    ncclCommGetAsyncError (libnccl.so.2)")).toEqual([]);
    expect(dumpWaits("#0  0x00007f in ncclCommGetAsyncError () from /lib/libnccl.so.2")).toEqual([]);
    // Alone, it is a gdb frame: a dump with nothing else, no NCCL error.
    expect(seriousFindings("#0  0x00007f in ncclCommGetAsyncError () from /lib/libnccl.so.2").map((f) => [f.kind, f.summary.slice(0, 60)])).toEqual([
      ["hang_suspected", "No finding here tells of a hang or a failure but these stack"],
    ]);
  });
});
