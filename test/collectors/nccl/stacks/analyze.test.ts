/**
 * `ringwatch analyze` with Python stacks beside the logs (collectors/nccl/analyze/stacks.ts), in
 * process: a rank_behind says where its rank is, the ranks outside the stack most ranks share are
 * a stack_outlier, dumps are tied to ranks by pid, prefix and torchrun's local rank, and without
 * stacks (or with stacks tied to no rank) the findings are exactly those of the logs alone.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs, type LogText } from "../../../../collectors/nccl/analyze/analyze.js";
import { formatReport } from "../../../../collectors/nccl/verdict/format.js";
import type { Report } from "../../../../collectors/nccl/verdict/report.js";

const COMM = "0x49bbd7790311d5eb";

/** One rank's NCCL log (`NCCL_DEBUG_FILE` form): Init COMPLETE, then `n` AllReduce COLL lines. */
function ncclLog(rank: number, nranks: number, n: number, prefix = ""): string[] {
  const pid = 4000 + rank;
  const host = rank < 4 ? "node-a" : "node-b";
  const dev = rank % 4;
  const comm = `0x${(0x7f0000 + rank * 16).toString(16)}`;
  return [
    `${prefix}${host}:${pid}:${pid} [${dev}] NCCL INFO NCCL version 2.21.5+cuda12.4`,
    `${prefix}${host}:${pid}:${pid + 7} [${dev}] NCCL INFO ncclCommInitRank comm ${comm} rank ${rank} nranks ${nranks} cudaDev ${dev} nvmlDev ${dev} busId 18000 commId ${COMM} - Init COMPLETE`,
    ...Array.from(
      { length: n },
      (_, i) =>
        `${prefix}${host}:${pid}:${pid} [${dev}] NCCL INFO AllReduce: opCount ${i.toString(16)} sendbuff 0x7f1a2c000000 recvbuff 0x7f1a2c000000 count 1024 datatype 7 op 0 root 0 comm ${comm} [nranks=${nranks}] stream 0x55d0c2a3b4c0`,
    ),
  ];
}

/** Eight ranks; rank 2 stopped 3 collectives early: the logs name it rank_behind. */
function logsWithRankBehind(): LogText[] {
  return Array.from({ length: 8 }, (_, r) => ({ name: `nccl-${r}.log`, text: ncclLog(r, 8, r === 2 ? 17 : 20).join("\n") }));
}

const ALL_REDUCE = [
  "all_reduce (torch/distributed/distributed_c10d.py:2501)",
  "wrapper (torch/distributed/c10d_logger.py:83)",
  "train_step (train.py:120)",
  "<module> (train.py:210)",
];
const LOADER = [
  "wait (threading.py:324)",
  "get (queue.py:180)",
  "_try_get_data (torch/utils/data/dataloader.py:1133)",
  "_next_data (torch/utils/data/dataloader.py:1333)",
  "__next__ (torch/utils/data/dataloader.py:631)",
  "next_batch (train.py:88)",
  "<module> (train.py:210)",
];

/** `py-spy dump --pid <pid>` as it prints it. */
function pyspy(pid: number, main: readonly string[]): string {
  return [
    `Process ${pid}: /usr/bin/python3 train.py`,
    "Python v3.10.12 (/usr/bin/python3.10)",
    "",
    `Thread ${pid} (idle): "MainThread"`,
    ...main.map((f) => `    ${f}`),
  ].join("\n");
}

const pyspyOf = (rank: number, main: readonly string[]): LogText => ({ name: `pyspy-${4000 + rank}.txt`, text: pyspy(4000 + rank, main) });

/** faulthandler's dump of the main thread behind `prefix`. */
function faulthandler(prefix: string, frames: readonly [string, number, string][]): string[] {
  return [
    `${prefix}Thread 0x00007f2ea0870640 (most recent call first):`,
    ...frames.map(([file, line, fn]) => `${prefix}  File "${file}", line ${line} in ${fn}`),
  ];
}
const FH_ALL_REDUCE: [string, number, string][] = [
  ["/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", 2501, "all_reduce"],
  ["/job/train.py", 120, "train_step"],
  ["/job/train.py", 210, "<module>"],
];
const FH_CHECKPOINT: [string, number, string][] = [
  ["/opt/venv/lib/python3.10/site-packages/torch/serialization.py", 628, "save"],
  ["/job/train.py", 150, "save_checkpoint"],
  ["/job/train.py", 210, "<module>"],
];

const kinds = (r: Report): string[] => r.findings.map((f) => f.kind);
/** The report without what stacks may add, for comparing with the logs' own. */
const json = (r: Report): unknown => JSON.parse(JSON.stringify(r));

describe("analyze with Python stacks", () => {
  it("a rank_behind says where its rank is, from the py-spy dump of its pid; no stack_outlier repeats it", () => {
    const dumps = [pyspyOf(2, LOADER), ...[0, 1, 3, 4, 5, 6, 7].map((r) => pyspyOf(r, ALL_REDUCE))];
    const r = analyzeLogs([...logsWithRankBehind(), ...dumps]);
    expect(kinds(r)).toEqual(["rank_behind", "hang_suspected"]);
    const behind = r.findings[0];
    expect(behind?.ranks).toEqual([2]);
    expect(behind?.summary).toMatch(/^Rank 2 \(node-a:4002\) never entered collective #18 \(AllReduce\)/);
    expect(behind?.summary).toContain(
      " Where rank 2 is (py-spy dump at pyspy-4002.txt:4, MainThread): train.py:88 next_batch -> ... -> torch/utils/data/dataloader.py:1133 _try_get_data -> queue.py:180 get -> threading.py:324 wait (innermost last).",
    );
    expect(behind?.python_stacks).toEqual([
      {
        ranks: [2],
        tool: "py-spy",
        thread: "MainThread",
        frames: LOADER.map((f) => {
          const m = /^(\S+) \((.+):(\d+)\)$/.exec(f) as RegExpExecArray;
          return { function: m[1], file: m[2], line: Number(m[3]) };
        }),
        frames_left_out: 0,
        truncated: false,
        in_collective: false,
        evidence: "pyspy-4002.txt:4",
      },
    ]);
    expect(behind?.evidence.at(-1)).toBe("pyspy-4002.txt:4");
    // The verdict line is its first sentence; the stack follows in the finding.
    expect(r.headline).toMatch(/^Rank 2 \(node-a:4002\) never entered collective #18/);
    expect(r.findings.some((f) => f.kind === "stack_outlier")).toBe(false);
    const text = formatReport(r, { files: 16, lines: 0 });
    expect(text).toContain(
      "      rank 2: py-spy dump pyspy-4002.txt:4, MainThread, innermost first:\n        threading.py:324 wait\n        queue.py:180 get\n",
    );
  });

  it("without stacks, or with stacks tied to no rank, the findings are the logs' own, unchanged", () => {
    const alone = json(analyzeLogs(logsWithRankBehind()));
    // pid 9999 is no process of the logs, and the file names no rank.
    const unplaced = json(analyzeLogs([...logsWithRankBehind(), { name: "dump.txt", text: pyspy(9999, LOADER) }]));
    expect(unplaced).toEqual(alone);
    const noStack = json(analyzeLogs([...logsWithRankBehind(), { name: "notes.txt", text: "Thread pool started\nProcess 4002: python" }]));
    expect(noStack).toEqual(alone);
  });

  it("a rank behind whose Python waits in a collective too is said so", () => {
    const r = analyzeLogs([
      ...logsWithRankBehind(),
      pyspyOf(
        2,
        ALL_REDUCE.map((f) => f.replace("all_reduce", "broadcast")),
      ),
    ]);
    expect(r.findings[0]?.summary).toContain("(innermost last); it waits in a collective too: compare it with the one the others wait in.");
    expect(r.findings[0]?.python_stacks?.[0]?.in_collective).toBe(true);
  });

  it("stacks alone: the ranks outside the stack most ranks wait in are a stack_outlier (warning)", () => {
    const lines = [
      ...Array.from({ length: 8 }, (_, rank) => faulthandler(`[rank${rank}]:`, rank === 5 ? FH_CHECKPOINT : FH_ALL_REDUCE)).flat(),
      "[rank0]:[W Utils.hpp:164] some other line",
    ];
    const r = analyzeLogs([{ name: "job.out", text: lines.join("\n") }]);
    expect(kinds(r)).toEqual(["stack_outlier"]);
    const f = r.findings[0];
    expect(f).toMatchObject({ severity: "warning", ranks: [5], waiting_ranks: [0, 1, 2, 3, 4, 6, 7], comm_id: null });
    expect(f?.summary).toBe(
      "Python stacks of 8 ranks: 7 (ranks 0-4,6,7) wait in torch/distributed/distributed_c10d.py:2501 all_reduce, called from /job/train.py:120 train_step; " +
        "rank 5 is elsewhere: /job/train.py:210 <module> -> /job/train.py:150 save_checkpoint -> torch/serialization.py:628 save. " +
        "The rank that is not where the others wait is the likely culprit: its stack says where it is stuck, or which other path it took.",
    );
    expect(f?.python_stacks?.map((s) => [s.ranks, s.in_collective, s.frames[0]?.function])).toEqual([
      [[5], false, "save"],
      [[0, 1, 2, 3, 4, 6, 7], true, "all_reduce"],
    ]);
    expect(f?.evidence).toEqual(["job.out:21", "job.out:1"]);
    expect(r.incidents).toEqual([{ severity: "warning", headline: expect.stringMatching(/^Python stacks of 8 ranks/) as unknown, findings: [0] }]);
  });

  it("a stack_outlier names only the outliers no rank_behind told of", () => {
    const dumps = [
      pyspyOf(2, LOADER),
      pyspyOf(
        6,
        LOADER.map((f) => f.replace("next_batch", "prefetch")),
      ),
      ...[0, 1, 3, 4, 5, 7].map((r) => pyspyOf(r, ALL_REDUCE)),
    ];
    const r = analyzeLogs([...logsWithRankBehind(), ...dumps]);
    expect(kinds(r)).toEqual(["rank_behind", "hang_suspected", "stack_outlier"]);
    expect(r.findings[2]).toMatchObject({ ranks: [6], processes: ["node-b:4006"], waiting_ranks: [0, 1, 3, 4, 5, 7] });
    expect(r.findings[2]?.summary).toContain("rank 6 is elsewhere: train.py:88 prefetch -> ... ->");
    // One incident: the hang, its stacks below it.
    expect(r.incidents.map((i) => i.findings)).toEqual([[0, 1, 2]]);
  });

  it("ties torchrun's `[defaultN]:` dumps to the process the same log's `[defaultN]:` NCCL lines name", () => {
    const combined = Array.from({ length: 8 }, (_, rank) => ncclLog(rank, 8, rank === 2 ? 17 : 20, `[default${rank}]:`)).flat();
    const stacks = [...faulthandler("[default2]:", FH_CHECKPOINT), ...faulthandler("[default3]:", FH_ALL_REDUCE)];
    const r = analyzeLogs([{ name: "torchrun.out", text: [...combined, ...stacks].join("\n") }]);
    const behind = r.findings.find((f) => f.kind === "rank_behind");
    expect(behind?.ranks).toEqual([2]);
    expect(behind?.python_stacks?.map((s) => [s.ranks, s.frames[0]?.function])).toEqual([[[2], "save"]]);
    // The same dumps in another file: no NCCL line there ties the local rank to a process.
    const apart = analyzeLogs([
      { name: "torchrun.out", text: combined.join("\n") },
      { name: "stacks.out", text: stacks.join("\n") },
    ]);
    expect(apart.findings.find((f) => f.kind === "rank_behind")?.python_stacks).toBeUndefined();
  });

  it("PyTorch's worker server periodic stacks file: ranks from its sections", () => {
    const parts = Array.from({ length: 4 }, (_, rank) => [
      `=== Rank ${rank}: http://node-${rank}:40123/handler/dump_traceback? ===`,
      ...faulthandler("", rank === 3 ? FH_CHECKPOINT : FH_ALL_REDUCE),
      "",
    ]);
    const r = analyzeLogs([{ name: "stacks_20250101_120000.txt", text: parts.flat().join("\n") }]);
    expect(r.findings.map((f) => [f.kind, f.ranks])).toEqual([["stack_outlier", [3]]]);
  });
});
