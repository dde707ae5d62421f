/**
 * A process that cannot be started is a failed run, reported to the caller, never an error that
 * ends the agent. collectors/exec.ts, built, in a process of its own (launch-limits.mjs) whose
 * descriptors are all in use (EMFILE: Node gives up on the child before its stdio exists and emits
 * 'error' on the next tick, before execa listens for it), or which may not start one more process
 * (EAGAIN: RLIMIT_NPROC, as a user of its own, which the limit binds where root is exempt).
 * Needs `npm run build`.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { repoRoot } from "../helpers/agent-process.js";
import { isRoot, stageBuild } from "../helpers/staged-build.js";

const hasPrlimit = spawnSync("prlimit", ["--version"]).status === 0;
if (!hasPrlimit && process.env.CI) throw new Error("prlimit (util-linux) is missing; CI needs it for the open-file limit tests");

describe.skipIf(!hasPrlimit)("starting a tool with no file descriptor left", () => {
  it("run() and stream() report EMFILE as a failure to start, and the same tool starts once descriptors are free", () => {
    const script = join(import.meta.dirname, "launch-limits.mjs");
    // Room for Node's ESM loader, which reads a module graph's files many at a time (at 64, loading
    // execa itself could hit EMFILE); the script then uses up whatever is left.
    const r = spawnSync("prlimit", ["--nofile=1024:1024", "--", process.execPath, script, join(repoRoot, "dist/collectors/exec.js"), "/bin/true", "fds"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      held: number;
      run: { ok: boolean; notFound: boolean; exitCode?: number; problem: string };
      streamed: { notFound: boolean; exitCode?: number; problem: string; lines: number; pid?: number };
      again: { ok: boolean; problem?: string };
    };
    expect(out.held).toBeGreaterThan(0); // the descriptors were really used up
    // Counted as an error, not as a missing tool.
    expect(out.run).toMatchObject({ ok: false, notFound: false, problem: "/bin/true: cannot start: EMFILE (too many open files in the agent)" });
    expect(out.run.exitCode).toBeUndefined();
    expect(out.streamed).toMatchObject({ notFound: false, problem: "/bin/true: cannot start: EMFILE (too many open files in the agent)", lines: 0 });
    expect(out.streamed.pid).toBeUndefined();
    expect(out.again).toEqual({ ok: true });
  });
});

/** A uid no other process runs as: RLIMIT_NPROC counts every task of the user. */
const PROC_USER = { uid: 4251, gid: 4251 };
/** The script's limit of processes (its own threads count). */
const NPROC = 64;

function threadsOf(pid: number): number {
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
}

describe.runIf(isRoot && hasPrlimit)("starting a tool with no process left to the agent's user (non-root)", () => {
  it("run() and stream() report EAGAIN as a failure to start, and the same tool starts once processes are free", async () => {
    // A world-readable copy of the build and the script: the checkout may not be readable by others.
    const staged = stageBuild("rw-eagain-");
    const fillers: ChildProcess[] = [];
    onTestFinished(() => {
      for (const f of fillers) f.kill("SIGKILL");
      staged.remove();
    });
    const script = join(staged.root, "launch-limits.mjs");
    copyFileSync(join(import.meta.dirname, "launch-limits.mjs"), script);
    chmodSync(script, 0o644);
    // prlimit lowers its own soft limit (as that user, which it may) and runs node under it.
    const child = spawn("prlimit", [`--nproc=${NPROC}:`, "--", process.execPath, script, join(staged.root, "dist/collectors/exec.js"), "/bin/true", "procs"], {
      ...PROC_USER,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    const said = (word: string): Promise<void> =>
      new Promise((resolve) => {
        const look = (): void => {
          if (!out.includes(`${word}\n`)) return;
          child.stdout.off("data", look);
          resolve();
        };
        child.stdout.on("data", look);
        look();
      });
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    await said("ready");
    // The user's other processes, started by root (which the limit does not bind), up to the limit.
    const room = NPROC - threadsOf(child.pid as number);
    for (let i = 0; i < room; i++) fillers.push(spawn("sleep", ["600"], { ...PROC_USER, stdio: "ignore" }));
    await Promise.all(fillers.map((f) => new Promise((resolve) => f.once("spawn", resolve))));
    child.stdin.write("full\n");
    await said("limited");
    await Promise.all(
      fillers.map((f) => {
        const gone = new Promise((resolve) => f.once("exit", resolve));
        f.kill("SIGKILL");
        return gone;
      }),
    );
    child.stdin.end("go\n");
    const code = await exited;
    expect(err).toBe("");
    expect(code).toBe(0);
    const result = JSON.parse(out.slice(out.indexOf("limited\n") + "limited\n".length)) as {
      run: { ok: boolean; notFound: boolean; exitCode?: number; problem: string };
      streamed: { notFound: boolean; problem: string; lines: number; pid?: number };
      again: { ok: boolean };
    };
    expect(result.run).toMatchObject({ ok: false, notFound: false, problem: "/bin/true: cannot start: EAGAIN (no more processes allowed)" });
    expect(result.run.exitCode).toBeUndefined();
    expect(result.streamed).toMatchObject({ notFound: false, problem: "/bin/true: cannot start: EAGAIN (no more processes allowed)", lines: 0 });
    expect(result.streamed.pid).toBeUndefined();
    expect(result.again).toEqual({ ok: true });
  }, 60_000);
});
