/**
 * Runs the collectors: starts stream collectors, schedules poll collectors with node-cron (never
 * overlapping themselves, each run under a time limit), records success / duration / last success
 * and whether each source is present, absent or failing, and logs a collector's trouble once when it
 * starts or changes, never every cycle.
 */
import cron, { type ScheduledTask } from "node-cron";
import type { Logger } from "pino";
import { CollectorError, type Collector, type CollectorHealth, type SourceState } from "../collectors/collector.js";
import { intervalToCron } from "../collectors/settings/interval.js";
import { setSourceState, type SelfMetrics } from "./self-metrics.js";

export interface RunnerOptions {
  timeoutMs: number;
  /** Poll interval per poll collector, ms. */
  intervalsMs: Readonly<Record<string, number>>;
  now: () => number;
}

class TimeoutError extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} took longer than ${ms / 1000}s`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** A stream's source from its health: undefined while it starts (no series yet). */
function streamSource(c: Collector, h: CollectorHealth): SourceState | undefined {
  if (h.ok) return c.sourceState?.() ?? "present";
  if (h.absent === true) return "absent";
  return h.starting === true ? undefined : "failing";
}

function describeError(err: unknown): { message: string; absent: boolean; unexpected: boolean } {
  if (err instanceof CollectorError) return { message: err.message, absent: err.absent, unexpected: false };
  if (err instanceof TimeoutError) return { message: err.message, absent: false, unexpected: false };
  const message = err instanceof Error ? err.message : String(err);
  return { message, absent: false, unexpected: true };
}

export class Runner {
  private readonly tasks = new Map<string, { task: ScheduledTask; expr: string }>();
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Last problem logged per collector (undefined = healthy). */
  private readonly problems = new Map<string, string | undefined>();
  private stopped = false;
  /** Streams report health only once started (in --once mode runOnce() records their result). */
  private streamsStarted = false;

  constructor(
    private readonly collectors: readonly Collector[],
    private readonly self: SelfMetrics,
    private readonly logger: Logger,
    private readonly opts: RunnerOptions,
  ) {}

  /** Starts streams and schedules polls; the first poll of each collector runs at once. */
  start(): void {
    cron.setLogger({
      info: (m) => this.logger.debug({ component: "cron" }, m),
      warn: (m) => this.logger.debug({ component: "cron" }, m),
      error: (m) => this.logger.warn({ component: "cron" }, String(m)),
      debug: (m) => this.logger.debug({ component: "cron" }, String(m)),
    });
    this.streamsStarted = true;
    for (const c of this.collectors) {
      if (c.mode === "stream") {
        try {
          c.start?.();
        } catch (err) {
          setSourceState(this.self, c.name, describeError(err).absent ? "absent" : "failing");
          this.report(c.name, err);
        }
        continue;
      }
      this.schedule(c);
      void this.poll(c);
    }
  }

  /** The cron expression a poll collector runs on now (undefined before start() or after stop()). */
  scheduleOf(name: string): string | undefined {
    return this.tasks.get(name)?.expr;
  }

  /**
   * SIGHUP: a new time limit for polls, and new poll intervals. A collector whose interval changed is
   * rescheduled; its state is untouched and a poll in flight finishes. Returns the rescheduled names.
   */
  reconfigure(opts: Pick<RunnerOptions, "timeoutMs" | "intervalsMs">): string[] {
    this.opts.timeoutMs = opts.timeoutMs;
    this.opts.intervalsMs = opts.intervalsMs;
    if (this.stopped || !this.streamsStarted) return [];
    const changed: string[] = [];
    for (const c of this.collectors) {
      const current = this.tasks.get(c.name);
      if (!current || current.expr === this.cronOf(c)) continue;
      void Promise.resolve(current.task.destroy()).catch((err: unknown) =>
        this.logger.warn({ component: "cron", reason: String(err) }, "could not stop a poll schedule"),
      );
      this.schedule(c);
      changed.push(c.name);
    }
    return changed;
  }

  private cronOf(c: Collector): string {
    return intervalToCron(this.opts.intervalsMs[c.name] ?? 15_000) ?? "*/15 * * * * *";
  }

  private schedule(c: Collector): void {
    const expr = this.cronOf(c);
    this.tasks.set(c.name, { expr, task: cron.schedule(expr, () => this.poll(c), { name: `collector-${c.name}`, noOverlap: true }) });
  }

  /** One poll of one collector; skipped while the previous one of the same collector still runs. */
  poll(c: Collector): Promise<void> {
    const running = this.inFlight.get(c.name);
    if (running || this.stopped) {
      if (running) this.logger.debug({ collector: c.name }, "previous run still in progress; skipping this one");
      return running ?? Promise.resolve();
    }
    const run = this.measure(c, () => (c.update ? c.update() : c.once())).finally(() => this.inFlight.delete(c.name));
    this.inFlight.set(c.name, run);
    return run;
  }

  /** --once: every collector's once(), in parallel, each under the time limit. */
  async runOnce(): Promise<void> {
    await Promise.all(this.collectors.map((c) => this.measure(c, () => c.once())));
  }

  /** Called at scrape time: copies stream collectors' health into the self metrics. */
  refreshStreams(): void {
    if (!this.streamsStarted) return;
    for (const c of this.collectors) {
      if (c.mode !== "stream" || !c.health) continue;
      const h = c.health();
      this.self.success.set({ collector: c.name }, h.ok ? 1 : 0);
      setSourceState(this.self, c.name, streamSource(c, h));
      if (h.lastSuccessMs !== undefined) this.self.lastSuccess.set({ collector: c.name }, h.lastSuccessMs / 1000);
      if (h.durationSeconds !== undefined) this.self.duration.set({ collector: c.name }, h.durationSeconds);
      // Stream collectors log their own trouble as it happens (they see each event); no log here.
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const { task } of this.tasks.values()) await task.destroy();
    this.tasks.clear();
    await Promise.all(this.collectors.map((c) => (c.mode === "stream" && c.stop ? c.stop() : Promise.resolve())));
    // Poll runs in flight end on their own: their tools are killed by Exec.killAll().
  }

  private async measure(c: Collector, fn: () => Promise<void>): Promise<void> {
    const t0 = performance.now();
    try {
      await withTimeout(fn(), this.opts.timeoutMs, `collector ${c.name}`);
      this.self.success.set({ collector: c.name }, 1);
      setSourceState(this.self, c.name, c.sourceState?.() ?? "present");
      this.self.lastSuccess.set({ collector: c.name }, this.opts.now() / 1000);
      this.recovered(c.name);
    } catch (err) {
      this.self.success.set({ collector: c.name }, 0);
      setSourceState(this.self, c.name, describeError(err).absent ? "absent" : "failing");
      this.report(c.name, err);
    } finally {
      this.self.duration.set({ collector: c.name }, (performance.now() - t0) / 1000);
    }
  }

  private report(name: string, err: unknown): void {
    const { message, absent, unexpected } = describeError(err);
    this.noteProblem(name, message, absent, unexpected);
  }

  private noteProblem(name: string, message: string, absent: boolean, unexpected: boolean): void {
    if (this.problems.get(name) === message) return;
    this.problems.set(name, message);
    const log = this.logger.child({ collector: name });
    if (absent) log.info({ reason: message }, "collector source not present on this machine; reporting ringwatch_collector_success 0");
    else if (unexpected) log.error({ reason: message }, "collector failed unexpectedly");
    else log.warn({ reason: message }, "collector failed");
  }

  private recovered(name: string): void {
    if (this.problems.get(name) === undefined) return;
    this.problems.set(name, undefined);
    this.logger.info({ collector: name }, "collector recovered");
  }
}
