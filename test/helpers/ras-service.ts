/**
 * Starts test/fakes/nccl-ras (a fake NCCL RAS service in its own process) on a free local port,
 * serving a report file, and records the connections and commands it received.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakesDir } from "./agent-process.js";

export type RasMode = "ok" | "silent" | "not-ras" | "refuse-timeout" | "close-early" | "trickle";

export interface RasService {
  child: ChildProcess;
  port: number;
  /** Commands received so far, in order, without line ends. */
  commands(): string[];
  connections(): number;
  stop(): Promise<void>;
}

/** Writes `report` to <dir>/ras-report.txt and serves it. */
export async function startRasService(dir: string, report: string, mode: RasMode = "ok", timeoutMs = 10_000): Promise<RasService> {
  const file = join(dir, "ras-report.txt");
  writeFileSync(file, report);
  const child = spawn(process.execPath, [join(fakesDir, "nccl-ras"), file], { env: { ...process.env, FAKE_RAS_MODE: mode }, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  let out = "";
  child.stderr.setEncoding("utf8");
  child.stdout.setEncoding("utf8");
  child.stderr.on("data", (d: string) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nccl-ras did not start in ${timeoutMs} ms: ${err}`)), timeoutMs);
    child.stdout.on("data", (d: string) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nccl-ras exited with ${String(code)}: ${err}`));
    });
  });
  const lines = (): string[] => err.split("\n");
  return {
    child,
    port,
    commands: () => lines().filter((l) => l.startsWith("cmd ")).map((l) => l.slice(4)),
    connections: () => lines().filter((l) => l === "conn").length,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
