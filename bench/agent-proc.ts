/**
 * The built agent (dist/agent/main.js) as a child process, started the way users start it, with
 * the time from spawn() to its "ringwatch listening" log line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { followAgentOutput } from "../test/helpers/agent-output.js";
import { SHIPPED_UV_THREADPOOL_SIZE } from "./config.js";
import { agentMain } from "./paths.js";

export interface BenchAgent {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** performance.now() just before spawn(). */
  spawnedAt: number;
  /** ms from spawn() to the "ringwatch listening" line. */
  listeningMs: number;
  logs(): string[];
  /** SIGTERM, then SIGKILL after 8 s; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startBenchAgent(args: string[], env: NodeJS.ProcessEnv, nodeArgs: string[] = [], timeoutMs = 15_000): Promise<BenchAgent> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, agentMain, "--web.listen-address=127.0.0.1:0", ...args], {
    // As the unit and the image run it (bench/config.ts), unless the caller's environment says otherwise.
    env: { UV_THREADPOOL_SIZE: SHIPPED_UV_THREADPOOL_SIZE, ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = followAgentOutput(child, timeoutMs, 1000);
  const { port, at } = await out.listening;
  return {
    child,
    pid: child.pid ?? 0,
    port,
    url: `http://127.0.0.1:${port}`,
    spawnedAt,
    listeningMs: at - spawnedAt,
    logs: () => out.lines.slice(),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        const kill = setTimeout(() => child.kill("SIGKILL"), 8000);
        child.once("exit", (code) => {
          clearTimeout(kill);
          resolve(code);
        });
        child.kill("SIGTERM");
      }),
  };
}
