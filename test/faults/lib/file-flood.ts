/**
 * A job user floods the followed folder with empty files (300,000 by default) while another
 * user's job runs and hangs with rank 5 behind (test/fakes/nccl-rank). Measures what the flood
 * costs the agent (CPU share, RSS) and whether the legitimate hang is still called. Used by
 * scripts/faults/file-flood.mjs, which prints the figures and checks the goals.
 */
import type { ChildProcess } from "node:child_process";
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, sample, startAgent } from "../../helpers/agent-process.js";
import { watchProcess, type ProcSample } from "./proc.js";
import { startHungJob } from "../../helpers/hung-job.js";

export const FLOOD_USER = 4242;
const COMM = "0x49bbd7790311d5eb";

export interface FileFloodResult {
  files: number;
  floodMs: number;
  /** ms from the job's start to its hang verdict; 0: never (within 120 s). */
  hangAfterMs: number;
  /** CPU share of one core over the minute after the flood (0..1). */
  cpuShare: number;
  proc: ProcSample[];
  final: string;
}

function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, "latin1");
  const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]); // utime + stime
}

export async function runFileFlood(files = 300_000, settleMs = 60_000): Promise<FileFloodResult> {
  const root = mkdtempSync(join(tmpdir(), "rw-flood-"));
  const logs = join(root, "logs");
  mkdirSync(logs, { mode: 0o777 });
  const agent = await startAgent(
    ["--collector.disable-defaults", "--collector.nccl", "--no-collector.nccl.ras", `--collector.nccl.path=${logs}`, "--collector.nccl.hang-threshold=4s"],
    {},
    30_000,
  );
  const pid = agent.child.pid as number;
  const watcher = watchProcess(pid, 500);
  const ranks: ChildProcess[] = [];
  try {
    const t0 = Date.now();
    const asRoot = process.getuid?.() === 0;
    for (let i = 0; i < files; i++) {
      const p = join(logs, `flood-${i}.log`);
      writeFileSync(p, "");
      if (asRoot) chownSync(p, FLOOD_USER, FLOOD_USER);
    }
    const floodMs = Date.now() - t0;
    const ticks0 = cpuTicks(pid);
    const c0 = Date.now();
    const j0 = Date.now();
    ranks.push(...startHungJob(logs, COMM));
    let hangAfterMs = 0;
    try {
      await eventually(async () => (sample(await agent.scrape(), `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? true : undefined), 120_000);
      hangAfterMs = Date.now() - j0;
    } catch {
      // never called: reported as 0
    }
    const left = settleMs - (Date.now() - c0);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    const cpuShare = (cpuTicks(pid) - ticks0) / 100 / ((Date.now() - c0) / 1000);
    const final = await agent.scrape();
    return { files, floodMs, hangAfterMs, cpuShare, proc: watcher.stop(), final };
  } finally {
    watcher.stop();
    for (const r of ranks) r.kill("SIGKILL");
    await agent.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export function fileFloodSummary(r: FileFloodResult): string {
  const maxRss = Math.max(...r.proc.map((p) => p.rss)) / (1024 * 1024);
  return [
    `file flood: ${r.files} empty files of uid ${FLOOD_USER} made in ${r.floodMs} ms`,
    `  legitimate hang called ${r.hangAfterMs} ms after the job started (0: never)`,
    `  agent CPU over the minute after the flood: ${(r.cpuShare * 100).toFixed(1)} % of a core`,
    `  agent RSS max: ${maxRss.toFixed(0)} MB`,
    `  files followed ${sample(r.final, "ringwatch_nccl_log_files")}, dropped ${sample(r.final, "ringwatch_nccl_log_files_dropped_total")}`,
  ].join("\n");
}
