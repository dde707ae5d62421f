/**
 * Runs a command to completion and collects its output: the one way the tests, the bench and the
 * staged-build helper run a child that must exit (no vitest import, so bench/ can use it too).
 */
import { spawn } from "node:child_process";

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as another user (the caller must be root). */
  user?: { uid: number; gid: number };
  timeoutMs?: number;
  /** Names the run in the timeout error. */
  what?: string;
  /** Written to its standard input, which is then closed (default: closed at once). */
  stdin?: string;
}

/** `command args`: resolves when it exits; killed (SIGKILL) and rejected after timeoutMs (30 s). */
export function runProcess(command: string, args: readonly string[], o: RunOptions = {}): Promise<ProcessResult> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: o.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
      ...(o.cwd !== undefined ? { cwd: o.cwd } : {}),
      ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${o.what ?? command} did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // No input: its standard input is closed at once (end of file), as "ignore" would give.
    child.stdin.on("error", () => undefined); // a child that exits without reading it (EPIPE)
    child.stdin.end(o.stdin ?? "");
  });
}
