/**
 * The line forms of collectors/nccl/stacks/: faulthandler's (CPython Python/traceback.c), py-spy's
 * (src/dump.rs), PyTorch's worker server sections (torch/distributed/debug/_debug_handlers.py) and
 * ranks in file names; each form read, and the look-alikes around it refused.
 */
import { describe, expect, it } from "vitest";
import { faultLine, faultThreadHeader, fatalError, timeoutLine } from "../../../../collectors/nccl/stacks/faulthandler.js";
import { rankInName } from "../../../../collectors/nccl/stacks/file-name.js";
import { pyspyFrame, pyspyProcess, pyspyThreadHeader } from "../../../../collectors/nccl/stacks/pyspy.js";
import { rankSection } from "../../../../collectors/nccl/stacks/worker-server.js";

const whole =
  <T>(f: (s: string, i: number, end: number) => T) =>
  (s: string): T =>
    f(s, 0, s.length);

describe("faulthandler", () => {
  const header = whole(faultThreadHeader);
  const line = (s: string): ReturnType<typeof faultLine> => faultLine(s, 0, s.length, 512);

  it("reads every thread header CPython writes", () => {
    expect(header("Thread 0x00007f4ebf9d3740 (most recent call first):")).toEqual({ id: "0x00007f4ebf9d3740", current: false });
    expect(header("Current thread 0x00007f2ea0870640 (most recent call first):")).toEqual({ id: "0x00007f2ea0870640", current: true });
    expect(header("Stack (most recent call first):")).toEqual({ id: "", current: true });
    // Python <= 3.2's faulthandler module
    expect(header("Thread 0x00007f4e:")).toEqual({ id: "0x00007f4e", current: false });
    // 3.14+: the thread's name after its id
    expect(header("Thread 0x00007f4ebf9d3740 [MainThread] (most recent call first):")).toEqual({
      id: "0x00007f4ebf9d3740",
      current: false,
      name: "MainThread",
    });
    expect(header("Current thread 0x7f4e <pt_main_thread> (most recent call first):")).toEqual({ id: "0x7f4e", current: true, name: "pt_main_thread" });
  });

  it("refuses the look-alikes: py-spy, gdb, c10 exceptions, a cut header", () => {
    for (const s of [
      'Thread 0x7FA6E7C01740 (idle): "MainThread"',
      "Thread 1 (Thread 0x7f384e2dc740 (LWP 237)):",
      "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):",
      "Thread 0x00007f4ebf9d3740 (most recent call first",
      "Thread 0x (most recent call first):",
      "Thread 0x00007f4ebf9d3740 name (most recent call first):",
      "Traceback (most recent call last):",
    ]) {
      expect(header(s), s).toBeUndefined();
    }
  });

  it("reads frames innermost first as printed, `???` lines, and the markers", () => {
    expect(line('File "/usr/lib/python3.10/threading.py", line 324 in wait')).toEqual({
      frame: { function: "wait", file: "/usr/lib/python3.10/threading.py", line: 324 },
    });
    expect(line('File "<string>", line 1 in <module>')).toEqual({ frame: { function: "<module>", file: "<string>", line: 1 } });
    expect(line('File "/x/a b.py", line ??? in f')).toEqual({ frame: { function: "f", file: "/x/a b.py" } });
    expect(line("<no Python frame>")).toBe("no_frame");
    expect(line("...")).toBe("truncated");
    expect(line("<freed frame>")).toBe("marker");
    expect(line("Garbage-collecting")).toBe("marker");
  });

  it("refuses a Python traceback's frame (`, in`), and cut or other lines", () => {
    for (const s of ['File "x.py", line 5, in f', 'File "x.py", line 5', 'File "x.py", line in f', 'File "x.py', "Extension modules: numpy", "....", "<"]) {
      expect(line(s), s).toBeUndefined();
    }
  });

  it("keeps at most maxName characters of a name", () => {
    const f = faultLine(`File "${"a".repeat(100)}.py", line 3 in ${"g".repeat(100)}`, 0, 130 + 80, 16);
    expect(f).toMatchObject({ frame: { file: "a".repeat(16), line: 3 } });
  });

  it("reads why a dump was written", () => {
    const glued = "Epoch 0: | 4540/? [07:57<00:00,  9.51it/s]Fatal Python error: Segmentation fault   ";
    expect(fatalError(glued, 0, glued.length)).toBe("Fatal Python error: Segmentation fault");
    expect(whole(timeoutLine)("Timeout (0:00:00.100000)!")).toBe("Timeout (0:00:00.100000)!");
    expect(whole(timeoutLine)("Timeout (0:10:00)")).toBeUndefined();
    expect(fatalError("a Python error", 0, 14)).toBeUndefined();
  });
});

describe("py-spy", () => {
  const header = whole(pyspyThreadHeader);
  const frame = (s: string): ReturnType<typeof pyspyFrame> => pyspyFrame(s, 0, s.length, 512);

  it("reads `Process P:` and every thread header form", () => {
    expect(whole(pyspyProcess)("Process 88693: sglang::scheduler_PP2_TP1")).toEqual({ pid: 88693, command: "sglang::scheduler_PP2_TP1" });
    expect(whole(pyspyProcess)("Parent Process 1: x")).toBeUndefined();
    expect(header('Thread 88693 (idle): "MainThread"')).toEqual({ id: "88693", status: "idle", name: "MainThread" });
    expect(header('Thread 0x7FA6E7C01740 (idle): "MainThread"')).toEqual({ id: "0x7FA6E7C01740", status: "idle", name: "MainThread" });
    expect(header("Thread 4079 (active)")).toEqual({ id: "4079", status: "active" });
    expect(header('Thread 90522 (idle): "Thread-2 (_watchdog_thread)"')).toEqual({ id: "90522", status: "idle", name: "Thread-2 (_watchdog_thread)" });
    expect(header("Thread 12 (active+gil)")).toEqual({ id: "12", status: "active+gil" });
    expect(header("Thread 12 (gil)")).toEqual({ id: "12", status: "gil" });
    expect(header("Thread 12")).toEqual({ id: "12" });
  });

  it("refuses faulthandler's header and other look-alikes", () => {
    for (const s of [
      "Thread 0x00007f4ebf9d3740 (most recent call first):",
      "Thread 1 (Thread 0x7f384e2dc740 (LWP 237)):",
      "Thread pool started",
      'Thread 12 (idle): MainThread"',
      "Thread 12 (idle) extra",
    ]) {
      expect(header(s), s).toBeUndefined();
    }
  });

  it("reads Python and native frames; the file is in the last ` (`", () => {
    expect(frame("wait (threading.py:324)")).toEqual({ function: "wait", file: "threading.py", line: 324 });
    expect(frame("<module> (src/train.py:587)")).toEqual({ function: "<module>", file: "src/train.py", line: 587 });
    expect(frame("pthread_cond_timedwait (libc.so.6)")).toEqual({ function: "pthread_cond_timedwait", file: "libc.so.6" });
    expect(frame("0x7f9ba3169d71 (libc.so.6)")).toEqual({ function: "0x7f9ba3169d71", file: "libc.so.6" });
    expect(frame("c10d::ProcessGroupGloo::RecvWork::wait(std::chrono::duration<long> const&) (libtorch_cpu.so)")).toEqual({
      function: "c10d::ProcessGroupGloo::RecvWork::wait(std::chrono::duration<long> const&)",
      file: "libtorch_cpu.so",
    });
    // A C: drive letter: the line is after the last colon.
    expect(frame("run (C:\\job\\train.py:12)")).toEqual({ function: "run", file: "C:\\job\\train.py", line: 12 });
  });

  it("refuses what is no frame", () => {
    for (const s of ["cli_main (fairseq_", "(pybind11::name const, x) (lib.so)", "wait ()", "no parens here", "x ( )", " wait (a.py:1)"])
      expect(frame(s), s).toBeUndefined();
  });
});

describe("PyTorch's worker server sections, and ranks in file names", () => {
  it("reads the periodic dump's and the HTML page's rank headers (fetch_all's address)", () => {
    const section = whole(rankSection);
    expect(section("=== Rank 3: http://node1:40123/handler/dump_traceback? ===")).toEqual({ rank: 3, host: "node1" });
    expect(section("<h2>Rank 12: http://[fd00::2]:5/handler/pyspy_dump?nonblocking=1</h2>")).toEqual({ rank: 12, host: "[fd00::2]" });
    expect(section("=== Rank 0: ===")).toEqual({ rank: 0 });
    expect(section("=== FR Trace ===")).toBeUndefined();
    expect(section("=== Rank x: y ===")).toBeUndefined();
  });

  it("takes a rank from a file name or its folder, as a word of its own", () => {
    expect(rankInName("/logs/stacks_rank_5.txt")).toBe(5);
    expect(rankInName("pyspy-rank12.log")).toBe(12);
    expect(rankInName("dump.RANK.3")).toBe(3);
    expect(rankInName("/job/rank7/pyspy.txt")).toBe(7);
    expect(rankInName("C:\\dumps\\rank-2\\a.txt")).toBe(2);
    for (const n of ["frank5.txt", "ranking.txt", "rank5x.txt", "ranks.txt", "stacks_20250101_120000.txt", "rank.txt"])
      expect(rankInName(n), n).toBeUndefined();
  });
});
