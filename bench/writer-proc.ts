/** Starts nccl-writer.js as a child process and collects what it wrote. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import type { Written } from "./nccl-job.js";

export interface WriterProcess {
  pid: number;
  /** Resolves when the writer is done (its seconds elapsed, or stop() was called). */
  done: Promise<Written>;
  /** SIGTERM: it stops writing, reports and exits. */
  stop(): Promise<Written>;
}

export function startWriter(dir: string, linesPerSecond: number, seconds: number): WriterProcess {
  const child = spawn(process.execPath, [join(import.meta.dirname, "nccl-writer.js"), dir, String(linesPerSecond), String(seconds)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  const done = new Promise<Written>((resolve, reject) => {
    child.once("exit", (code) => {
      try {
        resolve(JSON.parse(out) as Written);
      } catch {
        reject(new Error(`nccl writer exited with ${code} and printed ${JSON.stringify(out)}`));
      }
    });
  });
  return {
    pid: child.pid ?? 0,
    done,
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return done;
    },
  };
}
