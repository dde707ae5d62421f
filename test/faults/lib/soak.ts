/**
 * Accelerated soak: an hour of a node's life in `seconds` of wall time. Jobs of 16 ranks (two
 * nodes' worth of processes, TP and DP communicators) start every 10 simulated minutes and run
 * for 12, end with their communicators torn down, and have their files rotated (rename + create)
 * every 5 simulated minutes and deleted 10 minutes after they end; nvidia-smi dmon streams 8 GPUs
 * at 40 sample sets a second; ibstat, perfquery, lsmod and ip run every second. The agent's RSS,
 * descriptors and children are sampled every second.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processesWithEnv, sample, samplesOf, startAgent } from "../../helpers/agent-process.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { jobExits } from "../../sim/index.js";
import { JobWriter } from "./job-writer.js";
import { median, MiB, watchProcess, type ProcSample } from "./proc.js";
import { killTokened, newToken, rigEnv, rigFlags, tokenEnv, type Rig } from "./tool-rig.js";

const SIM_MIN = 60_000;
const JOB_EVERY = 10 * SIM_MIN;
const JOB_LENGTH = 12 * SIM_MIN;
const ROTATE_EVERY = 5 * SIM_MIN;
const DELETE_AFTER = 10 * SIM_MIN;
const STEP_MS = 1000;

export interface SoakOptions {
  /** Wall-clock length of the run. */
  seconds: number;
  /** Simulated time to cover (default one hour). */
  simMs?: number;
}

export interface SoakResult {
  seconds: number;
  simMinutes: number;
  jobs: number;
  rotations: number;
  linesWritten: number;
  linesRead: number;
  /** ringwatch_nccl_log_truncations_total: nothing is truncated in the soak, so 0 is right. */
  truncations: number;
  samples: ProcSample[];
  /** Medians of the early (30-55 % of the run) and late (75-100 %) samples. */
  rssEarlyMb: number;
  rssLateMb: number;
  rssGrowth: number;
  /** The highest early sample: V8 collects its old space every minute or so, so a short run's medians depend on where those collections fall. */
  rssEarlyMaxMb: number;
  fdsEarlyMax: number;
  fdsLateMax: number;
  childrenMax: number;
  dmonRestarts: number;
  filesFollowedAtEnd: number;
  /** Log files on disk when the run ended (what the agent should be following). */
  filesOnDiskAtEnd: number;
  rankSeriesAtEnd: number;
  stop: { code: number | null; ms: number };
  leftovers: number[];
}

interface Job {
  writer: JobWriter;
  startSim: number;
  endedSim?: number;
  deleted: boolean;
}

/** Renames every file of the job to <name>.1 (dropping the previous .1) and creates it empty, like logrotate's create. */
function rotate(j: Job): void {
  for (const f of j.writer.files()) {
    if (!existsSync(f)) continue;
    renameSync(f, `${f}.1`);
    writeFileSync(f, "");
  }
}

function remove(j: Job): void {
  for (const f of j.writer.files()) for (const p of [f, `${f}.1`]) if (existsSync(p)) unlinkSync(p);
  j.deleted = true;
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const simTotal = o.simMs ?? 60 * SIM_MIN;
  const root = mkdtempSync(join(tmpdir(), "rw-soak-"));
  const rig: Rig = {
    dir: root,
    procfs: join(root, "proc"),
    sysfs: join(root, "sys"),
    ncclDir: join(root, "nccl"),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
  for (const d of [rig.procfs, rig.sysfs, rig.ncclDir]) mkdirSync(d);
  const token = newToken();
  const env = rigEnv({
    ...tokenEnv(token),
    FAKE_NVSMI_DMON: join(fixturesDir, "tools/nvidia_smi_dmon/01-slurm-on-aws-s-pcut-8gpu-g7e.txt"),
    FAKE_NVSMI_PACE_MS: "25",
  });
  const flags = [
    ...rigFlags(rig).filter((f) => !f.startsWith("--collector.interval")),
    "--collector.interval=1s",
    "--collector.nccl.retire-after=20s",
    // A rank_info series for every rank, though the jobs are healthy (rankSeriesAtEnd: whether ended
    // jobs' ranks retire), and no budget that would hide ranks that did not.
    "--collector.nccl.rank-series=always",
    "--collector.nccl.max-series=1000000",
  ];
  const agent = await startAgent(flags, env, 30_000);
  const pid = agent.child.pid as number;
  const watcher = watchProcess(pid, 1000);
  const jobs: Job[] = [];
  let rotations = 0;
  let linesWritten = 0;
  let stop = { code: null as number | null, ms: 0 };
  let leftovers: number[] = [];
  try {
    const tickMs = 100;
    const t0 = Date.now();
    let sim = 0;
    let nextRotate = ROTATE_EVERY;
    while (sim < simTotal) {
      sim = Math.min(simTotal, ((Date.now() - t0) / (o.seconds * 1000)) * simTotal);
      if (jobs.length * JOB_EVERY <= sim) {
        const i = jobs.length;
        const steps = Math.floor(JOB_LENGTH / STEP_MS);
        const writer = new JobWriter(
          join(rig.ncclDir, `job-${i}`),
          {
            seed: 1000 + i,
            nodes: [`soak-${i}-a`, `soak-${i}-b`],
            ranksPerNode: 8,
            stepMs: STEP_MS,
            comms: [
              { name: "tp", groupSize: 2, layout: "contiguous" },
              { name: "dp", groupSize: 8, layout: "strided" },
            ],
          },
          "path",
          { faults: [jobExits({ atStep: steps, clean: true })] },
        );
        jobs.push({ writer, startSim: i * JOB_EVERY, deleted: false });
      }
      for (const j of jobs) {
        if (j.deleted) continue;
        const local = sim - j.startSim;
        if (j.endedSim === undefined && local > j.writer.sim.nowMs) {
          const before = j.writer.lines;
          j.writer.step(local - j.writer.sim.nowMs);
          linesWritten += j.writer.lines - before;
          if (local >= JOB_LENGTH + 30_000) j.endedSim = sim;
        }
        if (j.endedSim !== undefined && sim - j.endedSim >= DELETE_AFTER) remove(j);
      }
      if (sim >= nextRotate) {
        for (const j of jobs) if (j.endedSim === undefined && !j.deleted) rotate(j);
        rotations++;
        nextRotate += ROTATE_EVERY;
      }
      await new Promise((r) => setTimeout(r, tickMs - ((Date.now() - t0) % tickMs)));
    }
    const seconds = (Date.now() - t0) / 1000;
    // The node's life ends here: the samples are of it, not of the test's polling below (its scrapes' sockets).
    const samples = watcher.stop();
    // The last lines: give the agent a moment, then read its state.
    let text = "";
    for (let i = 0; i < 40; i++) {
      text = await agent.scrape();
      if ((sample(text, "ringwatch_nccl_log_lines_total") ?? 0) >= linesWritten) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // Files deleted in the last seconds may still be in their removal grace: give them 10 s.
    const onDisk = (): number =>
      jobs.reduce((a, j) => a + j.writer.files().filter((f) => existsSync(f)).length + j.writer.files().filter((f) => existsSync(`${f}.1`)).length, 0);
    for (let i = 0; i < 20 && sample(text, "ringwatch_nccl_log_files") !== onDisk(); i++) {
      await new Promise((r) => setTimeout(r, 500));
      text = await agent.scrape();
    }
    const n = samples.length;
    // Warm-up: the heap grows and the descriptor cache (64) fills for the first third or so.
    const early = samples.slice(Math.floor(n * 0.3), Math.floor(n * 0.55));
    const late = samples.slice(Math.floor(n * 0.75));
    stop = await agent.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    leftovers = await processesWithEnv(token);
    const rssEarly = median(early.map((s) => s.rss));
    const rssLate = median(late.map((s) => s.rss));
    return {
      seconds,
      simMinutes: simTotal / SIM_MIN,
      jobs: jobs.length,
      rotations,
      linesWritten,
      linesRead: sample(text, "ringwatch_nccl_log_lines_total") ?? -1,
      truncations: sample(text, "ringwatch_nccl_log_truncations_total") ?? -1,
      samples,
      rssEarlyMb: rssEarly / MiB,
      rssLateMb: rssLate / MiB,
      rssGrowth: rssLate / rssEarly - 1,
      rssEarlyMaxMb: Math.max(...early.map((s) => s.rss)) / MiB,
      fdsEarlyMax: Math.max(...early.map((s) => s.fds)),
      fdsLateMax: Math.max(...late.map((s) => s.fds)),
      childrenMax: Math.max(...samples.map((s) => s.children)),
      dmonRestarts: sample(text, "ringwatch_gpu_dmon_restarts_total") ?? -1,
      filesFollowedAtEnd: sample(text, "ringwatch_nccl_log_files") ?? -1,
      filesOnDiskAtEnd: onDisk(),
      rankSeriesAtEnd: samplesOf(text, "ringwatch_nccl_rank_info").length,
      stop,
      leftovers,
    };
  } finally {
    watcher.stop();
    await killTokened(token);
    for (const j of jobs) j.writer.close();
    rig.remove();
  }
}

export function soakTable(r: SoakResult): string {
  const rows: [string, string][] = [
    ["wall / simulated", `${r.seconds.toFixed(0)} s / ${r.simMinutes} min (${r.jobs} jobs of 16 ranks, ${r.rotations} rotations)`],
    ["log lines written / read", `${r.linesWritten} / ${r.linesRead}`],
    ["truncations counted (none made)", String(r.truncations)],
    [
      "RSS early / late (medians)",
      `${r.rssEarlyMb.toFixed(1)} / ${r.rssLateMb.toFixed(1)} MB (${(r.rssGrowth * 100).toFixed(1)} %); early max ${r.rssEarlyMaxMb.toFixed(1)} MB`,
    ],
    ["open fds early / late (max)", `${r.fdsEarlyMax} / ${r.fdsLateMax}`],
    ["children (max at once)", String(r.childrenMax)],
    ["dmon restarts", String(r.dmonRestarts)],
    ["log files on disk / followed at the end", `${r.filesOnDiskAtEnd} / ${r.filesFollowedAtEnd}`],
    ["rank_info series at the end", `${r.rankSeriesAtEnd} (${r.jobs} jobs x 16 ranks x 3 communicators = ${r.jobs * 48} without retirement)`],
    [
      "RSS every 10 s",
      r.samples
        .filter((_, i) => i % 10 === 0)
        .map((s) => (s.rss / MiB).toFixed(0))
        .join(" ") + " MB",
    ],
    [
      "open fds every 10 s",
      r.samples
        .filter((_, i) => i % 10 === 0)
        .map((s) => s.fds)
        .join(" "),
    ],
    ["SIGTERM", `exit ${r.stop.code} in ${r.stop.ms} ms, ${r.leftovers.length} processes left`],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n");
}
