/**
 * A local user cannot forge NCCL RAS evidence: the built agent believes a RAS answer only from a
 * socket that a live process of a rank its logs know holds (or root). The listeners here are the
 * fake RAS service (test/fakes/nccl-ras --job, NCCL 2.29.7's protocol and JSON) run as other users;
 * the agent runs as root (every process's fds readable: the socket must be among a known rank's),
 * and as nobody (no other user's fds readable: the socket's uid must be a known rank's). Every
 * report is the same forged job: communicator COMM hung with rank 12 behind, rank 15's process dead.
 * Needs `npm run build` first, and root (to run processes as other users).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { withMissing, type RasJob } from "../fakes/ras/render.mjs";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { startRasJob, type RasJobService } from "../helpers/ras-service.js";
import { isRoot, NOBODY, stageBuild, type StagedBuild } from "../helpers/staged-build.js";
import { tempDir } from "../helpers/temp-dir.js";

const COMM = "0x49bbd7790311d5eb";
/** Users that are neither root nor nobody (the agent, in the last tests): a job's and another local user's. */
const JOB_USER = { uid: 65533, gid: 65533 };
const OTHER_USER = { uid: 65532, gid: 65532 };
/**
 * Refused answers waited for before looking: more than a believed report needs for every verdict
 * (the believed tests below show the hang at the second answer; the dead process shows at the first).
 */
const REFUSALS = 3;

let agent: RunningAgent | undefined;
let services: RasJobService[] = [];
let children: ChildProcess[] = [];
let staged: StagedBuild | undefined;

afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  await Promise.all(services.map((s) => s.stop()));
  services = [];
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r)))));
  children = [];
});
afterAll(() => staged?.remove());

/** Ranks 0-7 here (127.0.0.1, process `here`), 8-15 on 10.0.0.2; rank 12 never entered AllReduce #40; rank 15's process dead. */
function forged(here: number): RasJob {
  const job: RasJob = {
    version: "2.29.7",
    comms: [
      {
        hash: COMM,
        size: 16,
        ranks: Array.from({ length: 16 }, (_, r) => ({
          rank: r,
          host: r < 8 ? "127.0.0.1" : "10.0.0.2",
          pid: r < 8 ? here : 5140 + r,
          cudaDev: r % 8,
          nvmlDev: r % 8,
          counts: { Broadcast: 1, AllGather: 7, AllReduce: r === 12 ? 39 : 40 },
        })),
      },
    ],
  };
  return withMissing(job, 0, [15], { dead: true });
}

/** A RAS service run as `user`, answering `forged(pid)` where pid is its own process's unless given. */
async function rasAs(user: { uid: number; gid: number }, here?: number): Promise<{ s: RasJobService; pid: number }> {
  const s = await startRasJob(tempDir("rw-ras-forge-"), forged(here ?? 1), { user });
  services.push(s);
  const pid = s.child.pid ?? -1;
  await s.setJob(forged(here ?? pid));
  return { s, pid };
}

/**
 * What a rank process writes at NCCL_DEBUG=INFO (its INIT lines, NCCL 2.21's shapes as
 * test/fakes/nccl-rank writes them): ranks `ranks` of COMM run in process `pid` of this node.
 */
function rankLog(dir: string, pid: number, ranks: readonly number[], owner?: { uid: number; gid: number }): void {
  const host = hostname().split(".")[0] ?? "";
  const lines = [`${host}:${pid}:${pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4`];
  for (const r of ranks) {
    lines.push(
      `${host}:${pid}:${pid + 32} [${r % 8}] NCCL INFO ncclCommInitRank comm 0x55${r}0000 rank ${r} nranks 16 cudaDev ${r % 8} nvmlDev ${r % 8} busId ${r + 1}8000 commId ${COMM} - Init COMPLETE`,
    );
  }
  const file = join(dir, `nccl-${host}-${pid}.log`);
  writeFileSync(file, `${lines.join("\n")}\n`);
  // A rank writes its own log: the file is its user's (a log only names processes of its owner).
  if (owner !== undefined) chownSync(file, owner.uid, owner.gid);
}

/** A log directory the agent follows, readable by nobody too. */
function logDir(): string {
  const d = tempDir("rw-ras-forge-logs-");
  chmodSync(d, 0o755);
  return d;
}

function flags(dir: string, port: number): string[] {
  return [
    "--no-collector.gpu",
    "--no-collector.infiniband",
    "--no-collector.gdr",
    "--no-collector.mtu",
    "--no-collector.job",
    `--collector.nccl.path=${dir}`,
    "--collector.nccl.hang-threshold=2s",
    `--collector.nccl.ras-addr=127.0.0.1:${port}`,
    "--collector.nccl.ras-settle=1ms", // the fake service is ready at once
    "--collector.nccl.ras-poll-known-defective", // its NCCL version is in the defect table
    "--collector.nccl.ras-interval=1s",
  ];
}

/** Queries with this result, whatever their reason. */
const queries = (t: string, result: string): number =>
  samplesOf(t, "ringwatch_nccl_ras_queries_total")
    .filter((l) => l.includes(`result="${result}"`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
const untrusted = (t: string): number => queries(t, "untrusted");
const ok = (t: string): number => queries(t, "ok");

/** Scrapes until `n` answers were refused, and returns that exposition. */
function afterRefusals(a: RunningAgent, n = REFUSALS): Promise<string> {
  return eventually(
    async () => {
      const t = await a.scrape();
      return untrusted(t) >= n ? t : undefined;
    },
    { timeoutMs: 30_000, what: `${n} refused RAS answers` },
  );
}

/** Nothing of the forged report is on /metrics. */
function expectNothingForged(t: string): void {
  expect(samplesOf(t, "ringwatch_nccl_hang_suspected").filter((l) => l.endsWith(" 1"))).toEqual([]);
  expect(samplesOf(t, "ringwatch_nccl_hang_evidence")).toEqual([]);
  expect(samplesOf(t, "ringwatch_nccl_ras_rank_behind")).toEqual([]);
  expect(samplesOf(t, "ringwatch_nccl_ras_dead_process")).toEqual([]);
  expect(samplesOf(t, "ringwatch_nccl_ras_collective_mismatch")).toEqual([]);
  expect(samplesOf(t, "ringwatch_nccl_ras_findings").filter((l) => !l.endsWith(" 0"))).toEqual([]);
  expect(sample(t, "ringwatch_nccl_ras_last_report_timestamp_seconds") ?? 0).toBe(0); // never a report
  expect(samplesOf(t, "ringwatch_nccl_rank_behind")).toEqual([]);
  expect(ok(t)).toBe(0);
  expect(sample(t, "ringwatch_nccl_ras_monitor_subscribed")).toBe(0);
}

/** Scrapes until the forged (or believed) report's hang of COMM is on /metrics, and returns that exposition. */
function rasHang(a: RunningAgent): Promise<string> {
  return eventually(
    async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1 ? t : undefined;
    },
    { timeoutMs: 30_000, what: "the RAS hang" },
  );
}

/** The agent with the job collector on, its nvidia-smi listing `pid` as a GPU compute process. */
function startWithGpuProcess(port: number, pid: number): Promise<RunningAgent> {
  const apps = join(tempDir("rw-ras-forge-apps-"), "apps.csv");
  // nvidia-smi --query-compute-apps=pid,gpu_uuid,gpu_bus_id --format=csv,noheader (collectors/job/compute-apps.ts).
  writeFileSync(apps, `${pid}, GPU-6e6b4b8f-1c55-7b8e-0b4d-2b5e0e6a9f10, 00000000:18:00.0\n`);
  const withJob = flags(logDir(), port).filter((f) => f !== "--no-collector.job");
  return startAgent(
    [...withJob, `--collector.job.nvidia-smi=${join(fakesDir, "nvidia-smi")}`, "--collector.job.pod-resources-socket=", "--collector.job.interval=1s"],
    { FAKE_NVSMI_APPS: apps },
  );
}

const refusalLines = (a: RunningAgent): string[] => a.logs().filter((l) => l.includes("ignored, not this node's evidence"));

describe.skipIf(!isRoot)("NCCL RAS: only a rank's socket is believed (agent as root)", () => {
  it("no job on this node, a listener run as nobody: nothing forged is published, every answer is counted, one log line", async () => {
    const { s } = await rasAs(NOBODY, process.pid);
    agent = await startAgent(flags(logDir(), s.port));
    const t = await afterRefusals(agent);
    expectNothingForged(t);
    expect(samplesOf(t, "ringwatch_nccl_rank_info").filter((l) => l.includes(COMM))).toEqual([]);
    // Refused at the greeting: the report was never even asked for, nor a monitor subscription.
    expect(s.commands().length).toBeGreaterThanOrEqual(REFUSALS);
    expect(s.commands().filter((c) => c !== "CLIENT PROTOCOL 2")).toEqual([]);
    const lines = refusalLines(agent);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
    expect(line.level).toBe(40);
    expect(line.msg).toContain("its socket belongs to uid 65534, not root, and the followed logs name no live NCCL rank process on this node");
    expect(line.socket_uid).toBe(65534);
  });

  it("a job's ranks known here, a listener of another user naming their pids: refused all the same", async () => {
    const dir = logDir();
    // Two live ranks of COMM here, healthy, writing what NCCL writes (test/fakes/nccl-rank).
    for (const r of [0, 1])
      children.push(
        spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), "16", COMM], {
          env: { ...process.env, FAKE_RANK_PERIOD_MS: "200" },
          stdio: "ignore",
        }),
      );
    const { s } = await rasAs(NOBODY, children[0]?.pid);
    agent = await startAgent(flags(dir, s.port));
    const a = agent;
    // Both ranks known: COMM watched (its hang_suspected series) and a series for each rank process.
    const pids = children.map((c) => `pid="${c.pid}"`);
    await eventually(async () => {
      const t = await a.scrape();
      const processes = samplesOf(t, "ringwatch_nccl_process_transport_info");
      return sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 0 &&
        processes.length === 2 &&
        pids.every((p) => processes.some((l) => l.includes(p)))
        ? true
        : undefined;
    }, 15_000);
    const t = await afterRefusals(a);
    expectNothingForged(t);
    // The logs' own view stands: COMM is known, and not hung.
    expect(sample(t, `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`)).toBe(0);
    const lines = refusalLines(a);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      "its socket (uid 65534) is held by none of the 2 live NCCL rank processes the followed logs name on this node, nor by their user",
    );
  });

  it("the same report from a listener that is a known rank's process (run as nobody): believed", async () => {
    const dir = logDir();
    const { s, pid } = await rasAs(NOBODY);
    rankLog(dir, pid, [0, 1, 2, 3, 4, 5, 6, 7], NOBODY);
    agent = await startAgent(flags(dir, s.port));
    const a = agent;
    const hung = await rasHang(a);
    // Believed from the first query (asked once the logs' heads were read): no answer was refused.
    expect(untrusted(hung)).toBe(0);
    expect(ok(hung)).toBeGreaterThanOrEqual(2);
    expect(sample(hung, `ringwatch_nccl_hang_evidence{comm_id="${COMM}",source="ras"}`)).toBe(1);
    expect(samplesOf(hung, "ringwatch_nccl_ras_rank_behind")).toEqual([
      `ringwatch_nccl_ras_rank_behind{comm_id="${COMM}",rank="12",process="10.0.0.2:5152"} 1`,
      `ringwatch_nccl_ras_rank_behind{comm_id="${COMM}",rank="15",process="10.0.0.2:5155"} 1`,
    ]);
    expect(samplesOf(hung, "ringwatch_nccl_ras_dead_process")).toEqual(['ringwatch_nccl_ras_dead_process{process="10.0.0.2:5155"} 1']);
    const answers = a.logs().find((l) => l.includes("answers ("));
    expect(JSON.parse(answers ?? "{}")).toMatchObject({ socket_owner: `held by rank process ${pid}` });
    expect(refusalLines(a)).toEqual([]);
    await eventually(async () => (sample(await a.scrape(), "ringwatch_nccl_ras_monitor_subscribed") === 1 ? true : undefined), 10_000);
    expect(s.commands()).toContain("MONITOR lifecycle");
  });
});

describe.skipIf(!isRoot)("NCCL RAS: a log names only its owner's processes (agent as root)", () => {
  it("another user's log naming the listener's pid as a rank: refused (the listener is not that log's user's)", async () => {
    const dir = logDir();
    const { s, pid } = await rasAs(JOB_USER);
    rankLog(dir, pid, [0, 1, 2, 3, 4, 5, 6, 7], OTHER_USER);
    agent = await startAgent(flags(dir, s.port));
    const t = await afterRefusals(agent);
    expectNothingForged(t);
  });
});

describe.skipIf(!isRoot)("NCCL RAS: a GPU compute process's socket is the job's, with no log (agent as root)", () => {
  it("no NCCL log here, the listener (another user's) is a process nvidia-smi lists on a GPU: believed", async () => {
    const { s, pid } = await rasAs(JOB_USER);
    agent = await startWithGpuProcess(s.port, pid);
    const a = agent;
    const hung = await rasHang(a);
    expect(samplesOf(hung, "ringwatch_nccl_ras_dead_process")).toEqual(['ringwatch_nccl_ras_dead_process{process="10.0.0.2:5155"} 1']);
    const answers = a.logs().find((l) => l.includes("answers ("));
    expect(JSON.parse(answers ?? "{}")).toMatchObject({ socket_owner: `held by rank process ${pid}` });
  });

  it("the same, but nvidia-smi lists another process: refused", async () => {
    const { s } = await rasAs(JOB_USER);
    agent = await startWithGpuProcess(s.port, process.pid);
    const t = await afterRefusals(agent);
    expectNothingForged(t);
  });
});

describe.skipIf(!isRoot)("NCCL RAS: the uid check where fds cannot be read (agent as nobody)", () => {
  /** The agent as nobody, from a copy every user can read. */
  function startAsNobody(dir: string, port: number): Promise<RunningAgent> {
    staged ??= stageBuild("rw-ras-forge-agent-");
    return startAgent(flags(dir, port), {}, 15_000, { user: NOBODY, main: staged.agentMain });
  }

  it("a known rank's process of another user listens: believed on its uid (the weaker check)", async () => {
    const dir = logDir();
    const { s, pid } = await rasAs(JOB_USER);
    rankLog(dir, pid, [0, 1, 2, 3, 4, 5, 6, 7], JOB_USER);
    agent = await startAsNobody(dir, s.port);
    const a = agent;
    const hung = await rasHang(a);
    expect(untrusted(hung)).toBe(0);
    expect(samplesOf(hung, "ringwatch_nccl_ras_dead_process")).toEqual(['ringwatch_nccl_ras_dead_process{process="10.0.0.2:5155"} 1']);
    const answers = a.logs().find((l) => l.includes("answers ("));
    expect(JSON.parse(answers ?? "{}")).toMatchObject({ socket_owner: `owned by uid 65533, the user of rank process ${pid} (whose sockets cannot be read)` });
  });

  it("the known rank is another user's than the listener's: refused", async () => {
    const dir = logDir();
    // A rank of the job (its log here), as the job's user; the listener is another local user's.
    const rank = spawn(process.execPath, ["-e", "setInterval(() => {}, 60000)"], { uid: JOB_USER.uid, gid: JOB_USER.gid, stdio: "ignore", cwd: "/" });
    children.push(rank);
    rankLog(dir, rank.pid ?? -1, [0, 1, 2, 3, 4, 5, 6, 7], JOB_USER);
    const { s } = await rasAs(OTHER_USER, rank.pid);
    agent = await startAsNobody(dir, s.port);
    const t = await afterRefusals(agent);
    expectNothingForged(t);
    expect(s.commands().filter((c) => c !== "CLIENT PROTOCOL 2")).toEqual([]);
    const lines = refusalLines(agent);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("its socket (uid 65532) is held by none of the 1 live NCCL rank process the followed logs name on this node, nor by their user");
  });
});
