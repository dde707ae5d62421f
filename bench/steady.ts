/**
 * Steady-state cost: the real agent (nccl collector only) following 16 files that get 20,000 COLL
 * lines/s in total, measured from /proc/<pid>/stat (user+system CPU) and /proc/<pid>/status (RSS).
 * It also checks that every line written was read (ringwatch_nccl_log_lines_total).
 */
import { spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { collLineRate } from "../test/sim/index.js";

export interface SteadyResult {
  linesPerSecond: number;
  seconds: number;
  linesWritten: number;
  linesRead: number;
  cpuPercentOfOneCore: number;
  rssMB: number;
}

const CLK_TCK = 100;

async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
}

async function rssMB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function runSteady(linesPerSecond = 20_000, seconds = 20): Promise<SteadyResult> {
  const dir = join(tmpdir(), `ringwatch-bench-steady-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  const main = resolve(import.meta.dirname, "../../dist/agent/main.js");
  const agent = spawn(
    process.execPath,
    [main, "--web.listen-address=127.0.0.1:0", "--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", `--collector.nccl.path=${dir}`, "--collector.nccl.polling=false", "--log.level=warn"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  agent.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const pid = agent.pid ?? 0;
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const writing = collLineRate(dir, { files: 16, linesPerSecond, seconds: seconds + 3 });
    await new Promise((r) => setTimeout(r, 3000)); // warm-up: files created, init blocks read
    const c0 = await cpuTicks(pid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const c1 = await cpuTicks(pid);
    const elapsed = (performance.now() - t0) / 1000;
    const rss = await rssMB(pid);
    const written = await writing;
    await new Promise((r) => setTimeout(r, 2000)); // let the follower catch up
    const port = await portOf(pid);
    const text = port ? await (await fetch(`http://127.0.0.1:${port}/metrics`)).text() : "";
    const m = /^ringwatch_nccl_log_lines_total (\d+)/m.exec(text);
    return {
      linesPerSecond,
      seconds: elapsed,
      linesWritten: written.lines,
      linesRead: m ? Number(m[1]) : NaN,
      cpuPercentOfOneCore: ((c1 - c0) / CLK_TCK / elapsed) * 100,
      rssMB: rss,
    };
  } finally {
    agent.kill("SIGTERM");
    await new Promise((r) => agent.once("exit", r));
    await rm(dir, { recursive: true, force: true });
    void out;
  }
}

/** The agent logs its port at info level, which --log.level=warn hides: find it from /proc/net/tcp. */
async function portOf(pid: number): Promise<number | undefined> {
  const { readdir, readlink } = await import("node:fs/promises");
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const l = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(l);
    if (m?.[1]) inodes.add(m[1]);
  }
  const tcp = await readFile("/proc/net/tcp", "utf8");
  for (const line of tcp.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === "0A" && f[9] && inodes.has(f[9])) return parseInt(f[1]?.split(":")[1] ?? "", 16);
  }
  return undefined;
}

if (process.argv[1]?.endsWith("steady.js")) {
  console.log(JSON.stringify(await runSteady(Number(process.argv[2] ?? 20000), Number(process.argv[3] ?? 20)), null, 2));
}
