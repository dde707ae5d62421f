/**
 * The built agent with every tool pointed at the faulty fakes (test/fakes/faulty), which behave
 * like the ordinary fakes unless a FAULT_* variable tells one of them to misbehave. gdr runs lsmod
 * (its --path.procfs has no modules file), infiniband runs ibstat + perfquery (source=tools, one
 * HCA so one perfquery per poll), and nccl follows a directory the rig appends simulated lines to.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
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
    "--collector.gpu.interval=1s",
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
    "--collector.timeout=2s",
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

/**
 * Starts an agent on the rig; `set`/`mode` make those tools misbehave. `token` is a KEY=value
 * only this agent and its children (and theirs) carry in their environment, to find leftovers.
 */
export async function startRigAgent(rig: Rig, set?: FaultSet, mode?: FaultMode): Promise<{ agent: RunningAgent; token: string }> {
  const token = newToken();
  const env: NodeJS.ProcessEnv = { ...tokenEnv(token) };
  if (set && mode) for (const v of FAULT_VARS[set]) env[v] = mode;
  try {
    return { agent: await startAgent(rigFlags(rig), rigEnv(env), 30_000), token };
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
