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
      /^A stack dump is the only evidence in these lines: py-spy at x\.log:\d+ of pid 39: MainThread \(idle\) in torch\/autograd\/__init__\.py:266 backward <- /,
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
      /^2 stack dumps are the only evidence in these lines: gdb at x\.log:\d+ \(Thread 10\): futex_wait_cancelable <- ncclProxyGetPostedOps <- ncclProxyProgress; /,
    );
    expect(fs[0]?.summary).toContain("These are only NCCL's own threads");
  });

  it("a thread in Open MPI's progress engine (774) is no NCCL thread: no such sentence", () => {
    const fs = seriousFindings(pastedText("774-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("gdb at x.log:2 (Thread 103): btl_openib_component_progress <- opal_progress <- ompi_sync_wait_mt");
    expect(fs[0]?.summary).not.toContain("NCCL's own threads");
  });

  it("a CUDA wait's note (601) is raised, not told twice", () => {
    const fs = allFindings(pastedText("601-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toMatch(/^A native backtrace \(gdb\) shows a thread stopped inside CUDA's cudaLaunchKernel/);
    expect(fs[0]?.summary).toContain("The dumps are the only evidence in these lines");
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
      /^5 stack dumps are the only evidence in these lines: py-spy at x\.log:4 of pid 41: MainThread \(idle\) in train\.py:41 step; .*; and 2 more threads \(use --json\)\. /,
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

  it("no dump, no finding: a healthy log stays healthy", () => {
    expect(seriousFindings(pastedText("856-"))).toEqual([]);
  });
});
