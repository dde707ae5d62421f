/**
 * Debian's prometheus-node-exporter as the reference exporter: started on 127.0.0.1 on a free
 * port with its default collectors (plus any extra flags, e.g. --path.sysfs), ready once / answers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";

export interface NodeExporter {
  url: string;
  pid: number;
  version: string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (bound to 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export function nodeExporterVersion(bin: string): Promise<string | undefined> {
  if (!existsSync(bin)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const c = spawn(bin, ["--version"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    c.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    c.stderr.setEncoding("utf8").on("data", (d: string) => (out += d));
    c.once("error", () => resolve(undefined));
    c.once("exit", () => resolve(/version (\S+)/.exec(out)?.[1]));
  });
}

async function ready(url: string, child: ChildProcess, timeoutMs: number, log: () => string): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node_exporter exited with ${child.exitCode}: ${log().slice(-2000)}`);
    try {
      const r = await fetch(`${url}/`);
      await r.arrayBuffer();
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`node_exporter not ready after ${timeoutMs} ms: ${log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startNodeExporter(bin: string, extraArgs: string[] = []): Promise<NodeExporter> {
  const version = (await nodeExporterVersion(bin)) ?? "?";
  const port = await freePort();
  const child = spawn(bin, [`--web.listen-address=127.0.0.1:${port}`, ...extraArgs], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.once("error", (err) => (log += `\n${err.message}`));
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (log = (log + d).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  await ready(url, child, 10_000, () => log);
  return {
    url,
    pid: child.pid ?? 0,
    version,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
