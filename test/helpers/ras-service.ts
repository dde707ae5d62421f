/**
 * Starts test/fakes/nccl-ras (a fake NCCL RAS service in its own process) on a free local port,
 * serving a report file, and records the connections and commands it received.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
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

/**
 * For a test file: a function that starts a fake RAS service serving `report` from a temporary
 * directory. Every service it started is stopped, and its directory removed, after each test.
 */
export function rasServices(): (report: string, mode?: RasMode) => Promise<RasService> {
  const started: RasService[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return async (report, mode = "ok") => {
    const dir = mkdtempSync(join(tmpdir(), "rw-ras-"));
    dirs.push(dir);
    const s = await startRasService(dir, report, mode);
    started.push(s);
    return s;
  };
}

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const addr = srv.address();
  await new Promise<void>((r) => srv.close(() => r()));
  if (addr === null || typeof addr === "string") throw new Error("no port");
  return addr.port;
}
