/**
 * The stack reader on every real capture in test/fixtures/stacks/ (SOURCES.md: 13 public issue
 * threads), through the prefix reader `ringwatch analyze` gives it: which dumps, threads and frames
 * each file holds, exactly, and whose dump it is where the capture says.
 */
import { describe, expect, it } from "vitest";
import { stackPrefix } from "../../../../collectors/nccl/analyze/stacks.js";
import { keyThread } from "../../../../collectors/nccl/stacks/group.js";
import { inCollective } from "../../../../collectors/nccl/stacks/frames.js";
import { StackReader } from "../../../../collectors/nccl/stacks/reader.js";
import type { StackDump } from "../../../../collectors/nccl/stacks/types.js";
import { listFixtures, readCapture, readFixtureRaw } from "../../../helpers/fixtures.js";

/** The dumps of a capture, its lines numbered as in the file (line 1 is the source line). */
function dumpsOf(file: string): StackDump[] {
  const r = new StackReader(file, stackPrefix);
  readFixtureRaw(`stacks/${file}`)
    .split("\n")
    .forEach((l, i) => r.line(l, i + 1));
  return r.end();
}

/** Each dump as [tool, first line, [thread id, frames], ...]. */
const shape = (ds: readonly StackDump[]): unknown[] =>
  ds.map((d) => [d.tool, Number(d.where.split(":").at(-1)), d.threads.map((t) => [t.id, t.frames.length])]);

const files = listFixtures("stacks", ".txt");

describe("stack dumps in real captures", () => {
  it("the folder holds the 13 captures, each with its source on line 1", () => {
    expect(files).toHaveLength(13);
    for (const f of files) expect(readFixtureRaw(`stacks/${f}`).split("\n")[0], f).toMatch(/^# source: [\w.-]+\/[\w.-]+ (issue|pull request) \d+ \(/);
  });

  it.each([
    ["01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt", [["py-spy", 2, [["0x7FA6E7C01740", 12]]]]],
    [
      "02-pyspy-accelerate-3104-deepspeed-zero3-threads-all-gather.txt",
      [
        [
          "py-spy",
          2,
          [
            ["42", 13],
            ["928", 5],
            ["4076", 0],
            ["4077", 0],
            ["4078", 0],
            ["4079", 6],
          ],
        ],
        ["py-spy", 34, [["3291", 21]]],
      ],
    ],
    ["03-faulthandler-pytorch-135486-srun-label-barrier-segfault.txt", [["faulthandler", 5, [["0x000014844b65d740", 5]]]]],
    [
      "04-faulthandler-sglang-3745-segfault-all-reduce-current-thread.txt",
      [
        [
          "faulthandler",
          6,
          [
            ["0x00007f2e93fff640", 4],
            ["0x00007f2ea0870640", 2],
          ],
        ],
      ],
    ],
    [
      "05-faulthandler-transformers-5887-multigpu-test-hang-tensorboard-threads.txt",
      [
        [
          "faulthandler",
          2,
          [
            ["0x00007fc81efd6700", 5],
            ["0x00007fc80e850700", 5],
            ["0x00007fc8248b0700", 2],
          ],
        ],
      ],
    ],
    [
      "06-faulthandler-threestudio-369-progress-bar-glued-no-python-frame.txt",
      [
        [
          "faulthandler",
          4,
          [
            ["0x00007f57168aa700", 0],
            ["0x00007f5741fff700", 5],
            ["0x00007f58548cf700", 0],
          ],
        ],
      ],
    ],
    ["07-faulthandler-pytorch-72086-torchrun-agent-store-barrier.txt", [["faulthandler", 4, [["0x00007f4ebf9d3740", 8]]]]],
    [
      "08-faulthandler-sglang-3709-scheduler-broadcast-tqdm.txt",
      [
        [
          "faulthandler",
          5,
          [
            ["0x00007fdefefc5640", 5],
            ["0x00007fe403b964c0", 7],
          ],
        ],
      ],
    ],
    [
      "09-pyspy-native-sglang-17941-pipeline-ranks-gloo-recv.txt",
      [
        ["py-spy", 12, [["90522", 13]]],
        ["py-spy", 34, [["88693", 4]]],
        ["py-spy", 43, [["88692", 4]]],
      ],
    ],
    [
      "10-faulthandler-modelbench-715-unindented-queue-threads.txt",
      [
        [
          "faulthandler",
          5,
          [
            ["0x00007f2b620006c0", 7],
            ["0x00007f2b62a006c0", 7],
            ["0x00007f2b634006c0", 1],
          ],
        ],
      ],
    ],
    [
      "11-faulthandler-pytorch-182279-no-python-frame-tensorboard.txt",
      [
        [
          "faulthandler",
          20,
          [
            ["0x00007ff64c9ff6c0", 0],
            ["0x00007ff86962a6c0", 6],
            ["0x00007ff962067300", 0],
          ],
        ],
      ],
    ],
    [
      "12-pyspy-old-ray-3187-two-workers-tab-indented.txt",
      [
        [
          "py-spy",
          3,
          [
            ["0x7F4AA36D9700", 4],
            ["0x7F4AA2ED8700", 12],
            ["0x7F4AACDE7700", 3],
          ],
        ],
        [
          "py-spy",
          27,
          [
            ["0x7FB6D283A700", 4],
            ["0x7FB6D2039700", 3],
          ],
        ],
      ],
    ],
    ["13-pyspy-omlx-3521-pipeline-rank-1-generate-thread.txt", [["py-spy", 2, [["136114", 7]]]]],
  ])("%s: its dumps, threads and frames", (file, want) => {
    expect(shape(dumpsOf(file))).toEqual(want);
  });

  it("01 (fairseq, rank 0): the frames innermost first, the cut last frame left out, rank 0 from the file name", () => {
    const [d] = dumpsOf("01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt");
    expect(d).toMatchObject({ rank: 0, rankFrom: "file_name" });
    const t = d?.threads[0];
    expect(t).toMatchObject({ id: "0x7FA6E7C01740", status: "idle", name: "MainThread", truncated: false });
    expect(t?.frames).toEqual([
      { function: "wait", file: "threading.py", line: 302 },
      { function: "get", file: "queue.py", line: 170 },
      { function: "__next__", file: "fairseq/data/iterators.py", line: 648 },
      { function: "__iter__", file: "fairseq/data/iterators.py", line: 59 },
      { function: "_chunk_iterator", file: "fairseq/data/iterators.py", line: 528 },
      { function: "__iter__", file: "fairseq/data/iterators.py", line: 59 },
      { function: "__iter__", file: "fairseq/logging/progress_bar.py", line: 256 },
      { function: "train", file: "fairseq_cli/train.py", line: 274 },
      { function: "inner", file: "contextlib.py", line: 75 },
      { function: "main", file: "fairseq_cli/train.py", line: 165 },
      { function: "distributed_main", file: "fairseq/distributed/utils.py", line: 326 },
      { function: "call_main", file: "fairseq/distributed/utils.py", line: 352 },
    ]);
    // Where it is: not inside a collective (the 31 other ranks are, in all_reduce).
    expect(t !== undefined && inCollective(t)).toBe(false);
  });

  it("03 (srun label): rank 0 from `0: `, the fatal error, the frames with their full paths", () => {
    const [d] = dumpsOf("03-faulthandler-pytorch-135486-srun-label-barrier-segfault.txt");
    expect(d).toMatchObject({ tool: "faulthandler", rank: 0, rankFrom: "prefix", reason: "Fatal Python error: Segmentation fault" });
    expect(d?.threads[0]?.frames.map((f) => [f.function, f.line])).toEqual([
      ["barrier", 3938],
      ["wrapper", 79],
      ["Main", 11],
      ["wrapper", 348],
      ["<module>", 18],
    ]);
    expect(d?.threads[0]?.frames[0]?.file).toBe(
      "<deracted for brevity>torch.mi250/python_environment/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py",
    );
    const t = d !== undefined ? keyThread(d) : undefined;
    expect(t !== undefined && inCollective(t)).toBe(true);
  });

  it("04: the current thread is the one in all_reduce", () => {
    const [d] = dumpsOf("04-faulthandler-sglang-3745-segfault-all-reduce-current-thread.txt");
    expect(d?.threads.map((t) => t.current === true)).toEqual([false, true]);
    expect(d !== undefined ? keyThread(d)?.frames[0] : undefined).toEqual({
      function: "all_reduce",
      file: "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py",
      line: 2501,
    });
  });

  it("07: the elastic agent's store barrier is no collective (every rank's stack holds torchrun's frames)", () => {
    const [d] = dumpsOf("07-faulthandler-pytorch-72086-torchrun-agent-store-barrier.txt");
    const t = d !== undefined ? keyThread(d) : undefined;
    expect(t?.frames[0]?.function).toBe("get_all");
    expect(t !== undefined && inCollective(t)).toBe(false);
  });

  it("09 (--native): the pid and command of `Process P:` after a log line, native frames, a thread name with parentheses", () => {
    const [watchdog, pp2, pp1] = dumpsOf("09-pyspy-native-sglang-17941-pipeline-ranks-gloo-recv.txt");
    expect(watchdog?.threads[0]).toMatchObject({ id: "90522", name: "Thread-2 (_watchdog_thread)", status: "idle" });
    expect(watchdog?.threads[0]?.frames.at(-1)).toEqual({ function: "0x7f259f492c6c", file: "libc.so.6" });
    expect(pp2).toMatchObject({ pid: 88693, command: "sglang::scheduler_PP2_TP1" });
    expect(pp2?.threads[0]?.frames).toEqual([
      { function: "0x7fa2d1487d71", file: "libc.so.6" },
      { function: "pthread_cond_timedwait", file: "libc.so.6" },
      { function: "gloo::transport::tcp::UnboundBuffer::waitRecv", file: "libtorch_cpu.so" },
      { function: "c10d::ProcessGroupGloo::RecvWork::wait", file: "libtorch_cpu.so" },
    ]);
    // The second window has no `Process` line: no pid, but its MainThread is the same wait.
    expect(pp1?.pid).toBeUndefined();
    expect(pp1?.threads[0]?.frames.map((f) => f.function).slice(1)).toEqual(pp2?.threads[0]?.frames.map((f) => f.function).slice(1));
    for (const d of [pp2, pp1]) {
      const t = d !== undefined ? keyThread(d) : undefined;
      expect(t?.name).toBe("MainThread");
      expect(t !== undefined && inCollective(t)).toBe(true);
    }
  });

  it("12 (py-spy of 2018): tab-indented frames, one dump per process", () => {
    const ds = dumpsOf("12-pyspy-old-ray-3187-two-workers-tab-indented.txt");
    expect(ds[0]?.threads[2]?.frames).toEqual([
      { function: "_get_next_task_from_local_scheduler", file: "ray/worker.py", line: 988 },
      { function: "main_loop", file: "ray/worker.py", line: 1005 },
      { function: "<module>", file: "ray/workers/default_worker.py", line: 105 },
    ]);
    // Its main thread: the one whose outermost frame is <module>, not the deepest.
    expect(ds[0] !== undefined ? keyThread(ds[0])?.id : undefined).toBe("0x7F4AACDE7700");
  });

  it("13: rank 1 from the file name", () => {
    expect(dumpsOf("13-pyspy-omlx-3521-pipeline-rank-1-generate-thread.txt")[0]).toMatchObject({ rank: 1, rankFrom: "file_name" });
  });

  it("the same dumps when the capture is read without its source line, numbered from 1", () => {
    for (const f of files) {
      const r = new StackReader(f, stackPrefix);
      readCapture(`stacks/${f}`)
        .split("\n")
        .forEach((l, i) => r.line(l, i + 1));
      expect(
        r.end().map((d) => d.threads),
        f,
      ).toEqual(dumpsOf(f).map((d) => d.threads));
    }
  });
});
