/**
 * Poking PyTorch's debug-info pipes: real FIFOs owned by fake rank processes (test/fakes/fr-rank,
 * which reads its pipe and dumps as ProcessGroupNCCL's heartbeat monitor does), a FIFO with no
 * reader (its rank exited), and look-alike files that are no pipes.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findPipes, pokePipe, rankFilesAsync } from "../../../../collectors/nccl/flight-recorder/live-pipes.js";
import { eventually } from "../../../helpers/eventually.js";
import { fakesDir } from "../../../helpers/agent-process.js";
import { tempDir } from "../../../helpers/temp-dir.js";

const ranks: ChildProcess[] = [];
afterEach(() => {
  for (const r of ranks.splice(0)) r.kill("SIGTERM");
});

async function startRank(dir: string, rank: number, from: string): Promise<{ out: () => string }> {
  const child = spawn(
    process.execPath,
    [join(fakesDir, "fr-rank"), "--pipe", join(dir, "pipe_"), "--dump", join(dir, "dump_"), "--rank", String(rank), "--from", from, "--poll-ms", "50"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  ranks.push(child);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => (out += d));
  await eventually(() => out.includes("ready"), 10_000);
  return { out: () => out };
}

describe("debug-info pipes", () => {
  it("finds each rank's FIFO and pokes it; the rank dumps; a FIFO nobody reads answers no_reader", async () => {
    const dir = tempDir();
    const from = join(dir, "payload");
    writeFileSync(from, Buffer.from([0x80, 0x02, 0x7d, 0x71, 0x00, 0x2e]));
    const r3 = await startRank(dir, 3, from);
    await startRank(dir, 12, from);
    spawnSync("mkfifo", [join(dir, "pipe_7.pipe")], { timeout: 5000 }); // a rank that exited: nobody reads
    writeFileSync(join(dir, "pipe_9.pipe"), ""); // a regular file: not a pipe
    writeFileSync(join(dir, "pipe_x.pipe"), "");
    const pipes = await findPipes(join(dir, "pipe_"));
    expect(pipes.map((p) => p.rank)).toEqual([3, 7, 12]);
    expect((await pokePipe(join(dir, "pipe_7.pipe"))).result).toBe("no_reader");
    expect((await pokePipe(join(dir, "pipe_3.pipe"))).result).toBe("ok");
    await eventually(() => r3.out().includes("dumped 1"), 10_000);
    expect(readFileSync(join(dir, "dump_3"))).toEqual(readFileSync(from));
    expect(existsSync(join(dir, "dump_12"))).toBe(false);
    expect(await pokePipe(join(dir, "missing.pipe"))).toEqual({ result: "error", reason: "ENOENT" });
  });

  it("rank files: <prefix><digits>, with an extension only when no suffix is asked for", async () => {
    const dir = tempDir();
    for (const n of ["nccl_trace_rank_0", "nccl_trace_rank_15", "nccl_trace_rank_2.json", "nccl_trace_rank_", "nccl_trace_rank_3x", "other_1"])
      writeFileSync(join(dir, n), "");
    expect((await rankFilesAsync(join(dir, "nccl_trace_rank_"), "")).map((f) => [f.rank, f.path.slice(dir.length + 1)])).toEqual([
      [0, "nccl_trace_rank_0"],
      [2, "nccl_trace_rank_2.json"],
      [15, "nccl_trace_rank_15"],
    ]);
    expect(await rankFilesAsync(join(dir, "nope", "x_"), "")).toEqual([]);
  });
});
