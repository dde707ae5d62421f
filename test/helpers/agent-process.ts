/**
 * Starts the real, built agent (dist/agent/main.js) as a child process, the way users run it,
 * and talks to it over HTTP.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { followAgentOutput } from "./agent-output.js";
import { runProcess, type ProcessResult } from "./run-process.js";

export { eventually } from "./eventually.js";
export { sample, samplesOf } from "./exposition.js";

export const repoRoot = resolve(import.meta.dirname, "../..");
export const agentMain = resolve(repoRoot, "dist/agent/main.js");
export const fakesDir = resolve(repoRoot, "test/fakes");

export interface RunningAgent {
  child: ChildProcess;
  port: number;
  url: string;
  /** Every stdout line so far (pino JSON). */
  logs: () => string[];
  stderr: () => string;
  scrape(path?: string): Promise<string>;
  /** SIGTERM; resolves with exit code and milliseconds taken. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

export interface StartOptions {
  /** Run the agent as another user (uid/gid; the caller must be root), e.g. nobody (65534). */
  user?: { uid: number; gid: number };
  /** The agent's main.js (default: this checkout's dist/agent/main.js), e.g. a staged copy's (staged-build.ts). */
  main?: string;
  /** An executable to run instead of node with main.js: the single executable (test/packaging/release.test.ts). */
  executable?: string;
}

export async function startAgent(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 10_000, opts: StartOptions = {}): Promise<RunningAgent> {
  const { user, main = agentMain, executable } = opts;
  // The kmsg collector reads this machine's real kernel log; a test that does not set it up keeps no
  // read position (the default path, /var/lib/ringwatch, belongs to an installed agent).
  const kmsg = args.some((a) => a.includes("collector.kmsg")) ? [] : ["--collector.kmsg.state-file="];
  const argv = ["--web.listen-address=127.0.0.1:0", ...kmsg, ...args];
  const child = spawn(executable ?? process.execPath, executable === undefined ? [main, ...argv] : argv, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  const out = followAgentOutput(child, timeoutMs);
  const { port } = await out.listening;
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    url,
    logs: () => out.lines.slice(),
    stderr: () => out.stderr(),
    async scrape(path = "/metrics"): Promise<string> {
      const res = await fetch(url + path);
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      return res.text();
    },
    stop(signal: NodeJS.Signals = "SIGTERM") {
      const t0 = Date.now();
      return new Promise((resolveStop) => {
        if (child.exitCode !== null) return resolveStop({ code: child.exitCode, ms: 0 });
        child.once("exit", (code) => resolveStop({ code, ms: Date.now() - t0 }));
        child.kill(signal);
      });
    },
  };
}

/** Runs the agent to completion (e.g. --once, bad flags). */
export function runAgent(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<ProcessResult> {
  return runProcess(process.execPath, [agentMain, ...args], { env: { ...process.env, ...env }, timeoutMs, what: "the agent" });
}

/** PIDs of live processes whose environment holds `KEY=value` (reads /proc): finds a test's own children even after they were orphaned. */
export async function processesWithEnv(entry: string): Promise<number[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const out: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const env = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (env.includes(entry) && state !== "Z") out.push(Number(pid));
    } catch {
      // process gone, or not ours to read
    }
  }
  return out;
}

/** PIDs of live processes whose command line contains `needle` (reads /proc). */
export async function processesMatching(needle: string): Promise<number[]> {
  const { readdir, readFile } = await import("node:fs/promises");
  const out: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = (await readFile(`/proc/${entry}/cmdline`, "utf8")).replace(/\0/g, " ");
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (cmd.includes(needle) && state !== "Z") out.push(Number(entry));
    } catch {
      // process gone
    }
  }
  return out;
}
