/**
 * A real faulthandler dump, written by a real python3 process here, read by the stack reader and
 * by `ringwatch analyze`: one thread blocked on a lock, the main thread dumping every thread
 * (faulthandler.dump_traceback, as PyTorch's worker server's `dump_traceback` handler calls it),
 * and dump_traceback_later's timeout dump of a main thread stuck on a lock. Then two "ranks"'
 * real dumps in PyTorch's periodic stacks file form, one rank in a file laid out like
 * torch/distributed/distributed_c10d.py: the other rank is named as the outlier.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { stackPrefix } from "../../../../collectors/nccl/analyze/stacks.js";
import { keyThread } from "../../../../collectors/nccl/stacks/group.js";
import { StackReader } from "../../../../collectors/nccl/stacks/reader.js";
import type { StackDump } from "../../../../collectors/nccl/stacks/types.js";
import { runProcess } from "../../../helpers/run-process.js";
import { tempDir } from "../../../helpers/temp-dir.js";

function dumpsOf(text: string, name = "stderr"): StackDump[] {
  const r = new StackReader(name, stackPrefix);
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r.end();
}

let dir = "";
beforeAll(() => {
  dir = tempDir("rw-faulthandler-");
  // A module at the path PyTorch's collectives live at, so that its frame reads as one.
  mkdirSync(join(dir, "site-packages/torch/distributed"), { recursive: true });
  writeFileSync(join(dir, "site-packages/torch/__init__.py"), "");
  writeFileSync(join(dir, "site-packages/torch/distributed/__init__.py"), "");
  writeFileSync(
    join(dir, "site-packages/torch/distributed/distributed_c10d.py"),
    ["import threading", "", "def all_reduce(done):", "    done.wait()", ""].join("\n"),
  );
  writeFileSync(
    join(dir, "two_threads.py"),
    [
      "import faulthandler, sys, threading, time", //                     1
      "lock = threading.Lock()", //                                         2
      "lock.acquire()", //                                                  3
      "def load_batch():", //                                               4
      "    with lock:", //                                                  5
      "        pass", //                                                    6
      "def loader():", //                                                   7
      "    load_batch()", //                                                8
      "t = threading.Thread(target=loader, name='loader', daemon=True)", // 9
      "t.start()", //                                                      10
      "time.sleep(0.3)", //                                                11
      "def train_step():", //                                              12
      "    faulthandler.dump_traceback(sys.stderr, all_threads=True)", //  13
      "train_step()", //                                                   14
      "lock.release()", //                                                 15
      "t.join()", //                                                       16
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "stuck_main.py"),
    [
      "import faulthandler, threading", //                1
      "lock = threading.Lock()", //                        2
      "lock.acquire()", //                                 3
      "faulthandler.dump_traceback_later(0.3, exit=True)", // 4
      "def next_batch():", //                              5
      "    lock.acquire()", //                             6
      "next_batch()", //                                   7
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "rank.py"),
    [
      "import faulthandler, sys, threading, time", //                                 1
      "sys.path.insert(0, sys.argv[2])", //                                             2
      "from torch.distributed.distributed_c10d import all_reduce", //                   3
      "done = threading.Event()", //                                                    4
      "def next_batch():", //                                                           5
      "    done.wait()", //                                                             6
      "def train_step():", //                                                           7
      "    (next_batch if sys.argv[1] == 'loader' else lambda: all_reduce(done))()", //  8
      "faulthandler.dump_traceback_later(0.3, exit=True)", //                            9
      "train_step()", //                                                               10
    ].join("\n"),
  );
});

const python = (...args: string[]): ReturnType<typeof runProcess> => runProcess("python3", args, { timeoutMs: 20_000, what: "python3" });

describe("a real faulthandler dump", () => {
  it("dump_traceback(all_threads=True): both threads, innermost first, the thread blocked on the lock in load_batch", async () => {
    const script = join(dir, "two_threads.py");
    const r = await python(script);
    expect(r.code).toBe(0);
    const [d, ...more] = dumpsOf(r.stderr);
    expect(more).toEqual([]);
    expect(d?.tool).toBe("faulthandler");
    expect(d?.threads).toHaveLength(2);
    const [loader, main] = d?.threads ?? [];
    // CPython lists the other threads first, the current (dumping) thread last.
    expect(loader?.current).toBeUndefined();
    expect(loader?.frames.slice(0, 2)).toEqual([
      { function: "load_batch", file: script, line: 5 },
      { function: "loader", file: script, line: 8 },
    ]);
    expect(loader?.frames.at(-1)?.function).toBe("_bootstrap");
    expect(main).toMatchObject({
      current: true,
      frames: [
        { function: "train_step", file: script, line: 13 },
        { function: "<module>", file: script, line: 14 },
      ],
    });
    expect(loader?.id).toMatch(/^0x[0-9a-f]{16}$/);
    // The thread that stands for the process is the main one.
    expect(d !== undefined ? keyThread(d) : undefined).toBe(main);
  });

  it("dump_traceback_later: `Timeout (...)!`, the main thread stuck on the lock", async () => {
    const script = join(dir, "stuck_main.py");
    const r = await python(script);
    expect(r.code).not.toBe(0); // exit=True: faulthandler ends the process
    const [d] = dumpsOf(r.stderr);
    expect(d?.reason).toMatch(/^Timeout \(0:00:00\.3\d*\)!$/);
    expect(d?.threads.map((t) => t.frames.map((f) => [f.function, f.line]))).toEqual([
      [
        ["next_batch", 6],
        ["<module>", 7],
      ],
    ]);
  });

  it("two ranks' real dumps in PyTorch's periodic stacks file: the rank not in the collective is the outlier", async () => {
    const [inCollective, inLoader] = await Promise.all([
      python(join(dir, "rank.py"), "collective", join(dir, "site-packages")),
      python(join(dir, "rank.py"), "loader", join(dir, "site-packages")),
    ]);
    const file = [
      "=== Rank 0: http://node-a:40100/handler/dump_traceback? ===",
      inCollective.stderr,
      "=== Rank 1: http://node-b:40101/handler/dump_traceback? ===",
      inLoader.stderr,
    ].join("\n");
    const dumps = dumpsOf(file, "stacks_20250101_120000.txt");
    // Event.wait's own frames (threading.py) come first, innermost.
    const below = (d: StackDump): string | undefined => d.threads[0]?.frames.find((f) => !f.file.endsWith("threading.py"))?.function;
    expect(dumps.map((d) => [d.rank, d.host, d.threads[0]?.frames[0]?.function, below(d)])).toEqual([
      [0, "node-a", "wait", "all_reduce"],
      [1, "node-b", "wait", "next_batch"],
    ]);
    const report = analyzeLogs([{ name: "stacks_20250101_120000.txt", text: file }]);
    expect(report.findings.map((f) => [f.kind, f.ranks, f.waiting_ranks])).toEqual([["stack_outlier", [1], [0]]]);
    expect(report.findings[0]?.summary).toContain("wait in torch/distributed/distributed_c10d.py:4 all_reduce");
    expect(report.findings[0]?.summary).toContain("rank 1 is elsewhere:");
    expect(report.findings[0]?.summary).toContain("rank.py:6 next_batch");
  });
});
