/**
 * Stack dumps with nothing else beside them (collectors/nccl/analyze/dump-alone.ts): real captures
 * of test/fixtures/nccl-pasted and test/fixtures/stacks, alone and beside the findings that already
 * tell a hang or a failure.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { allFindings, besideTimeout, brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

const stacks = (prefix: string): string => readCapture(`stacks/${listFixtures("stacks", ".txt").find((f) => f.startsWith(prefix)) ?? ""}`);

describe("stack dumps alone", () => {
  it("a py-spy dump of one process idle in autograd's backward (784): a hang_suspected warning saying where, and how to tell", () => {
    const fs = seriousFindings(pastedText("784-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(
      /^No finding here tells of a hang or a failure but these stack dumps \(one thread\): py-spy at x\.log:\d+ of pid 39: MainThread \(idle\) in torch\/autograd\/__init__\.py:266 backward <- /,
    );
    expect(fs[0]?.summary).toContain("a hang is suspected here, not shown");
    expect(fs[0]?.summary).toContain("A second dump a minute later in the same frames");
    expect(fs[0]?.evidence).toEqual([expect.stringMatching(/^x\.log:\d+$/)]);
  });

  it("a dump's rank, where its prefix gives one, is the finding's (stacks/01: `[rank0]:`-less py-spy of rank 0's file)", () => {
    const text = stacks("01-");
    const fs = analyzeLogs([{ name: "pyspy-rank0.txt", text }]).findings.filter((f) => f.severity !== "info");
    expect(brief(fs)).toEqual([["hang_suspected", "warning", [0]]]);
    expect(fs[0]?.summary).toContain("of rank 0: MainThread (idle) in threading.py:");
  });

  it("gdb's threads of NCCL's proxy alone (596): the dump says the application's thread is not in the lines", () => {
    const fs = seriousFindings(pastedText("596-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(
      /^No finding here tells of a hang or a failure but these stack dumps \(2 threads\): gdb at x\.log:\d+ \(Thread 10\): ncclProxyGetPostedOps <- ncclProxyProgress; /,
    );
    expect(fs[0]?.summary).toContain("These are only NCCL's own threads");
  });

  it("a thread in Open MPI's progress engine (774) is no NCCL thread: no such sentence", () => {
    const fs = seriousFindings(pastedText("774-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("gdb at x.log:2 (Thread 103): btl_openib_component_progress <- opal_progress <- ... <- mca_pml_ob1_send");
    expect(fs[0]?.summary).not.toContain("NCCL's own threads");
  });

  it("a CUDA wait's note (601) is raised, not told twice", () => {
    const fs = allFindings(pastedText("601-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(/^A native backtrace \(gdb\) shows a thread stopped inside CUDA's cudaLaunchKernel/);
    expect(fs[0]?.summary).toContain("No finding here tells of a hang or a failure but these stack dumps, and stacks are dumped when a job seems stuck");
  });

  it("more threads than three: the others counted", () => {
    const dump = (pid: number): string[] => [
      `Process ${pid}: python train.py`,
      "Python v3.10.12 (/usr/bin/python3.10)",
      "",
      `Thread ${pid} (idle): "MainThread"`,
      `    step (train.py:${pid})`,
      "",
    ];
    const fs = seriousFindings([41, 42, 43, 44, 45].flatMap(dump).join("\n"));
    // Five processes in the same frames: no outlier; the dumps alone.
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(
      /^No finding here tells of a hang or a failure but these stack dumps \(5 threads\): py-spy at x\.log:4 of pid 41: MainThread \(idle\) in train\.py:41 step; .*; and 2 more\. /,
    );
  });

  it("beside a watchdog timeout, a failure or a crash, the dumps add no hang of their own", () => {
    expect(brief(seriousFindings(besideTimeout(pastedText("784-"))))).toEqual([["watchdog_timeout", "critical", [0]]]);
    // A real NCCL failure (the CUDA failure inside NCCL of 237) beside the dump.
    const failed = seriousFindings(`${pastedText("237-")}\n${pastedText("784-")}`);
    expect(failed.map((f) => f.kind)).not.toContain("hang_suspected");
    expect(failed.map((f) => f.kind)).toContain("nccl_error");
    // faulthandler's dumps written for a segfault (stacks/04, 07) are crashes, not hangs.
    expect(seriousFindings(stacks("04-"))).toEqual([]);
    expect(seriousFindings(stacks("07-"))).toEqual([]);
    // gdb after a crash signal.
    const bt = [
      "Program received signal SIGSEGV, Segmentation fault.",
      "#0  0x00007f04fc9e6a92 in ?? () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
      "#1  0x00007f04fc98d6e6 in ncclGroupEnd () from /usr/lib/x86_64-linux-gnu/libnccl.so.2",
    ];
    expect(seriousFindings(bt.join("\n"))).toEqual([]);
  });

  // Inputs written by the review of the dumps-alone rule (each in the format of the tool that prints it): crashes,
  // exceptions, breakpoints and notes that are no stack of a stopped process.
  const notStopped: [string, string][] = [
    [
      "AddressSanitizer's report, rows without columns",
      "=================================================================\n==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55d4 bp 0x7ffd sp 0x7ffd\nREAD of size 4 at 0x602000000010 thread T0\n    #0 0x55d4c1 in main /src/test.c:12\n    #1 0x7f1e2a in __libc_start_main /build/glibc/csu/../csu/libc-start.c:308\n    #2 0x55d4a9 in _start (/tmp/a.out+0x10a9)\nSUMMARY: AddressSanitizer: heap-use-after-free /src/test.c:12 in main",
    ],
    [
      "faulthandler's fatal error with CPython's `Python runtime state:` line",
      'Fatal Python error: PyThreadState_Get: the function must be called with the GIL held, but the GIL is released (the current Python thread state is NULL)\nPython runtime state: initialized\n\nCurrent thread 0x00007f1e2f9d3740 (most recent call first):\n  File "/job/train.py", line 88 in train_step\n  File "/job/train.py", line 120 in main',
    ],
    [
      "faulthandler on Windows (`Windows fatal exception: access violation`)",
      'Windows fatal exception: access violation\n\nCurrent thread 0x00001a2c (most recent call first):\n  File "C:\\job\\train.py", line 88 in train_step\n  File "C:\\job\\train.py", line 120 in main',
    ],
    [
      "PyTorch's C++ CapturedTraceback of an exception",
      "Traceback (most recent call last):\n  File \"/job/train.py\", line 20, in <module>\n    x = torch.ones(3).view(4)\nRuntimeError: shape '[4]' is invalid for input of size 3\nException raised from view at /pytorch/aten/src/ATen/native/TensorShape.cpp:3590 (most recent call first):\nC++ CapturedTraceback:\n#4 std::_Function_handler<std::shared_ptr<c10::LazyValue<std::string> const> (), c10::SetStackTraceFetcher(std::function<std::string ()>)::{lambda()#1}>::_M_invoke(std::_Any_data const&) from Logging.cpp:0\n#5 c10::Error::Error(c10::SourceLocation, std::string) from ??:0\n#6 c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) from ??:0\n#7 at::native::view(at::Tensor const&, c10::ArrayRef<long>) from ??:0\n#8 torch::autograd::THPVariable_view(_object*, _object*, _object*) from python_variable_methods.cpp:0",
    ],
    [
      "notes numbered `#1 ... (port 12) at 02:40`, `#3 0x1f in the register dump`",
      "# Incident notes\n#1 Checked the switch (port 12) at 02:40 from the runbook\n#2 Restarted the job (attempt 3) at 02:55\n#3 0x1f in the register dump, see above",
    ],
    [
      "thread apply all bt of an abort whose signal line was cut",
      'Thread 3 (Thread 0x7f1e2a3b4700 (LWP 4243) "python"):\n#0  __futex_abstimed_wait_common64 (private=0, cancel=true, abstime=0x0, op=393, expected=0, futex_word=0x55d4) at ./nptl/futex-internal.c:57\n#1  0x00007f8b3c093a41 in __pthread_cond_wait_common (abstime=0x0, clockid=0, mutex=0x55d4, cond=0x55d4) at ./nptl/pthread_cond_wait.c:503\n#2  0x00007f8b3c093a41 in ___pthread_cond_wait (cond=0x55d4, mutex=0x55d4) at ./nptl/pthread_cond_wait.c:618\n#3  0x00007f8b2c1a3b1c in std::condition_variable::wait(std::unique_lock<std::mutex>&) () from /lib/x86_64-linux-gnu/libstdc++.so.6\n\nThread 1 (Thread 0x7f1e2f9d3740 (LWP 4240) "python"):\n#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=139) at ./nptl/pthread_kill.c:44\n#1  __pthread_kill_internal (signo=6, threadid=139) at ./nptl/pthread_kill.c:78\n#2  __GI___pthread_kill (threadid=139, signo=signo@entry=6) at ./nptl/pthread_kill.c:89\n#3  0x00007f8b3c042476 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26\n#4  0x00007f8b3c0287f3 in __GI_abort () at ./stdlib/abort.c:79',
    ],
    [
      "gdb stopped at the user's breakpoint",
      'Thread 1 "python" hit Breakpoint 1, 0x00007fffe1234567 in ncclAllReduce () from /usr/lib/libnccl.so.2\n(gdb) bt\n#0  0x00007fffe1234567 in ncclAllReduce () from /usr/lib/libnccl.so.2\n#1  0x00007fffe2345678 in c10d::ProcessGroupNCCL::allreduce_impl(at::Tensor&, c10d::AllreduceOptions const&) () from libtorch_cuda.so',
    ],
    [
      "a fatal error, then a progress bar before the dump",
      'Fatal Python error: Segmentation fault\nEpoch 3:  45%|████▌     | 450/1000 [02:47<03:24,  2.69it/s, loss=0.231]\n\nCurrent thread 0x00007f1e2f9d3740 (most recent call first):\n  File "/job/train.py", line 88 in train_step',
    ],
    [
      "a segfault's dump split by a log line between its threads",
      'Fatal Python error: Segmentation fault\n\nThread 0x00007f1e2a3b4700 (most recent call first):\n  File "/usr/lib/python3.10/threading.py", line 324 in wait\n  File "/usr/lib/python3.10/threading.py", line 600 in wait\n[W socket.cpp:464] [c10d] The server socket has failed to bind.\nCurrent thread 0x00007f1e2f9d3740 (most recent call first):\n  File "/job/train.py", line 88 in train_step\n  File "/job/train.py", line 120 in main',
    ],
  ];

  it.each(notStopped)("not a stopped process's dump: %s", (_what, text) => {
    expect(seriousFindings(text)).toEqual([]);
  });

  it("no dump, no finding: a healthy log stays healthy", () => {
    expect(seriousFindings(pastedText("856-"))).toEqual([]);
  });
});
