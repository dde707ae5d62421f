/**
 * Keeps one long-lived child (nvidia-smi dmon) running: restarts it when it exits or cannot
 * start, with exponential backoff (1 s doubling to 60 s, back to 1 s once a child delivered
 * samples), and kills it when it has been silent for `silenceMs`. Knows nothing about dmon's
 * format: the owner parses lines and calls `noteSample()` when one was a sample.
 */
import type { Exec, StreamExit, StreamHandle } from "../exec.js";

export interface SupervisorHooks {
  /** A child was started (`restart` false for the first one after start()). */
  onLaunch(restart: boolean): void;
  /** A line from the current child. */
  onLine(line: string): void;
  /** The current child ended (exited, killed, or never started); `retryInMs` until the next. */
  onExit(exit: StreamExit, info: { delivered: boolean; retryInMs: number; stalled: boolean }): void;
  /** A line was longer than the limit and was dropped. */
  onOverlong?(): void;
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
            if (this.run === run && !run.retiring) this.o.hooks.onLine(line);
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

  private exited(run: Run, exit: StreamExit): void {
    if (this.run !== run) return;
    this.run = undefined;
    if (run.delivered) this.backoffMs = this.initialBackoffMs;
    let retryInMs: number;
    if (exit.notFound) {
      retryInMs = this.o.absentRetryMs ?? this.maxBackoffMs;
    } else {
      retryInMs = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, this.maxBackoffMs);
    }
    this.o.hooks.onExit(exit, { delivered: run.delivered, retryInMs, stalled: run.stalled });
    if (!this.active) return;
    this.retryTimer = setTimeout(() => this.launch(), retryInMs);
    this.retryTimer.unref();
  }
}
