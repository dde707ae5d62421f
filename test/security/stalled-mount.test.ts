/**
 * A followed folder on a file system that stops answering (a hard-mounted NFS whose server is
 * gone, a FUSE daemon that hangs) cannot blind the agent nor keep it from ending. The mount is
 * real: bindfs (FUSE) over a folder of another job's logs, stopped with SIGSTOP, so every call on
 * it waits in the kernel as on a dead NFS server. The built agent runs as nobody and follows that
 * mount and a local folder, where a legitimate job (test/fakes/nccl-rank) hangs with rank 5 behind.
 *
 * Before job-fs-gate.ts: the follower's reads, stats and listings of the stopped mount took all
 * four libuv threads; the job's hang was never called (log_lines_total stood still) and SIGTERM
 * left the process waiting for the mount.
 */
import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sample, type RunningAgent, startAgent } from "../helpers/agent-process.js";
import { isRoot, NOBODY, stageBuild, type StagedBuild } from "../helpers/staged-build.js";
import { startHungJob } from "../helpers/hung-job.js";

const COMM = "0x49bbd7790311d5eb";
/** A communicator only the mount's files name, written while the mount does not answer. */
const LATE_COMM = "0x1a7e1a7e1a7e1a7e";
const hasBindfs = spawnSync("bindfs", ["--version"], { stdio: "ignore" }).status === 0;
const hasFuse = existsSync("/dev/fuse");
if (isRoot && hasFuse && !hasBindfs && process.env.CI) throw new Error("bindfs is missing; CI needs it for the stalled-mount test (.ci/run installs it)");
const canRun = isRoot && hasFuse && hasBindfs;
if (!canRun) console.log(`stalled mount: skipped (root ${isRoot}, /dev/fuse ${hasFuse}, bindfs ${hasBindfs})`);

let root: string;
let mnt: string;
let fusePid = 0;
let staged: StagedBuild | undefined;
let agent: RunningAgent | undefined;
const ranks: ChildProcess[] = [];

function setFuse(signal: "SIGSTOP" | "SIGCONT"): void {
  if (fusePid > 0) process.kill(fusePid, signal);
}

/** The agent's threads waiting on the FUSE daemon now (their kernel wait channel names fuse). */
function threadsInFuse(pid: number): number {
  let n = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stack = readFileSync(`/proc/${pid}/task/${tid}/wchan`, "utf8");
      if (stack.includes("fuse") || stack.includes("request_wait_answer")) n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

function pathState(text: string, path: string): string | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith(`ringwatch_nccl_log_path_state{path="${path}",`) && line.endsWith(" 1")) return /state="([a-z_]+)"/.exec(line)?.[1];
  }
  return undefined;
}

let hungScrape = "";
let calledAfterMs = -1;
let stuckThreadsMax = 0;
let stalledScrape = "";
let recoveredScrape = "";
let stopped: { code: number | null; ms: number } | undefined;
let exitSignal: NodeJS.Signals | null = null;

beforeAll(async () => {
  if (!canRun) return;
  root = mkdtempSync(join(tmpdir(), "rw-stalled-"));
  chmodSync(root, 0o755);
  const src = join(root, "src");
  mnt = join(root, "mnt");
  const logs = join(root, "logs");
  for (const d of [src, mnt, logs]) mkdirSync(d, { mode: 0o777 });
  chmodSync(logs, 0o777);
  // Another job's logs on the shared mount (the real Init COMPLETE shape, fixture 02).
  for (let i = 0; i < 8; i++) {
    writeFileSync(
      join(src, `other-${i}.log`),
      `nfs-host:${100 + i}:${100 + i} [${i}] NCCL INFO ncclCommInitRank comm 0x${(0x7000 + i).toString(16)} rank ${i} nranks 8 cudaDev ${i} nvmlDev ${i} busId 1000 commId 0x2b2b2b2b2b2b2b2b - Init COMPLETE\n`,
      { mode: 0o644 },
    );
  }
  execFileSync("bindfs", [src, mnt], { timeout: 20_000 });
  fusePid = Number(
    execFileSync("pgrep", ["-f", `^bindfs ${src} ${mnt}$`])
      .toString()
      .trim()
      .split("\n")[0],
  );

  staged = stageBuild("rw-stalled-agent-");
  agent = await startAgent(
    [
      "--collector.disable-defaults",
      "--collector.nccl",
      "--no-collector.nccl.ras",
      `--collector.nccl.path=${mnt}`,
      `--collector.nccl.path=${logs}`,
      "--collector.nccl.hang-threshold=4s",
    ],
    {},
    30_000,
    { user: NOBODY, main: staged.agentMain },
  );
  const a = agent;
  const pid = a.child.pid as number;
  await eventually(async () => ((sample(await a.scrape(), "ringwatch_nccl_log_files") ?? 0) >= 8 ? true : undefined), 30_000);

  // The server goes away; the other job goes on writing (on the server's side).
  setFuse("SIGSTOP");
  for (let i = 0; i < 8; i++) appendFileSync(join(src, `other-${i}.log`), `nfs-host:${100 + i}:${100 + i} [${i}] NCCL INFO still here\n`);
  const sampler = setInterval(() => (stuckThreadsMax = Math.max(stuckThreadsMax, threadsInFuse(pid))), 100);

  const t0 = Date.now();
  ranks.push(...startHungJob(logs, COMM));
  hungScrape = await eventually(async () => {
    const t = await a.scrape();
    return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
  }, 60_000);
  calledAfterMs = Date.now() - t0;
  console.log(`stalled mount: the job's hang was called ${calledAfterMs} ms after it started (40 collectives at 100 ms, then a 4 s threshold)`);
  stalledScrape = await eventually(async () => {
    const t = await a.scrape();
    return pathState(t, mnt) === "not_answering" ? t : undefined;
  }, 30_000);
  clearInterval(sampler);
  console.log(`stalled mount: at most ${stuckThreadsMax} of the agent's threads waited on the stopped mount`);

  // The server is back: the mount's files are read again, the line written meanwhile included.
  for (let i = 0; i < 2; i++) {
    appendFileSync(
      join(src, `other-${i}.log`),
      `nfs-host:${100 + i}:${100 + i} [${i}] NCCL INFO ncclCommInitRank comm 0x${(0x9000 + i).toString(16)} rank ${i} nranks 2 cudaDev ${i} nvmlDev ${i} busId 1000 commId ${LATE_COMM} - Init COMPLETE\n`,
    );
  }
  setFuse("SIGCONT");
  recoveredScrape = await eventually(async () => {
    const t = await a.scrape();
    return pathState(t, mnt) === "present" && t.includes(LATE_COMM) ? t : undefined;
  }, 60_000);

  // Gone again, and the agent is asked to stop meanwhile.
  setFuse("SIGSTOP");
  for (let i = 0; i < 8; i++) appendFileSync(join(src, `other-${i}.log`), `nfs-host:${100 + i}:${100 + i} [${i}] NCCL INFO once more\n`);
  await eventually(async () => (pathState(await a.scrape(), mnt) === "not_answering" ? true : undefined), 30_000);
  a.child.once("exit", (_code, signal) => (exitSignal = signal));
  stopped = await a.stop();
}, 240_000);

afterAll(() => {
  for (const r of ranks) r.kill("SIGKILL");
  if (agent?.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  setFuse("SIGCONT");
  if (mnt !== undefined) spawnSync("umount", ["-l", mnt], { timeout: 20_000 });
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  staged?.remove();
});

describe.runIf(canRun)("a followed folder on a mount that stops answering (FUSE stopped, agent as nobody)", () => {
  it("the legitimate job's hang in the other folder is still called, with its rank behind", () => {
    expect(calledAfterMs).toBeGreaterThan(0);
    expect(sample(hungScrape, `ringwatch_nccl_rank_behind{comm_id="${COMM}",rank="5"}`)).toBe(1);
    expect(sample(hungScrape, "ringwatch_nccl_log_lines_total")).toBeGreaterThan(8 * 40);
  });

  it("the mount's path reads not_answering, the other path present, and it is logged once", () => {
    expect(pathState(stalledScrape, mnt)).toBe("not_answering");
    expect(pathState(stalledScrape, join(root, "logs"))).toBe("present");
    const warned = (agent as RunningAgent).logs().filter((l) => l.includes(`log path ${mnt} is on a file system that does not answer`));
    // Once per episode: the mount stopped answering twice.
    expect(warned).toHaveLength(2);
  });

  it("the stopped mount held at most the gate's threads (2 of libuv's 4)", () => {
    expect(stuckThreadsMax).toBeGreaterThanOrEqual(1);
    expect(stuckThreadsMax).toBeLessThanOrEqual(2);
  });

  it("once the mount answers again, its files are read on, the lines written meanwhile included", () => {
    expect(pathState(recoveredScrape, mnt)).toBe("present");
    expect(recoveredScrape).toContain(`comm_id="${LATE_COMM}"`);
    expect((agent as RunningAgent).logs().some((l) => l.includes(`log path ${mnt} is present now`))).toBe(true);
  });

  it("ends on SIGTERM within its deadline, by SIGTERM's own action, while calls still wait on the mount", () => {
    expect(stopped?.ms).toBeLessThan(10_000);
    expect(exitSignal).toBe("SIGTERM");
    const last = (agent as RunningAgent).logs().filter((l) => l.includes("ending by SIGTERM"));
    expect(last).toHaveLength(1);
    expect(last[0]).toContain(mnt);
  });
});
