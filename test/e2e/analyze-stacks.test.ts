/**
 * `ringwatch analyze` (the built agent) with Python stacks beside the logs: a simulated job whose
 * rank 11 never entered a collective, with `py-spy dump --pid` of its processes saved next to the
 * logs, names where rank 11 is; faulthandler dumps pasted in a torchrun stdout with no NCCL line
 * name the rank not where the others wait.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { runAgent } from "../helpers/agent-process.js";
import { Scenario, rankStopsBeforeCollective, writeScenario } from "../sim/index.js";
import { tempDir } from "./env.js";

const TWO_NODES = { nodes: ["node-a", "node-b"], ranksPerNode: 8, ncclVersion: "2.21.5+cuda12.4" };

/** `py-spy dump --pid <pid>` as py-spy prints it (src/dump.rs): the MainThread's frames, innermost first, and a pin-memory thread. */
function pyspy(pid: number, main: readonly string[]): string {
  return [
    `Process ${pid}: /usr/bin/python3 -u train.py --config llama.yaml`,
    "Python v3.10.12 (/usr/bin/python3.10)",
    "",
    `Thread ${pid} (idle): "MainThread"`,
    ...main.map((f) => `    ${f}`),
    `Thread ${pid + 41} (idle): "Thread-3 (_pin_memory_loop)"`,
    "    wait (threading.py:324)",
    "    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:53)",
    "    run (threading.py:953)",
    "    _bootstrap_inner (threading.py:1016)",
    "    _bootstrap (threading.py:973)",
    "",
  ].join("\n");
}

const IN_ALL_REDUCE = [
  "all_reduce (torch/distributed/distributed_c10d.py:2501)",
  "wrapper (torch/distributed/c10d_logger.py:83)",
  "allreduce_grads (train.py:131)",
  "train_step (train.py:120)",
  "main (train.py:205)",
  "<module> (train.py:210)",
];
const IN_LOADER = [
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

describe("ringwatch analyze with Python stacks", () => {
  it("names where the rank behind is: its py-spy dump, found by its pid, in the text and in --json", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, { faults: [rankStopsBeforeCollective({ rank: 11, atStep: 4, beforeCollIndex: 2 })] });
    await writeScenario(sim, dir, { durationMs: 30_000, stderr: false });
    for (const r of sim.topo.ranks) {
      writeFileSync(join(dir, `pyspy-${r.host}-${r.pid}.txt`), pyspy(r.pid, r.rank === 11 ? IN_LOADER : IN_ALL_REDUCE));
    }
    const rank11 = sim.topo.ranks[11];
    const json = await runAgent(["analyze", "--json", dir]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Report;
    const behind = report.findings.filter((f) => f.kind === "rank_behind");
    expect(behind.length).toBeGreaterThanOrEqual(1);
    for (const f of behind) {
      expect(f.ranks).toEqual([11]);
      expect(f.python_stacks?.map((s) => [s.ranks, s.tool, s.thread, s.in_collective, s.evidence])).toEqual([
        [[11], "py-spy", "MainThread", false, `${dir}/pyspy-node-b-${rank11?.pid}.txt:4`],
      ]);
      expect(f.python_stacks?.[0]?.frames.slice(0, 3)).toEqual([
        { function: "wait", file: "threading.py", line: 324 },
        { function: "get", file: "queue.py", line: 180 },
        { function: "_try_get_data", file: "torch/utils/data/dataloader.py", line: 1133 },
      ]);
    }
    // Rank 11's stack is told in its rank_behind: no stack_outlier says it again.
    expect(report.findings.some((f) => f.kind === "stack_outlier")).toBe(false);
    expect(report.findings[0]?.kind).toBe("rank_behind");

    const text = (await runAgent(["analyze", dir])).stdout;
    expect(text).toMatch(
      /CRITICAL rank_behind: Rank 11 \(node-b:\d+\) never entered collective #\d+ .* Where rank 11 is \(py-spy dump at .*pyspy-node-b-\d+\.txt:4, MainThread\): train\.py:88 next_batch -> \.\.\. -> torch\/utils\/data\/dataloader\.py:1133 _try_get_data -> queue\.py:180 get -> threading\.py:324 wait \(innermost last\)\./,
    );
    expect(text).toContain("      rank 11: py-spy dump ");
    expect(text).toContain("        torch/utils/data/dataloader.py:1133 _try_get_data\n");
  });

  it("faulthandler dumps in a torchrun stdout, no NCCL line: rank 5 is a stack_outlier", async () => {
    const dir = tempDir();
    const lines: string[] = ["[rank0]:step 120 loss 2.31"];
    for (let rank = 0; rank < 16; rank++) {
      const frames =
        rank === 5
          ? [
              ["/usr/lib/python3.10/threading.py", 320, "wait"],
              ["/opt/venv/lib/python3.10/site-packages/torch/serialization.py", 652, "save"],
              ["/job/checkpoint.py", 41, "save_shard"],
              ["/job/train.py", 150, "maybe_save"],
              ["/job/train.py", 210, "<module>"],
            ]
          : [
              ["/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", 2501, "all_reduce"],
              ["/opt/venv/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper"],
              ["/job/train.py", 120, "train_step"],
              ["/job/train.py", 210, "<module>"],
            ];
      lines.push(`[rank${rank}]:Timeout (0:10:00)!`, `[rank${rank}]:Thread 0x00007f2ea08706${(40 + rank).toString(16)} (most recent call first):`);
      for (const [file, line, fn] of frames) lines.push(`[rank${rank}]:  File "${file}", line ${line} in ${fn}`);
    }
    writeFileSync(join(dir, "torchrun.out"), lines.join("\n") + "\n");
    const report = JSON.parse((await runAgent(["analyze", "--json", join(dir, "torchrun.out")])).stdout) as Report;
    expect(report.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["stack_outlier", "warning", [5]]]);
    expect(report.findings[0]?.waiting_ranks).toHaveLength(15);
    expect(report.headline).toBe(
      "Python stacks of 16 ranks: 15 (ranks 0-4,6-15) wait in torch/distributed/distributed_c10d.py:2501 all_reduce, called from /job/train.py:120 train_step; " +
        "rank 5 is elsewhere: /job/checkpoint.py:41 save_shard -> torch/serialization.py:652 save -> threading.py:320 wait.",
    );
    const text = await runAgent(["analyze", "--fail-on=warning", join(dir, "torchrun.out")]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("  WARNING stack_outlier: Python stacks of 16 ranks:");
  });
});
