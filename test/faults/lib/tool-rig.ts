/**
 * The built agent with every tool pointed at the faulty fakes (test/fakes/faulty), which behave
 * like the ordinary fakes unless a FAULT_* variable tells one of them to misbehave. gdr runs lsmod
 * (its --path.procfs has no modules file), infiniband runs ibstat + perfquery (source=tools, one
 * HCA so one perfquery per poll), and nccl follows a directory the rig appends simulated lines to.
 *
 * The time limit of a poll and of each tool it runs is long (RIG_TIMEOUT_S), and so is the silence
 * after which nvidia-smi dmon is killed (3 intervals of --collector.gpu.interval, counted from its
 * start): on a machine busy with other work a fake (a node script) can take seconds just to start,
 * and a tool killed before it has started shows the timeout, not the fault the test provokes. The
 * misbehaving tools say when they have started (FAULT_STARTED, misbehave.mjs), and the tests wait
 * for that, not for a time.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakesDir, processesWithEnv, startAgent, type RunningAgent } from "../../helpers/agent-process.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { FileSink, Scenario } from "../../sim/index.js";

export const FAULTY_DIR = join(fakesDir, "faulty");
const tool = (rel: string): string => join(fixturesDir, "tools", rel);

/** The ways a tool misbehaves (test/fakes/faulty/misbehave.mjs). */
export const FAULT_MODES = ["hang", "hang-hard", "crash", "signal", "midline", "random", "nuls", "header-junk", "flood", "flood-noline"] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** Which tools misbehave: set A (dmon, ibstat, lsmod, ip) or set B (--query-gpu, perfquery). */
export type FaultSet = "A" | "B";
export const FAULT_VARS: Record<FaultSet, string[]> = {
  A: ["FAULT_NVSMI_DMON", "FAULT_IBSTAT", "FAULT_LSMOD", "FAULT_IP"],
  B: ["FAULT_NVSMI_QUERY", "FAULT_PERFQUERY"],
};
/** The same tools as misbehave.mjs names them in its FAULT_STARTED lines ("nvidia-smi": --query-gpu). */
export const FAULT_TOOLS: Record<FaultSet, string[]> = {
  A: ["nvidia-smi dmon", "ibstat", "lsmod", "ip"],
  B: ["nvidia-smi", "perfquery"],
};

/**
 * --collector.timeout of the rig: a poll, lsmod, ip and --query-gpu are killed after 15 s,
 * ibstat and perfquery after a third of it (5 s). Long enough for a fake to start on a busy
 * machine; the stuck tools (tools-stuck) are still killed by it, and the tests wait until they
 * have been (lib/tool-faults.ts), however long that takes.
 */
export const RIG_TIMEOUT_S = 15;

export interface Rig {
  dir: string;
  procfs: string;
  sysfs: string;
  ncclDir: string;
  remove(): void;
}

export function makeRig(): Rig {
  const dir = mkdtempSync(join(tmpdir(), "rw-faults-"));
  const procfs = join(dir, "proc"); // no modules file: gdr runs lsmod
  const sysfs = join(dir, "sys"); // no class/infiniband
  const ncclDir = join(dir, "nccl");
  for (const d of [procfs, sysfs, ncclDir]) mkdirSync(d);
  return { dir, procfs, sysfs, ncclDir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function rigFlags(rig: Rig): string[] {
  return [
    `--collector.gpu.nvidia-smi=${join(FAULTY_DIR, "nvidia-smi")}`,
    "--collector.gpu.interval=3s", // a dmon without a sample for 9 s is killed
    "--collector.infiniband.source=tools",
    `--collector.infiniband.ibstat=${join(FAULTY_DIR, "ibstat")}`,
    `--collector.infiniband.perfquery=${join(FAULTY_DIR, "perfquery")}`,
    "--collector.infiniband.device-include=^mlx5_0$",
    `--path.sysfs=${rig.sysfs}`,
    `--path.procfs=${rig.procfs}`,
    `--collector.gdr.lsmod=${join(FAULTY_DIR, "lsmod")}`,
    `--collector.mtu.ip=${join(FAULTY_DIR, "ip")}`,
    `--collector.nccl.path=${rig.ncclDir}`,
    "--collector.nccl.check-pids=false",
    "--collector.interval=2s",
    `--collector.timeout=${RIG_TIMEOUT_S}s`,
  ];
}

/** Real captures for the ordinary behaviour: H100 dmon + query, 9-CA H100 ibstat, perfquery, lsmod, ip -j. */
export function rigEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    FAKE_NVSMI_DMON: tool("nvidia_smi_dmon/06-nvgpuexp-h100-80gb-590.48.01-load.txt"),
    FAKE_NVSMI_QUERY: tool("nvidia_smi_query_csv/04-nvgpuexp-h100-80gb-590.48.01-allfields.txt"),
    FAKE_NVSMI_PACE_MS: "250",
    FAKE_IBSTAT: tool("ibstat/04-gpud-h100-9ca-8ib400-1eth200-spaces.txt"),
    FAKE_PERFQUERY: tool("perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt"),
    FAKE_LSMOD: tool("lsmod/03-gpud-pr39-lsmod-peermem-h100.txt"),
    FAKE_IP_JSON: tool("ip_link/90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt"),
    ...extra,
  };
}

let tokens = 0;

/** A KEY=value no other process carries. */
export function newToken(): string {
  return `RINGWATCH_FAULT_TOKEN=${process.pid}-${Date.now()}-${++tokens}`;
}

export function tokenEnv(token: string): NodeJS.ProcessEnv {
  const eq = token.indexOf("=");
  return { [token.slice(0, eq)]: token.slice(eq + 1) };
}

/** SIGKILLs every process that carries `token` (an agent and everything it started): test clean-up. */
export async function killTokened(token: string): Promise<void> {
  for (const pid of await processesWithEnv(token)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** A misbehaving tool that started (a FAULT_STARTED line of misbehave.mjs). */
export interface StartedRun {
  pid: number;
  tool: string;
  mode: string;
  args: string[];
}

/** The runs logged in a FAULT_STARTED file so far ([] when none has started yet). */
export function startedRuns(file: string): StartedRun[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8").split("\n");
  lines.pop(); // "" after the last newline, or a line still being appended
  return lines.map((l) => JSON.parse(l) as StartedRun);
}

let agents = 0;

/**
 * Starts an agent on the rig; `set`/`mode` make those tools misbehave. `token` is a KEY=value
 * only this agent and its children (and theirs) carry in their environment, to find leftovers;
 * `started` the file its misbehaving tools append to once they have started (startedRuns).
 */
export async function startRigAgent(rig: Rig, set?: FaultSet, mode?: FaultMode): Promise<{ agent: RunningAgent; token: string; started: string }> {
  const token = newToken();
  const started = join(rig.dir, `started-${++agents}.jsonl`);
  const env: NodeJS.ProcessEnv = { ...tokenEnv(token), FAULT_STARTED: started };
  if (set && mode) for (const v of FAULT_VARS[set]) env[v] = mode;
  try {
    return { agent: await startAgent(rigFlags(rig), rigEnv(env), 60_000), token, started };
  } catch (err) {
    await killTokened(token); // startAgent leaves a slow agent running when it gives up on it
    throw err;
  }
}

/** A 2-rank simulated job appending to rig.ncclDir: every line it writes is counted. */
export class NcclWriter {
  private readonly sim = new Scenario({ nodes: ["fault-node"], ranksPerNode: 2, seed: 11 });
  private readonly sink: FileSink;
  constructor(dir: string) {
    this.sink = new FileSink(dir, this.sim, { stderr: false });
  }
  get lines(): number {
    return this.sink.lines;
  }
  /** Appends `ms` of simulated job time. */
  async advance(ms: number): Promise<void> {
    await this.sink.write(this.sim.advance(ms));
  }
}
