/**
 * Grouping ranks by where their Python is (collectors/nccl/stacks/group.ts), on synthetic
 * multi-rank sets written in the tools' real formats (py-spy src/dump.rs, CPython's faulthandler)
 * with frames from the real captures, read back through the stack reader.
 */
import { describe, expect, it } from "vitest";
import { stackPrefix } from "../../../../collectors/nccl/analyze/stacks.js";
import { groupStacks, keyThread, MAX_GROUPS, stackKey, type RankStack } from "../../../../collectors/nccl/stacks/group.js";
import { StackReader } from "../../../../collectors/nccl/stacks/reader.js";
import type { StackDump } from "../../../../collectors/nccl/stacks/types.js";

function dumps(text: string, name = "d"): StackDump[] {
  const r = new StackReader(name, stackPrefix);
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r.end();
}

/** `py-spy dump --pid <pid> [--native]` of a rank: its MainThread's frames (innermost first), and a pin-memory thread. */
function pyspy(pid: number, main: readonly string[], native = false): StackDump {
  const addr = `0x7f${(pid * 7919).toString(16).padStart(10, "0")}`;
  const text = [
    `Process ${pid}: /usr/bin/python3 train.py`,
    "Python v3.10.12 (/usr/bin/python3.10)",
    "",
    `Thread ${pid} (idle): "MainThread"`,
    ...(native ? [`    ${addr} (libc.so.6)`, "    pthread_cond_timedwait (libc.so.6)"] : []),
    ...main.map((f) => `    ${f}`),
    `Thread ${pid + 90} (idle): "pin_memory"`,
    `    wait (threading.py:${320 + (pid % 7)})`,
    "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:53)",
  ].join("\n");
  const d = dumps(text)[0];
  if (d === undefined) throw new Error("no dump");
  return d;
}

const ALL_REDUCE = [
  "all_reduce (torch/distributed/distributed_c10d.py:2501)",
  "wrapper (torch/distributed/c10d_logger.py:83)",
  "train_step (train.py:120)",
  "main (train.py:200)",
  "<module> (train.py:210)",
];
const LOADER = [
  "wait (threading.py:324)",
  "get (queue.py:180)",
  "_try_get_data (torch/utils/data/dataloader.py:1133)",
  "_get_data (torch/utils/data/dataloader.py:1295)",
  "_next_data (torch/utils/data/dataloader.py:1333)",
  "__next__ (torch/utils/data/dataloader.py:631)",
  "next_batch (train.py:88)",
  "main (train.py:198)",
  "<module> (train.py:210)",
];
const CHECKPOINT = ["save (torch/serialization.py:628)", "save_checkpoint (train.py:150)", "main (train.py:205)", "<module> (train.py:210)"];

/** n copies of a stack. */
const times = (n: number, stack: readonly string[]): (readonly string[])[] => Array.from({ length: n }, () => stack);

const ranks = (specs: readonly (readonly string[])[], native = false): RankStack[] =>
  specs.map((main, rank) => ({ rank, dump: pyspy(4000 + rank, main, native) }));

describe("grouping ranks' stacks", () => {
  it("64 ranks, 63 in the same all_reduce and rank 5 in the data loader: rank 5 is the outlier", () => {
    const specs = Array.from({ length: 64 }, (_, r) => (r === 5 ? LOADER : ALL_REDUCE));
    const g = groupStacks(ranks(specs, true));
    expect(g.ranks).toBe(64);
    expect(g.groups.map((x) => x.ranks.length)).toEqual([63, 1]);
    expect(g.dominant?.ranks).toEqual(Array.from({ length: 64 }, (_, r) => r).filter((r) => r !== 5));
    expect(g.dominant?.inCollective).toBe(true);
    expect(g.outliers.map((o) => [o.ranks, o.inCollective])).toEqual([[[5], false]]);
    // The key thread is MainThread: frames innermost first, the native ones included.
    expect(g.outliers[0]?.thread.frames.slice(2, 5).map((f) => f.function)).toEqual(["wait", "get", "_try_get_data"]);
    expect(g.outliers[0]?.evidence).toEqual(["d:4"]);
  });

  it("line numbers and py-spy's unnamed native addresses do not split a group; another function does", () => {
    const moved = ALL_REDUCE.map((f) => f.replace(":120)", ":121)"));
    const g = groupStacks(ranks([ALL_REDUCE, moved, ALL_REDUCE], true));
    expect(g.groups.map((x) => x.ranks)).toEqual([[0, 1, 2]]);
    const other = ALL_REDUCE.map((f) => f.replace("train_step", "eval_step"));
    expect(groupStacks(ranks([ALL_REDUCE, other, ALL_REDUCE])).groups.map((x) => x.ranks)).toEqual([[0, 2], [1]]);
  });

  it("faulthandler's full paths and py-spy's short ones are one stack", () => {
    const fh = dumps(
      [
        "Thread 0x00007f2ea0870640 (most recent call first):",
        '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce',
        '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper',
        '  File "train.py", line 120 in train_step',
        '  File "train.py", line 200 in main',
        '  File "train.py", line 210 in <module>',
      ].join("\n"),
    )[0] as StackDump;
    const k1 = stackKey(keyThread(fh) ?? { id: "", frames: [], truncated: false });
    const py = pyspy(4000, ALL_REDUCE);
    expect(k1).toBe(stackKey(keyThread(py) ?? { id: "", frames: [], truncated: false }));
  });

  it("no dominant stack when most ranks are in no collective, or the largest group is under half", () => {
    const userCode = groupStacks(ranks([CHECKPOINT, CHECKPOINT, CHECKPOINT, LOADER]));
    expect(userCode.dominant).toBeUndefined();
    expect(userCode.outliers).toEqual([]);
    const split = groupStacks(ranks([...times(4, ALL_REDUCE), ...times(3, LOADER), ...times(3, CHECKPOINT)]));
    expect(split.groups[0]?.ranks).toEqual([0, 1, 2, 3]);
    expect(split.dominant).toBeUndefined();
    const half = groupStacks(ranks([...times(5, ALL_REDUCE), ...times(3, LOADER), ...times(2, CHECKPOINT)]));
    expect(half.dominant?.ranks).toEqual([0, 1, 2, 3, 4]);
    expect(half.outliers.map((o) => o.ranks)).toEqual([
      [8, 9],
      [5, 6, 7],
    ]);
  });

  it("two ranks, one in the collective: the other is the outlier; groups in another collective come after those in none", () => {
    const two = groupStacks(ranks([LOADER, ALL_REDUCE]));
    expect([two.dominant?.ranks, two.outliers.map((o) => o.ranks)]).toEqual([[1], [[0]]]);
    const broadcast = ALL_REDUCE.map((f) => f.replace("all_reduce (", "broadcast ("));
    const g = groupStacks(ranks([...times(8, ALL_REDUCE), broadcast, LOADER]));
    expect(g.outliers.map((o) => [o.ranks, o.inCollective])).toEqual([
      [[9], false],
      [[8], true],
    ]);
  });

  it("the last dump of a rank counts", () => {
    const g = groupStacks([
      { rank: 0, dump: pyspy(1, LOADER) },
      { rank: 1, dump: pyspy(2, ALL_REDUCE) },
      { rank: 0, dump: pyspy(1, ALL_REDUCE) },
    ]);
    expect(g.groups.map((x) => x.ranks)).toEqual([[0, 1]]);
  });

  it("4,096 ranks in 100 places: at most MAX_GROUPS groups kept, the rest counted, quickly", () => {
    const specs = Array.from({ length: 4096 }, (_, r) => (r < 3000 ? ALL_REDUCE : [`f${r % 100} (job/m${r % 100}.py:1)`, ...LOADER]));
    const placed = ranks(specs);
    const t = performance.now();
    const g = groupStacks(placed);
    expect(performance.now() - t).toBeLessThan(2000);
    expect(g.ranks).toBe(4096);
    expect(g.groups).toHaveLength(MAX_GROUPS);
    expect(g.groupsLeftOut).toBe(101 - MAX_GROUPS);
    expect(g.dominant?.ranks).toHaveLength(3000);
    expect(g.outliers).toHaveLength(MAX_GROUPS - 1);
  });
});

describe("the thread that stands for a process", () => {
  const fh = (...threads: string[][]): StackDump => dumps(threads.map((t) => t.join("\n")).join("\n\n"))[0] as StackDump;
  const bootstrap = [
    '  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner',
    '  File "/usr/lib/python3.10/threading.py", line 973 in _bootstrap',
  ];

  it("faulthandler: the thread whose outermost frame is <module>, before the current one", () => {
    const d = fh(
      ["Current thread 0x0002 (most recent call first):", '  File "/x/w.py", line 5 in watchdog', ...bootstrap],
      ["Thread 0x0001 (most recent call first):", '  File "/x/t.py", line 9 in step', '  File "/x/t.py", line 20 in <module>'],
    );
    expect(keyThread(d)?.id).toBe("0x0001");
  });

  it("faulthandler, <module> cut off: the current thread, else the deepest thread threading did not start", () => {
    const cut = ["Thread 0x0001 (most recent call first):", ...Array.from({ length: 5 }, (_, i) => `  File "/x/deep.py", line ${i} in f${i}`), "  ..."];
    const worker = ["Thread 0x0003 (most recent call first):", ...Array.from({ length: 9 }, (_, i) => `  File "/x/w.py", line ${i} in w${i}`), ...bootstrap];
    expect(keyThread(fh(cut, worker))?.id).toBe("0x0001");
    const current = ["Current thread 0x0002 (most recent call first):", '  File "/x/c.py", line 1 in c'];
    expect(keyThread(fh(cut, current, worker))?.id).toBe("0x0002");
  });

  it("py-spy: MainThread, or the thread whose id is the pid; threads without frames are no candidates", () => {
    const named = dumps(['Thread 7 (idle): "loader"', "    get (queue.py:1)", 'Thread 9 (idle): "MainThread"', "    f (a.py:1)"].join("\n"))[0] as StackDump;
    expect(keyThread(named)?.id).toBe("9");
    const byPid = dumps(["Process 9: python", "", "Thread 7 (idle)", "    get (queue.py:1)", "Thread 9 (idle)", "    f (a.py:1)"].join("\n"))[0] as StackDump;
    expect(keyThread(byPid)?.id).toBe("9");
    const empty = dumps(['Thread 9 (idle): "MainThread"', 'Thread 7 (idle): "loader"', "    get (queue.py:1)"].join("\n"))[0] as StackDump;
    expect(keyThread(empty)?.id).toBe("7");
  });
});
