/**
 * The collectors built from collectors/index.ts are wired as the modules declare: the nccl
 * collector gets the gpu collector's readings (through the interface its detector declares), so a
 * hung communicator's verdict carries its GPU's signature; without the gpu collector it has none.
 * Real child processes: the fake nvidia-smi replays an H100 at idle (0 % SM).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { buildCollectors } from "../../agent/app.js";
import { parseCli, type AgentConfig } from "../../agent/config/config.js";
import type { Collector } from "../../collectors/collector.js";
import { createExec } from "../../collectors/exec.js";
import type { NcclCollector } from "../../collectors/nccl/collector.js";
import { eventually, fakesDir } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { testTempDir } from "../helpers/test-temp-dir.js";

const COMM = "0x49bbd7790311d5eb";
const line = (pid: number, rank: number, text: string): string => `node1:${pid}:${pid} [0] NCCL INFO ${text}\n`;
function rankLog(pid: number, rank: number): string {
  const ptr = `0x55aa${rank}0`;
  let out = line(pid, rank, `comm ${ptr} rank ${rank} nranks 2 cudaDev 0 nvmlDev 0 busId 9000 commId ${COMM} - Init COMPLETE`);
  for (let i = 0; i < 5; i++)
    out += line(
      pid,
      rank,
      `AllReduce: opCount ${i.toString(16)} sendbuff 0x7f01 recvbuff 0x7f02 count 1024 datatype 7 op 0 root 0 comm ${ptr} [nranks=2] stream 0x5501`,
    );
  return out;
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function config(args: string[]): AgentConfig {
  const a = parseCli(args, {});
  if (a.kind !== "run") throw new Error("not a run");
  return a.config;
}

async function hungVerdict(gpuOn: boolean): Promise<{ names: string[]; gpus: Array<{ gpu: string; rank: number; signature: string }> }> {
  const dir = testTempDir(undefined, "rw-app-");
  writeFileSync(join(dir, "nccl-node1-100.log"), rankLog(100, 0));
  writeFileSync(join(dir, "nccl-node1-200.log"), rankLog(200, 1));
  process.env.FAKE_NVSMI_DMON = join(fixturesDir, "tools/nvidia_smi_dmon/05-nvgpuexp-h100-80gb-590.48.01-idle.txt");
  process.env.FAKE_NVSMI_QUERY = join(fixturesDir, "tools/nvidia_smi_query_csv/04-nvgpuexp-h100-80gb-590.48.01-allfields.txt");
  process.env.FAKE_NVSMI_PACE_MS = "200";
  const cfg = config([
    `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
    "--collector.gpu.interval=1s",
    "--collector.disable-defaults",
    ...(gpuOn ? ["--collector.gpu"] : []),
    "--collector.nccl",
    `--collector.nccl.path=${dir}`,
    "--collector.nccl.hang-threshold=1s",
    "--no-collector.nccl.check-pids",
    "--no-collector.nccl.ras",
  ]);
  const exec = createExec();
  const collectors: Collector[] = buildCollectors(cfg, { registry: new Registry(), logger: pino({ level: "silent" }), exec, now: Date.now });
  cleanup.push(async () => {
    for (const c of collectors) await c.stop?.();
    await exec.killAll(500);
  });
  for (const c of collectors) c.start?.();
  const nccl = collectors.find((c) => c.name === "nccl") as NcclCollector;
  const verdict = await eventually(() => {
    const v = nccl.verdicts().find((x) => x.commKey === COMM);
    // With the gpu collector, wait for its first sample too.
    return Promise.resolve(v?.hangSuspected && (!gpuOn || v.gpus.length === 2) ? v : undefined);
  }, 15_000);
  // In the order the ranks' files were first read: sorted by rank to compare.
  return { names: collectors.map((c) => c.name), gpus: [...verdict.gpus].sort((x, y) => x.rank - y.rank) };
}

describe("collectors built from the module index", () => {
  it("the nccl collector reads the gpu collector's GPUs: a hung communicator's GPU reads idle", async () => {
    const { names, gpus } = await hungVerdict(true);
    expect(names).toEqual(["gpu", "nccl"]);
    expect(gpus).toEqual([
      { gpu: "0", rank: 0, signature: "idle" },
      { gpu: "0", rank: 1, signature: "idle" },
    ]);
  });

  it("without the gpu collector the verdict has no GPU readings", async () => {
    const { names, gpus } = await hungVerdict(false);
    expect(names).toEqual(["nccl"]);
    expect(gpus).toEqual([]);
  });
});
