/**
 * Keeps one long-lived child (nvidia-smi dmon) running: restarts it when it exits or cannot
 * start, with exponential backoff (1 s doubling to 60 s, back to 1 s once a child delivered
 * samples), and kills it when it has been silent for `silenceMs` or prints far more lines than
 * it should (`lineBudget`: a runaway child would otherwise keep a core busy parsing). Knows
 * nothing about dmon's format: the owner parses lines and calls `noteSample()` when one was a sample.
 */
import type { Exec, StreamExit, StreamHandle } from "../exec.js";

export interface SupervisorHooks {
  /** A child was started (`restart` false for the first one after start()). */
  onLaunch(restart: boolean): void;
  /** A line from the current child. */
  onLine(line: string): void;
  /** The current child ended (exited, killed, or never started); `retryInMs` until the next. */
  onExit(exit: StreamExit, info: ExitInfo): void;
  /** A line was longer than the limit and was dropped. */
  onOverlong?(): void;
}

export interface ExitInfo {
  delivered: boolean;
  retryInMs: number;
  /** Killed for silence. */
  stalled: boolean;
  /** Killed for printing more lines than lineBudget allows: how many, in how many ms. */
  flooded?: { lines: number; ms: number };
}

/** A child may print at most `burst + perSecond * seconds since it started` lines. */
export interface LineBudget {
  burst: number;
  perSecond: number;
}

export interface SupervisorOptions {
  exec: Exec;
  file: string;
  args: readonly string[];
  now: () => number;
  /** Kill the child when no sample came for this long. */
  silenceMs: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Retry delay when the file does not exist (default: maxBackoffMs). */
  absentRetryMs?: number;
  /** Kill a child that prints more lines than this (default: no limit). */
  lineBudget?: LineBudget;
  hooks: SupervisorHooks;
}

interface Run {
  handle: StreamHandle | undefined;
  startedMs: number;
  lastSampleMs: number | undefined;
  delivered: boolean;
  /** Being killed: its remaining lines are ignored. */
  retiring: boolean;
  stalled: boolean;
  lines: number;
  flooded?: { lines: number; ms: number };
}

export class Supervisor {
  private run: Run | undefined;
  private active = false;
  private launched = false;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(private readonly o: SupervisorOptions) {
    this.initialBackoffMs = o.initialBackoffMs ?? 1000;
    this.maxBackoffMs = o.maxBackoffMs ?? 60_000;
    this.backoffMs = this.initialBackoffMs;
  }

  /** A child is running and not being killed. */
  get running(): boolean {
    return this.run !== undefined && !this.run.retiring;
  }

  /** Time of the current child's last sample (undefined: none yet, or no child). */
  get lastSampleMs(): number | undefined {
    return this.run && !this.run.retiring ? this.run.lastSampleMs : undefined;
  }

  /** When the current child was started. */
  get startedMs(): number | undefined {
    return this.run?.startedMs;
  }

  get pid(): number | undefined {
    return this.run?.handle?.pid;
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.launched = false;
    this.backoffMs = this.initialBackoffMs;
    this.launch();
  }

  async stop(graceMs = 2000): Promise<void> {
    this.active = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const run = this.run;
    if (run?.handle) {
      run.retiring = true;
      await run.handle.kill(graceMs);
    }
  }

  /** The owner parsed a sample from the current child. */
  noteSample(): void {
    const run = this.run;
    if (!run || run.retiring) return;
    run.lastSampleMs = this.o.now();
    run.delivered = true;
  }

  /** Kill the child when it has been silent too long; call periodically. Returns true if it did. */
  checkSilence(): boolean {
    const run = this.run;
    if (!run?.handle || run.retiring) return false;
    const since = run.lastSampleMs ?? run.startedMs;
    if (this.o.now() - since <= this.o.silenceMs) return false;
    run.retiring = true;
    run.stalled = true;
    void run.handle.kill(1000);
    return true;
  }

  private launch(): void {
    this.retryTimer = undefined;
    if (!this.active) return;
    const run: Run = {
      handle: undefined,
      startedMs: this.o.now(),
      lastSampleMs: undefined,
      delivered: false,
      retiring: false,
      stalled: false,
      lines: 0,
    };
    this.run = run;
    const restart = this.launched;
    this.launched = true;
    this.o.hooks.onLaunch(restart);
    try {
      run.handle = this.o.exec.stream(
        this.o.file,
        this.o.args,
        {
          onLine: (line) => {
            if (this.run !== run || run.retiring) return;
            if (this.overBudget(run)) return;
            this.o.hooks.onLine(line);
          },
          onExit: (exit) => this.exited(run, exit),
        },
        { maxLineBytes: 8192, onOverlong: () => this.o.hooks.onOverlong?.() },
      );
    } catch (err) {
      // exec.stream reports start failures through onExit; this is a last resort.
      const problem = err instanceof Error ? err.message : String(err);
      this.exited(run, { exitCode: undefined, signal: undefined, notFound: false, stderrTail: "", problem });
    }
  }

  /** Counts a line; kills the child (once) when it is over its budget. */
  private overBudget(run: Run): boolean {
    const budget = this.o.lineBudget;
    run.lines++;
    if (!budget || !run.handle) return false;
    const ms = this.o.now() - run.startedMs;
    if (run.lines <= budget.burst + (budget.perSecond * Math.max(0, ms)) / 1000) return false;
    run.retiring = true;
    run.flooded = { lines: run.lines, ms };
    void run.handle.kill(1000);
    return true;
  }

  private exited(run: Run, exit: StreamExit): void {
    if (this.run !== run) return;
    this.run = undefined;
    // A flooding child delivered samples too, but restarting it at once would only flood again.
    if (run.delivered && !run.flooded) this.backoffMs = this.initialBackoffMs;
    let retryInMs: number;
    if (exit.notFound) {
      retryInMs = this.o.absentRetryMs ?? this.maxBackoffMs;
    } else {
      retryInMs = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    }
    const info: ExitInfo = { delivered: run.delivered, retryInMs, stalled: run.stalled };
    if (run.flooded) info.flooded = run.flooded;
    this.o.hooks.onExit(exit, info);
    if (!this.active) return;
    this.retryTimer = setTimeout(() => this.launch(), retryInMs);
    this.retryTimer.unref();
  }
}
