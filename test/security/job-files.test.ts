/**
 * What a job user writes cannot blind, steer or crash the agent (docs/security.md). The built agent
 * runs as nobody, from a world-readable copy of the build; a job user (uid 4242, a child process
 * started as that user) attacks through the folders the agent follows, while a legitimate job
 * (root's ranks, test/fakes/nccl-rank) hangs with rank 5 behind. The attacker, all at once:
 *  - 80 symlinks in the log folder, renamed over and over between a growing file and a FIFO
 *    (before: every file-I/O thread stuck in open() on a FIFO, the agent blind for good);
 *  - a symlink to a file only the agent's user may read, holding a commId
 *    (before: read, and the commId on /metrics);
 *  - 10,001 empty files in the log folder, one over the follower's cap of 10,000
 *    (before: the legitimate job's logs, which came later, never followed);
 *  - a live process of its own announcing 300 communicators, over the cap of 256
 *    (before: the legitimate job's communicator never tracked, its hang never reported);
 *  - the Flight Recorder pipe of rank 0 flipped between a FIFO and a symlink to a file the agent
 *    may write (before: the poke wrote "ringwatch\n" into it).
 * Expected: the legitimate hang is called with its rank behind; nothing of the attacker's is read;
 * the agent-owned file is untouched; SIGTERM ends the agent at once.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { isRoot, NOBODY, stageBuild, type StagedBuild } from "../helpers/staged-build.js";
import { startHungJob } from "../helpers/hung-job.js";

const ATTACKER = { uid: 4242, gid: 4242 };
const COMM = "0x49bbd7790311d5eb";
const SECRET_COMM = "0x5ec2e75ec2e75ec2";
const LINKS = 80;
const FLOOD_COMMS = 300;
const FLOOD_FILES = 10_001;

/** The job user's attack, as one process of that user (argv: logs dir, outside dir, fr dir, agent-owned file). */
const ATTACK = String.raw`
const fs = require("node:fs"); const path = require("node:path");
const [logs, outside, fr, agentFile] = process.argv.slice(1);
for (let i = 0; i < ${FLOOD_FILES}; i++) fs.writeFileSync(path.join(logs, "empty-" + i + ".log"), "");
const grow = path.join(outside, "grow.log"), fifo = path.join(outside, "fifo");
// A live process announcing 300 communicators in the real Init COMPLETE shape (fixture 02).
const host = "evil", pid = process.pid;
let text = "";
for (let i = 0; i < ${FLOOD_COMMS}; i++) {
  const id = (0x7e000000 + i).toString(16).padStart(16, "0");
  text += host + ":" + pid + ":" + pid + " [0] NCCL INFO ncclCommInitRank comm 0x" + (0x6000000 + i * 16).toString(16) + " rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 88000 commId 0x" + id + " - Init COMPLETE\n";
}
fs.writeFileSync(path.join(logs, "nccl-evil-" + pid + ".log"), text);
fs.symlinkSync(agentFile.replace(/owned$/, "secret.log"), path.join(logs, "steal.log"));
let n = 0;
function flip() {
  for (let i = 0; i < ${LINKS}; i++) {
    const tmp = path.join(logs, ".t" + i);
    try { fs.unlinkSync(tmp); } catch {}
    fs.symlinkSync((n + i) % 2 ? fifo : grow, tmp);
    fs.renameSync(tmp, path.join(logs, "flip-" + i + ".log"));
  }
  const pipe = path.join(fr, "pipe_0.pipe"), ptmp = path.join(fr, ".p");
  try { fs.unlinkSync(ptmp); } catch {}
  fs.symlinkSync(n % 2 ? agentFile : fifo, ptmp);
  fs.renameSync(ptmp, pipe);
  fs.appendFileSync(grow, "evil:1:1 [0] NCCL INFO growing " + n + "\n");
  n++;
  setTimeout(flip, 5);
}
flip();
process.stdout.write("attacking\n");
`;

let root: string;
let staged: StagedBuild | undefined;
let agent: RunningAgent | undefined;
let attacker: ChildProcess | undefined;
const ranks: ChildProcess[] = [];
let agentFile: string;
let hungScrape = "";
let calledAfterMs = -1;
let stopped: { code: number | null; ms: number } | undefined;
/** Kernel wait channels of the agent's threads, sampled every 100 ms during the attack. */
const wchans = new Set<string>();
let wchanSamples = 0;

function sampleWchans(pid: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      wchans.add(readFileSync(`/proc/${pid}/task/${tid}/wchan`, "utf8"));
    } catch {
      // the thread ended meanwhile
    }
  }
  wchanSamples++;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rw-jobfiles-"));
  chmodSync(root, 0o755);
  const logs = join(root, "logs");
  const outside = join(root, "outside");
  const fr = join(root, "fr");
  for (const d of [logs, outside, fr]) mkdirSync(d, { mode: 0o777 });
  for (const d of [logs, fr]) chmodSync(d, 0o777); // shared and not sticky: fs.protected_symlinks does not help
  chownSync(outside, ATTACKER.uid, ATTACKER.gid);
  spawnSync("mkfifo", ["-m", "0666", join(outside, "fifo")]);
  chownSync(join(outside, "fifo"), ATTACKER.uid, ATTACKER.gid);
  writeFileSync(join(outside, "grow.log"), "");
  chownSync(join(outside, "grow.log"), ATTACKER.uid, ATTACKER.gid);
  // Files only the agent's user may read or write.
  agentFile = join(root, "agent-owned");
  writeFileSync(agentFile, "original\n", { mode: 0o600 });
  writeFileSync(
    join(root, "agent-secret.log"),
    `nobody:1:1 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000 commId ${SECRET_COMM} - Init COMPLETE\n`,
    { mode: 0o600 },
  );
  for (const f of [agentFile, join(root, "agent-secret.log")]) chownSync(f, NOBODY.uid, NOBODY.gid);

  staged = stageBuild("rw-jobfiles-agent-");
  agent = await startAgent(
    [
      "--collector.disable-defaults",
      "--collector.nccl",
      "--no-collector.nccl.ras",
      `--collector.nccl.path=${logs}`,
      "--collector.nccl.hang-threshold=4s",
      `--collector.nccl.flight-recorder.dump=${join(fr, "dump_")}`,
      `--collector.nccl.flight-recorder.pipe=${join(fr, "pipe_")}`,
    ],
    {},
    30_000,
    { user: NOBODY, main: staged.agentMain },
  );
  const a = agent;

  attacker = spawn(process.execPath, ["-e", ATTACK, logs, outside, fr, agentFile], {
    uid: ATTACKER.uid,
    gid: ATTACKER.gid,
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((res, rej) => {
    attacker?.stdout?.once("data", () => res());
    attacker?.once("exit", (code) => rej(new Error(`attacker exited ${code}`)));
  });
  // The attacker's communicators are in before the job starts: the cap is full when the job's comes.
  await eventually(async () => ((sample(await a.scrape(), "ringwatch_nccl_communicators_dropped_total") ?? 0) > 0 ? true : undefined), 30_000);

  const pid = a.child.pid as number;
  const sampler = setInterval(() => sampleWchans(pid), 100);
  const t0 = Date.now();
  ranks.push(...startHungJob(logs, COMM));
  hungScrape = await eventually(async () => {
    const t = await a.scrape();
    return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
  }, 60_000);
  calledAfterMs = Date.now() - t0;
  console.log(
    `job files under attack: the legitimate hang was called ${calledAfterMs} ms after the job started (40 collectives at 100 ms, then a 4 s threshold)`,
  );
  // The poke was tried (a hang began): whatever the pipe was at that moment (a FIFO, a symlink) it says so.
  await eventually(
    () => Promise.resolve(a.logs().some((l) => l.includes("Flight Recorder dump") || l.includes("no Flight Recorder pipe")) ? true : undefined),
    30_000,
  );
  clearInterval(sampler);
  attacker.kill("SIGKILL");
  stopped = await a.stop();
}, 180_000);

afterAll(() => {
  attacker?.kill("SIGKILL");
  for (const r of ranks) r.kill("SIGKILL");
  if (agent?.child.exitCode === null) agent.child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
  staged?.remove();
});

describe.runIf(isRoot)("a job user attacks the folders the agent follows (agent as nobody)", () => {
  it("the legitimate job's hang is still called, with its rank behind", () => {
    expect(calledAfterMs).toBeGreaterThan(0);
    expect(sample(hungScrape, `ringwatch_nccl_rank_behind{comm_id="${COMM}",rank="5"}`)).toBe(1);
    // Rank 0 entered #40 (the fake rank prints opCount n for its nth collective: 0x28 + 1).
    expect(sample(hungScrape, `ringwatch_nccl_rank_progress{comm_id="${COMM}",rank="0"}`)).toBe(41);
    // The hung communicator's ranks are named, with the hang.
    expect(samplesOf(hungScrape, "ringwatch_nccl_rank_info").filter((l) => l.includes(`comm_id="${COMM}"`))).toHaveLength(8);
  });

  it("the attacker's 300 communicators gave way to the job's, and that is counted and logged once", () => {
    expect(sample(hungScrape, "ringwatch_nccl_communicators_dropped_total")).toBeGreaterThanOrEqual(FLOOD_COMMS - 256);
    const lines = (agent as RunningAgent).logs().filter((l) => l.includes("the communicator cap (256) is full"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`uid ${ATTACKER.uid}`);
  });

  it("the attacker's 10,001 empty files gave way to the job's logs, and that is logged once", () => {
    // The 8 rank files (and the attacker's own few) each took the place of an empty file.
    expect(sample(hungScrape, "ringwatch_nccl_log_files_dropped_total")).toBeGreaterThanOrEqual(FLOOD_FILES + 8 - 10_000);
    expect(sample(hungScrape, "ringwatch_nccl_log_files")).toBe(10_000);
    const lines = (agent as RunningAgent).logs().filter((l) => l.includes("the file cap (10000) is full"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`uid ${ATTACKER.uid}`);
  });

  it("never read the file behind the attacker's symlink, and says why", () => {
    expect(hungScrape).not.toContain(SECRET_COMM);
    expect((agent as RunningAgent).logs().some((l) => l.includes("steal.log") && l.includes("EFOREIGN"))).toBe(true);
  });

  it("no thread ever waited in open() on a FIFO, and the legitimate logs were read throughout", () => {
    expect(wchanSamples).toBeGreaterThan(20);
    expect([...wchans].filter((w) => w.includes("fifo") || w.includes("wait_for_partner"))).toEqual([]);
    expect(sample(hungScrape, "ringwatch_nccl_log_lines_total")).toBeGreaterThan(8 * 40);
  });

  it("never wrote into the agent's own file through the pipe", () => {
    expect(readFileSync(agentFile, "utf8")).toBe("original\n");
  });

  it("ends at once on SIGTERM: no thread is stuck in open()", () => {
    expect(stopped?.code).toBe(0);
    expect((agent as RunningAgent).logs().some((l) => l.includes("shutdown deadline reached"))).toBe(false);
  });
});
