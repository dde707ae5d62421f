/**
 * The stack reader (collectors/nccl/stacks/reader.ts) on the forms the captures do not cover:
 * ranks' dumps interleaved behind launcher prefixes, what the lines before a dump say, py-spy's
 * `--locals` and `--subprocesses`, faulthandler's timeout dumps, the worker server's HTML, and
 * every bound. Lines follow the tools' formats (py-spy src/dump.rs, CPython Python/traceback.c)
 * with frames from the real captures. Then garbage: whatever the lines, no throw and bounded output.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stackPrefix } from "../../../../collectors/nccl/analyze/stacks.js";
import { StackReader } from "../../../../collectors/nccl/stacks/reader.js";
import { FrameBudget, STACK_LIMITS, type StackDump, type StackLimits } from "../../../../collectors/nccl/stacks/types.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

function read(
  lines: readonly string[],
  opts: { name?: string; budget?: FrameBudget; limits?: Partial<StackLimits> } = {},
): { dumps: StackDump[]; reader: StackReader } {
  const reader = new StackReader(opts.name ?? "log", stackPrefix, opts.budget ?? new FrameBudget(), { ...STACK_LIMITS, ...opts.limits });
  lines.forEach((l, i) => reader.line(l, i + 1));
  return { dumps: reader.end(), reader };
}

const funcs = (d: StackDump | undefined, thread = 0): string[] => (d?.threads[thread]?.frames ?? []).map((f) => f.function);

/** faulthandler's dump of one thread in all_reduce (fixture 04's frames) or in the data loader. */
const inAllReduce = [
  "Thread 0x00007f2ea0870640 (most recent call first):",
  '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce',
  '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 83 in wrapper',
  '  File "/job/train.py", line 120 in train_step',
  '  File "/job/train.py", line 200 in <module>',
];
const inLoader = [
  "Thread 0x00007f2ea0870641 (most recent call first):",
  '  File "/usr/lib/python3.10/threading.py", line 324 in wait',
  '  File "/usr/lib/python3.10/queue.py", line 180 in get',
  '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py", line 1133 in _try_get_data',
  '  File "/job/train.py", line 88 in next_batch',
  '  File "/job/train.py", line 200 in <module>',
];

describe("stack reader: streams", () => {
  it("keeps ranks' dumps apart when torchrun's `[rankN]:` lines interleave", () => {
    const prefixed = [inAllReduce.map((l) => `[rank0]:${l}`), inLoader.map((l) => `[rank1]:${l}`), inAllReduce.map((l) => `[rank2]:${l}`)];
    const lines: string[] = [];
    for (let i = 0; i < 6; i++) for (const p of prefixed) if (p[i] !== undefined) lines.push(p[i] as string);
    const { dumps } = read(lines);
    expect(dumps.map((d) => [d.rank, d.rankFrom, funcs(d)])).toEqual([
      [0, "prefix", ["all_reduce", "wrapper", "train_step", "<module>"]],
      [1, "prefix", ["wait", "get", "_try_get_data", "next_batch", "<module>"]],
      [2, "prefix", ["all_reduce", "wrapper", "train_step", "<module>"]],
    ]);
    expect(dumps.map((d) => d.where)).toEqual(["log:1", "log:2", "log:3"]);
  });

  it("takes torchrun's `[default3]:` as a local rank, pdsh's `node3: ` as the host, Ray's prefix as the pid", () => {
    expect(read(inLoader.map((l) => `[default3]:${l}`)).dumps[0]).toMatchObject({ localRank: 3 });
    expect(read(inLoader.map((l) => `[default3]:${l}`)).dumps[0]?.rank).toBeUndefined();
    expect(read(inLoader.map((l) => `node3: ${l}`)).dumps[0]).toMatchObject({ host: "node3" });
    expect(read(inLoader.map((l) => `(RayTrainWorker pid=615, ip=10.72.7.6) ${l}`)).dumps[0]).toMatchObject({ pid: 615 });
    expect(funcs(read(inLoader.map((l) => `node3: ${l}`)).dumps[0])).toEqual(["wait", "get", "_try_get_data", "next_batch", "<module>"]);
  });

  it("a line of its own stream that is no stack line ends a dump; other streams' lines do not", () => {
    const lines = [
      ...inAllReduce.slice(0, 3).map((l) => `[rank0]:${l}`),
      "[rank1]:[E816 01:45:40.183 ProcessGroupNCCL.cpp:607] x",
      ...inAllReduce.slice(3).map((l) => `[rank0]:${l}`),
    ];
    expect(funcs(read(lines).dumps[0])).toEqual(["all_reduce", "wrapper", "train_step", "<module>"]);
    const ended = [...inAllReduce.slice(0, 3), "node-a:4000:4000 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE", ...inAllReduce.slice(3)];
    expect(funcs(read(ended).dumps[0])).toEqual(["all_reduce", "wrapper"]);
  });

  it("a thread header seen again in the same stream starts the next dump", () => {
    expect(read([...inAllReduce, ...inAllReduce]).dumps.map((d) => d.where)).toEqual(["log:1", "log:6"]);
  });

  it("after a blank line only a thread header goes on", () => {
    const lines = [...inAllReduce.slice(0, 3), "", '  File "/job/x.py", line 1 in f'];
    expect(funcs(read(lines).dumps[0])).toEqual(["all_reduce", "wrapper"]);
  });

  it("a dump whose stream says nothing for staleLines lines is finished", () => {
    const others = Array.from({ length: 70 }, (_, i) => `[rank1]:step ${i}`);
    const lines = [...inAllReduce.slice(0, 2).map((l) => `[rank0]:${l}`), ...others, ...inAllReduce.slice(2).map((l) => `[rank0]:${l}`)];
    expect(funcs(read(lines, { limits: { staleLines: 10 } }).dumps[0])).toEqual(["all_reduce"]);
    expect(funcs(read(lines).dumps[0])).toEqual(["all_reduce", "wrapper", "train_step", "<module>"]);
  });
});

describe("stack reader: what the lines before a dump say", () => {
  it("py-spy: `Process P:` gives the pid and command; `--locals` lines are skipped", () => {
    const { dumps } = read([
      "Process 4011: /usr/bin/python3 train.py --config big.yaml",
      "Python v3.10.12 (/usr/bin/python3.10)",
      "",
      'Thread 4011 (idle): "MainThread"',
      "    wait (threading.py:324)",
      "        Arguments:",
      "            self: <Condition at 0x7f0f3c1b2d10>",
      "            timeout: None",
      "        Locals:",
      "            waiter: <_thread.lock at 0x7f0f3c1b3f00>",
      "    get (queue.py:171)",
      "    next_batch (train.py:88)",
      'Thread 4090 (active): "pin_memory"',
      "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:53)",
    ]);
    expect(dumps).toHaveLength(1);
    expect(dumps[0]).toMatchObject({ pid: 4011, command: "/usr/bin/python3 train.py --config big.yaml", tool: "py-spy" });
    expect(funcs(dumps[0])).toEqual(["wait", "get", "next_batch"]);
    expect(funcs(dumps[0], 1)).toEqual(["_pin_memory_loop"]);
  });

  it("py-spy --subprocesses: one dump per process, each with its pid", () => {
    const { dumps } = read([
      "Process 100: python train.py",
      "Python v3.11.4 (/usr/bin/python3.11)",
      "",
      'Thread 100 (idle): "MainThread"',
      "    all_reduce (torch/distributed/distributed_c10d.py:2501)",
      "",
      "-".repeat(80),
      "Process 101: python -c from multiprocessing.spawn import spawn_main",
      "Parent Process 100: python train.py",
      "",
      'Thread 101 (idle): "MainThread"',
      "    _worker_loop (torch/utils/data/_utils/worker.py:254)",
    ]);
    expect(dumps.map((d) => [d.pid, funcs(d)])).toEqual([
      [100, ["all_reduce"]],
      [101, ["_worker_loop"]],
    ]);
  });

  it("faulthandler: `Fatal Python error` and dump_traceback_later's `Timeout (...)!` are the reason", () => {
    expect(read(["Fatal Python error: Aborted", "", ...inLoader]).dumps[0]?.reason).toBe("Fatal Python error: Aborted");
    expect(read(["Timeout (0:05:00)!", ...inLoader]).dumps[0]?.reason).toBe("Timeout (0:05:00)!");
    expect(read(["some other line", ...inLoader]).dumps[0]?.reason).toBeUndefined();
  });

  it("the worker server's sections give the rank and host; its HTML page's <pre> holds the text", () => {
    const { dumps } = read([
      "        <h2>Rank 7: http://node2:39011/handler/dump_traceback?</h2>",
      "        ",
      `            <pre>${inLoader[0]}`,
      ...inLoader.slice(1),
      "</pre>",
      "        ",
    ]);
    expect(dumps[0]).toMatchObject({ rank: 7, rankFrom: "worker_server", host: "node2" });
    expect(funcs(dumps[0])).toEqual(["wait", "get", "_try_get_data", "next_batch", "<module>"]);
  });

  it("a file named after a rank gives it to the dumps of one process that have none", () => {
    expect(read(inLoader, { name: "/dumps/stacks_rank_5.txt" }).dumps[0]).toMatchObject({ rank: 5, rankFrom: "file_name" });
    // Two processes' dumps in one file: the name is no one's.
    const two = ["Process 1: a", ...inLoader.slice(0, 2), "x", "Process 2: b", ...inAllReduce.slice(0, 2)];
    expect(read(two, { name: "rank5.txt" }).dumps.map((d) => d.rank)).toEqual([undefined, undefined]);
    // A rank of their own stays.
    expect(
      read(
        inLoader.map((l) => `[rank2]:${l}`),
        { name: "rank5.txt" },
      ).dumps[0]?.rank,
    ).toBe(2);
  });

  it("reads py-spy's coloured terminal output (ANSI codes)", () => {
    const { dumps } = read([
      "Process \u001b[1;33m4011\u001b[0m: python train.py",
      "Python v\u001b[1m3.10.12\u001b[0m (\u001b[2m/usr/bin/python3.10\u001b[0m)",
      "",
      'Thread \u001b[1;33m4011\u001b[0m (idle): "MainThread"',
      "    \u001b[32mwait\u001b[0m (\u001b[36mthreading.py\u001b[0m:\u001b[2m324\u001b[0m)",
    ]);
    expect(dumps[0]).toMatchObject({ pid: 4011, command: "python train.py" });
    expect(dumps[0]?.threads[0]).toMatchObject({ id: "4011", frames: [{ function: "wait", file: "threading.py", line: 324 }] });
  });

  it("faulthandler's `...` marks a thread cut at 100 frames; a dump without a frame is dropped", () => {
    const cut = read([...inLoader, "  ..."]).dumps[0]?.threads[0];
    expect(cut?.truncated).toBe(true);
    expect(read(["Thread 0x00007f57168aa700 (most recent call first):", "  <no Python frame>"]).dumps).toEqual([]);
  });
});

describe("stack reader: bounds", () => {
  const thread = (i: number): string[] => [`Thread 0x${(0x1000 + i).toString(16)} (most recent call first):`, '  File "/x.py", line 1 in f'];

  it("threads per dump, frames per thread, dumps per log, open streams, line length", () => {
    const many = read(Array.from({ length: 10 }, (_, i) => thread(i)).flat(), { limits: { threadsPerDump: 4 } }).dumps[0];
    expect([many?.threads.length, many?.threadsLeftOut]).toEqual([4, 6]);
    const deep = read(["Thread 0x1 (most recent call first):", ...Array.from({ length: 50 }, (_, i) => `  File "/x.py", line ${i} in f${i}`)], {
      limits: { framesPerThread: 8 },
    });
    expect([deep.dumps[0]?.threads[0]?.frames.length, deep.dumps[0]?.threads[0]?.truncated]).toEqual([8, true]);
    const dumps = read(Array.from({ length: 5 }, (_, i) => [...thread(i), "end"]).flat(), { limits: { dumpsPerLog: 2 } });
    expect([dumps.dumps.length, dumps.reader.headersLeftOut]).toEqual([2, 3]);
    // A third stream closes the one that printed last longest ago.
    const streams = read(
      [
        "[rank0]:" + thread(0)[0],
        "[rank1]:" + thread(1)[0],
        "[rank2]:" + thread(2)[0],
        "[rank0]:" + thread(0)[1],
        "[rank1]:" + thread(1)[1],
        "[rank2]:" + thread(2)[1],
      ],
      {
        limits: { openStreams: 2 },
      },
    );
    expect(streams.dumps.map((d) => d.rank)).toEqual([1, 2]);
    const long = read(["Thread 0x1 (most recent call first):", `  File "/${"x".repeat(200)}.py", line 1 in f`], { limits: { maxLine: 100 } });
    expect(long.dumps).toEqual([]);
  });

  it("one frame budget for every reader of an analysis", () => {
    const budget = new FrameBudget(5);
    const a = read(inLoader, { budget });
    const b = read(inAllReduce, { budget });
    expect([a.dumps[0]?.threads[0]?.frames.length, b.dumps[0]?.threads[0]?.frames.length, b.dumps[0]?.threads[0]?.truncated, budget.left]).toEqual([
      5,
      undefined,
      undefined,
      0,
    ]);
    // b's only thread got no frame: a frameless dump is dropped.
    expect(b.dumps).toEqual([]);
  });

  it("a megabyte of parentheses and `Thread ` in one line costs little (no backtracking)", () => {
    const nasty = "Thread " + "0x(".repeat(10_000) + " (" + "(".repeat(20_000) + "):";
    const t = performance.now();
    const r = read(['Thread 1 (idle): "MainThread"', "    " + "f (".repeat(20_000) + "x.py:1)", nasty, "  File " + '"'.repeat(60_000)]);
    expect(performance.now() - t).toBeLessThan(500);
    expect(r.dumps.length).toBeLessThanOrEqual(1);
  });
});

describe("stack reader: garbage", () => {
  const real = listFixtures("stacks", ".txt").flatMap((f) => readCapture(`stacks/${f}`).split("\n"));

  it("whatever the lines (real ones cut, spliced, mixed with random text), it never throws and holds what its bounds allow", () => {
    const line = fc.oneof(
      fc.constantFrom(...real),
      fc.string({ maxLength: 200 }),
      fc.tuple(fc.constantFrom(...real), fc.nat(300), fc.nat(300)).map(([l, a, b]) => l.slice(Math.min(a, b), Math.max(a, b))),
      fc.tuple(fc.constantFrom("[rank3]:", "0: ", "[default1]:", "node7: ", "> ", "<pre>", "\u001b[1m", ""), fc.constantFrom(...real)).map(([p, l]) => p + l),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 300 }), (lines) => {
        const { dumps } = read(lines, { limits: { threadsPerDump: 8, framesPerThread: 16, dumpsPerLog: 20 } });
        expect(dumps.length).toBeLessThanOrEqual(20);
        for (const d of dumps) {
          expect(d.threads.length).toBeLessThanOrEqual(8);
          expect(d.threads.some((t) => t.frames.length > 0)).toBe(true);
          for (const t of d.threads) {
            expect(t.frames.length).toBeLessThanOrEqual(16);
            for (const f of t.frames) {
              expect(f.function.length).toBeGreaterThan(0);
              expect(f.function.length).toBeLessThanOrEqual(STACK_LIMITS.maxName);
              expect(f.file.length).toBeLessThanOrEqual(STACK_LIMITS.maxName);
              if (f.line !== undefined) expect(Number.isSafeInteger(f.line)).toBe(true);
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("end() twice gives the same dumps", () => {
    const r = new StackReader("x", stackPrefix);
    inLoader.forEach((l, i) => r.line(l, i + 1));
    const first = r.end().slice();
    expect(r.end()).toEqual(first);
    expect(first).toHaveLength(1);
  });
});
