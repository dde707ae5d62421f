/**
 * The only module that starts processes. Always an argument array, never a shell, always bounded:
 * one-shot tools run under a timeout that kills them, long-lived streams are killed on stop().
 * A process that cannot be started (EMFILE, ENFILE, EAGAIN, ...) is a failed run, never a throw
 * and never an unhandled error: see startChild().
 */
import type { ChildProcess } from "node:child_process";
import { channel } from "node:diagnostics_channel";
import { execa, type ResultPromise } from "execa";

/** Outcome of a one-shot tool run. Never thrown: callers decide what a failure means. */
export interface ToolResult {
  /** `file arg1 arg2`, for log lines. */
  command: string;
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  /** The file does not exist or is not executable (ENOENT, EACCES): the tool is absent. */
  notFound: boolean;
  timedOut: boolean;
  /** Output exceeded maxBytes and the tool was killed. */
  overflowed: boolean;
  signal: string | undefined;
  /** True when the tool ran and exited 0. */
  ok: boolean;
  /** One-line description of what went wrong, when !ok. */
  problem: string | undefined;
}

/**
 * A one-shot tool's stdout as far as it can be trusted. When the run failed (non-zero exit,
 * signal, timeout, output limit), a last line without its newline was cut off mid-write: a number
 * in it may have lost digits (`Rate: 400` read as `Rate: 4`), so it is dropped. A run that
 * succeeded is taken as it is.
 */
export function trustedStdout(r: ToolResult): string {
  if (r.ok) return r.stdout;
  const nl = r.stdout.lastIndexOf("\n");
  return nl < 0 ? "" : r.stdout.slice(0, nl + 1);
}

export interface RunOptions {
  /** Kill the tool after this many ms (SIGTERM, then SIGKILL 1 s later). Default 10,000. */
  timeoutMs?: number;
  /**
   * Kill the tool if stdout or stderr exceeds this many bytes. Default 8 MiB. Buffering costs a
   * few times this in memory that is returned late (a flood of 16 MiB grew the agent by ~50 MB per
   * run), so callers whose tool prints kilobytes pass a smaller limit.
   */
  maxBytes?: number;
}

export interface StreamExit {
  exitCode: number | undefined;
  signal: string | undefined;
  notFound: boolean;
  /** Last lines of stderr, for the log line. */
  stderrTail: string;
  problem: string;
}

export interface StreamHandlers {
  /** One complete line of stdout, without its newline (CR stripped). */
  onLine(line: string): void;
  /** The child ended (or could not start). Called exactly once. */
  onExit(exit: StreamExit): void;
}

export interface StreamOptions {
  /** Lines longer than this are dropped (counted via onOverlong). Default 64 KiB. */
  maxLineBytes?: number;
  onOverlong?: () => void;
  /** Each chunk of stderr as it arrives (for tools that report a condition there and go on). */
  onStderr?: (chunk: string) => void;
}

export interface StreamHandle {
  readonly pid: number | undefined;
  /** Ends the child: SIGTERM, then SIGKILL after graceMs. Resolves when it is gone. */
  kill(graceMs?: number): Promise<void>;
}

export interface Exec {
  run(file: string, args: readonly string[], opts?: RunOptions): Promise<ToolResult>;
  stream(file: string, args: readonly string[], handlers: StreamHandlers, opts?: StreamOptions): StreamHandle;
  /** Kills every child still running (shutdown). */
  killAll(graceMs?: number): Promise<void>;
  /** Number of children currently running (for tests and self-checks). */
  running(): number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_LINE = 64 * 1024;

function describe(file: string, args: readonly string[]): string {
  return [file, ...args].join(" ");
}

function firstLine(text: string): string {
  const trimmed = text.trim();
  const nl = trimmed.indexOf("\n");
  return (nl < 0 ? trimmed : trimmed.slice(0, nl)).slice(0, 300);
}

/** Environment for tools: C locale so their output is the format our parsers know. */
const TOOL_ENV = { LC_ALL: "C", LANG: "C" };

/**
 * Node publishes every ChildProcess it creates here, even one whose spawn failed. On EMFILE and
 * ENFILE, Node gives up before setting up the child's stdio and emits 'error' on the next tick;
 * execa then throws ("subprocess.stdio is not iterable") before it listens for that 'error', which
 * would end the agent. Held in a module constant so that the channel, and its subscriber, live as
 * long as the agent.
 */
const spawned = channel("child_process");
/** The child created while startChild() runs execa(), and the launch error it emits. */
let catching: { child: ChildProcess | undefined; error: Promise<NodeJS.ErrnoException> } | undefined;
spawned.subscribe((message) => {
  const child = (message as { process?: ChildProcess }).process;
  if (catching === undefined || child === undefined || catching.child !== undefined) return;
  catching.child = child;
  // Always listened to from the moment the child exists: an 'error' can no longer go unhandled.
  catching.error = new Promise((resolve) => child.once("error", resolve));
});

/** What a launch error code means, for the log line. */
const LAUNCH_ERRORS: Record<string, string> = {
  EMFILE: "too many open files in the agent",
  ENFILE: "too many open files on the system",
  EAGAIN: "no more processes allowed",
  ENOMEM: "out of memory",
};

/** Why a process could not be started: `file: cannot start: EMFILE (too many open files in the agent)`. */
function launchProblem(file: string, err: unknown): string {
  const e = err as Partial<NodeJS.ErrnoException> | undefined;
  const code = typeof e?.code === "string" ? e.code : undefined;
  const why =
    code !== undefined ? `${code}${LAUNCH_ERRORS[code] ? ` (${LAUNCH_ERRORS[code]})` : ""}` : firstLine(err instanceof Error ? err.message : String(err));
  return `${file}: cannot start: ${why}`;
}

/**
 * execa(), or why it could not start the process: the launch error Node reports for the child
 * (EMFILE, ...) when execa threw on a child whose spawn failed, else what execa threw.
 */
function startChild(start: () => ResultPromise, file: string): { child: ResultPromise } | { failed: Promise<string> } {
  const watch: NonNullable<typeof catching> = { child: undefined, error: Promise.resolve(new Error("not started")) };
  catching = watch;
  let thrown: unknown;
  try {
    return { child: start() };
  } catch (err) {
    thrown = err;
  } finally {
    catching = undefined;
  }
  const child = watch.child;
  if (child?.pid !== undefined) child.kill("SIGKILL"); // started after all, but not ours to follow: not left behind
  // A child whose spawn failed emits its launch error on the next tick: wait for it, for its code.
  const why = child !== undefined && child.pid === undefined ? watch.error : Promise.resolve(thrown);
  return { failed: why.then((err) => launchProblem(file, err)) };
}

export function createExec(): Exec {
  const children = new Set<ResultPromise>();

  async function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<ToolResult> {
    const command = describe(file, args);
    const started = startChild(
      () =>
        execa(file, args, {
          reject: false,
          shell: false,
          stdin: "ignore",
          timeout: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          killSignal: "SIGTERM",
          forceKillAfterDelay: 1000,
          maxBuffer: opts.maxBytes ?? DEFAULT_MAX_BYTES,
          stripFinalNewline: false,
          env: TOOL_ENV,
          cleanup: true,
        }),
      file,
    );
    if ("failed" in started) {
      const problem = await started.failed;
      return {
        command,
        exitCode: undefined,
        stdout: "",
        stderr: "",
        notFound: false,
        timedOut: false,
        overflowed: false,
        signal: undefined,
        ok: false,
        problem,
      };
    }
    const child = started.child;
    children.add(child);
    try {
      const r = await child;
      const stdout = typeof r.stdout === "string" ? r.stdout : "";
      const stderr = typeof r.stderr === "string" ? r.stderr : "";
      const code = (r as { code?: string }).code;
      const notFound = code === "ENOENT" || code === "EACCES";
      const overflowed = r.isMaxBuffer === true;
      const ok = !r.failed;
      let problem: string | undefined;
      if (notFound) problem = `${file}: not found or not executable`;
      else if (r.timedOut) problem = `${command}: timed out and was killed`;
      else if (overflowed) problem = `${command}: output exceeded the limit and the tool was killed`;
      else if (r.signal) problem = `${command}: killed by ${r.signal}`;
      else if (!ok && r.exitCode === undefined && code !== undefined)
        problem = launchProblem(file, r); // EAGAIN, ...: it never ran
      else if (!ok) {
        const why = firstLine(stderr) || firstLine(stdout) || "no output";
        problem = `${command}: exit code ${r.exitCode ?? "?"}: ${why}`;
      }
      return {
        command,
        exitCode: r.exitCode,
        stdout,
        stderr,
        notFound,
        timedOut: r.timedOut === true,
        overflowed,
        signal: r.signal,
        ok,
        problem,
      };
    } finally {
      children.delete(child);
    }
  }

  function stream(file: string, args: readonly string[], handlers: StreamHandlers, opts: StreamOptions = {}): StreamHandle {
    const maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE;
    const started = startChild(() => execa(file, args, { reject: false, shell: false, stdin: "ignore", buffer: false, env: TOOL_ENV, cleanup: true }), file);
    if ("failed" in started) {
      // Reported like an exit, later, as when the file is missing: the caller's retry logic applies.
      void started.failed.then((problem) => handlers.onExit({ exitCode: undefined, signal: undefined, notFound: false, stderrTail: "", problem }));
      return { pid: undefined, kill: () => started.failed.then(() => undefined) };
    }
    const child = started.child;
    children.add(child);

    let pending = "";
    let skipping = false;
    let stderrTail = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf("\n", start);
        if (nl < 0) break;
        const piece = chunk.slice(start, nl);
        start = nl + 1;
        if (skipping) {
          skipping = false;
          continue;
        }
        let line = pending.length > 0 ? pending + piece : piece;
        pending = "";
        if (line.length > maxLine) {
          opts.onOverlong?.();
          continue;
        }
        if (line.endsWith("\r")) line = line.slice(0, -1);
        handlers.onLine(line);
      }
      if (start < chunk.length && !skipping) {
        pending += chunk.slice(start);
        if (pending.length > maxLine) {
          pending = "";
          skipping = true;
          opts.onOverlong?.();
        }
      }
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderrTail = (stderrTail + chunk).slice(-2000);
      opts.onStderr?.(chunk);
    });

    let exited = false;
    const done = child.then(
      (r) => {
        exited = true;
        children.delete(child);
        const code = (r as { code?: string }).code;
        const notFound = code === "ENOENT" || code === "EACCES";
        const why = firstLine(stderrTail) || (pending ? firstLine(pending) : "");
        let problem: string;
        if (notFound) problem = `${file}: not found or not executable`;
        else if (r.signal) problem = `${describe(file, args)}: killed by ${r.signal}`;
        else if (r.exitCode === undefined && code !== undefined)
          problem = launchProblem(file, r); // EAGAIN, ...: it never ran
        else problem = `${describe(file, args)}: exited with code ${r.exitCode ?? "?"}${why ? `: ${why}` : ""}`;
        handlers.onExit({ exitCode: r.exitCode, signal: r.signal, notFound, stderrTail, problem });
      },
      // reject:false means this should not happen; keep the contract anyway.
      (err: unknown) => {
        exited = true;
        children.delete(child);
        const msg = err instanceof Error ? err.message : String(err);
        handlers.onExit({ exitCode: undefined, signal: undefined, notFound: false, stderrTail, problem: firstLine(msg) });
      },
    );

    return {
      pid: child.pid,
      async kill(graceMs = 2000): Promise<void> {
        if (exited) return;
        child.kill("SIGTERM");
        const timer = setTimeout(() => {
          if (!exited) child.kill("SIGKILL");
        }, graceMs);
        try {
          await done;
        } finally {
          clearTimeout(timer);
        }
      },
    };
  }

  async function killAll(graceMs = 2000): Promise<void> {
    const all = [...children];
    await Promise.all(
      all.map(async (c) => {
        c.kill("SIGTERM");
        const t = setTimeout(() => c.kill("SIGKILL"), graceMs);
        try {
          await c;
        } catch {
          // reject:false; nothing to do
        } finally {
          clearTimeout(t);
        }
      }),
    );
  }

  return { run, stream, killAll, running: () => children.size };
}
