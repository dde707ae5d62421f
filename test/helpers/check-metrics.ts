/**
 * `promtool check metrics` on a scrape: the exposition goes to its standard input, the only way it
 * reads one; exit 0 when it parses and passes every lint (3 on a lint problem, 1 on a parse error).
 */
import { spawn } from "node:child_process";
import type { ProcessResult } from "./run-process.js";

export function promtoolCheckMetrics(promtool: string, exposition: string, timeoutMs = 30_000): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`promtool check metrics did not finish in ${timeoutMs} ms`));
    }, timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(exposition);
  });
}
