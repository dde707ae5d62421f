/**
 * A process that cannot be started is a failed run, reported to the caller, never an error that
 * ends the agent. collectors/exec.ts, built, in a process of its own whose descriptors are all in
 * use (launch-emfile.mjs under prlimit): on EMFILE Node gives up on the child before its stdio
 * exists and emits 'error' on the next tick, before execa listens for it. Needs `npm run build`.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/agent-process.js";

const hasPrlimit = spawnSync("prlimit", ["--version"]).status === 0;
if (!hasPrlimit && process.env.CI) throw new Error("prlimit (util-linux) is missing; CI needs it for the open-file limit tests");

describe.skipIf(!hasPrlimit)("starting a tool with no file descriptor left", () => {
  it("run() and stream() report EMFILE as a failure to start, and the same tool starts once descriptors are free", () => {
    const script = join(import.meta.dirname, "launch-emfile.mjs");
    // Room for Node's ESM loader, which reads a module graph's files many at a time (at 64, loading
    // execa itself could hit EMFILE); the script then uses up whatever is left.
    const r = spawnSync("prlimit", ["--nofile=1024:1024", "--", process.execPath, script, join(repoRoot, "dist/collectors/exec.js"), "/bin/true"], {
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
