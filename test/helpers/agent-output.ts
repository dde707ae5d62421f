/**
 * Follows a started agent's output: its stdout lines (pino JSON) and stderr, and the moment it
 * logs "ringwatch listening" with its port. Shared by the tests (agent-process.ts) and the bench.
 */
import type { ChildProcess } from "node:child_process";

export interface AgentOutput {
  /** stdout lines so far (the first maxLines), kept up to date after listening too. */
  lines: string[];
  stderr(): string;
  /** The port and performance.now() at the "ringwatch listening" line; rejects on timeout or exit. */
  listening: Promise<{ port: number; at: number }>;
}

export function followAgentOutput(child: ChildProcess, timeoutMs: number, maxLines = Infinity): AgentOutput {
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdout?.setEncoding("utf8");
  const listening = new Promise<{ port: number; at: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent did not start in ${timeoutMs} ms; stderr: ${stderr}; logs: ${lines.join("\n")}`)), timeoutMs);
    child.stdout?.on("data", (d: string) => {
      partial += d;
      let nl;
      while ((nl = partial.indexOf("\n")) >= 0) {
        const line = partial.slice(0, nl);
        partial = partial.slice(nl + 1);
        if (lines.length < maxLines) lines.push(line);
        if (line.includes('"ringwatch listening"')) {
          clearTimeout(timer);
          resolve({ port: (JSON.parse(line) as { port: number }).port, at: performance.now() });
        }
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code} before listening; stderr: ${stderr}; logs: ${lines.join("\n")}`));
    });
  });
  return { lines, stderr: () => stderr, listening };
}
