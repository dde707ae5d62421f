/**
 * The gpu collector: one long-lived `nvidia-smi dmon` child feeds per-GPU gauges as rows arrive;
 * identity (uuid, name, bus id, driver, power limit) is read once per child start with
 * `--query-gpu`. Series of a GPU without a fresh row for 3 intervals, and all series when the
 * child is gone, are withdrawn (checked at scrape time and on a timer), never served stale. This
 * file is the wiring: what each line and exit of the child means for the parts that keep state.
 */
import type { Collector, CollectorDeps, CollectorHealth } from "../collector.js";
import type { StreamExit } from "../exec.js";
import { DmonCommand, FALLBACK_GROUPS } from "./dmon-command.js";
import { DmonLog } from "./dmon-log.js";
import { DmonStatus, STALE_INTERVALS } from "./dmon-status.js";
import type { NvsmiFailure } from "./failures.js";
import { GpuIdentities } from "./identity.js";
import { GpuMetrics } from "./metrics.js";
import { dmonSnapshot } from "./once.js";
import { oneShot } from "./one-shot.js";
import { DmonParser } from "./parse-dmon.js";
import type { GpuIdentity } from "./parse-query.js";
import { LatestSamples, type GpuSample } from "./samples.js";
import { Supervisor, type ExitInfo } from "./supervisor.js";

export { identityArgs } from "./identity.js";
export type { GpuSample } from "./samples.js";

export interface GpuOptions {
  /** nvidia-smi binary (name on PATH or absolute path). */
  nvidiaSmi: string;
  /** dmon sampling interval; dmon takes whole seconds (rounded, at least 1). */
  intervalSeconds: number;
  /** dmon `-s` groups; default "pucvmet". */
  groups?: string;
  /** Limit of the one-shot runs (identity query, --once), ms; default 10,000. */
  timeoutMs?: number;
}

export interface GpuCollector extends Collector {
  /** Latest fresh sample per GPU (dmon index); GPUs without a row for 3 intervals are absent. */
  latestSamples(): ReadonlyMap<string, GpuSample>;
  /** Identity per GPU index (bus id, power limit) from the last --query-gpu read. */
  identities(): ReadonlyMap<string, GpuIdentity>;
}

const MAX_BACKOFF_MS = 60_000;
/**
 * dmon prints one row per GPU (per MIG instance) per interval and a header now and then: at most
 * a few hundred lines a second on the largest node. A child far over that is broken, and parsing
 * its flood would keep a core busy: it is killed (and restarted with growing delays).
 */
const DMON_LINE_BUDGET = { burst: 5000, perSecond: 1000 };

export function createGpuCollector(deps: CollectorDeps, opts: GpuOptions): GpuCollector {
  // deps.logger already carries {collector: "gpu"} (agent/app.ts); a second child() would print the key twice.
  const log = deps.logger;
  const file = opts.nvidiaSmi;
  const intervalS = Math.max(1, Math.round(opts.intervalSeconds));
  const staleMs = STALE_INTERVALS * intervalS * 1000;
  const run = oneShot(deps.exec, file, opts.timeoutMs);
  // An old driver that rejects the configured groups gets dmon's default set instead.
  const dmon = new DmonCommand(opts.groups ?? "pucvmet", intervalS);
  const status = new DmonStatus();
  const dmonLog = new DmonLog(log, file);
  let started = false;
  let tickTimer: NodeJS.Timeout | undefined;
  let parser = new DmonParser();

  const metrics = new GpuMetrics(deps.registry, () => {
    if (started) refresh(); // else (--once) leave what once() published
  });
  const samples = new LatestSamples(metrics, staleMs);
  const identity = new GpuIdentities(run, metrics, log);

  function isFresh(): boolean {
    const t = sup.lastSampleMs;
    return sup.running && t !== undefined && deps.now() - t <= staleMs;
  }

  /** Withdraws the stale GPUs and says whether dmon delivers. */
  function refresh(): void {
    samples.withdrawStale(deps.now());
    metrics.up.set(isFresh() ? 1 : 0);
  }

  function withdrawAll(): void {
    samples.withdrawAll();
    metrics.up.set(0);
  }

  function seeFailure(f: NvsmiFailure): void {
    metrics.countError(f.kind);
    status.lastFailure = f;
    dmonLog.failure(f);
    // A GPU that fell off the bus: its series go now, not 3 intervals later.
    if (f.pciBusId !== undefined && (f.kind === "gpu_lost" || f.kind === "device_handle")) samples.withdraw(identity.indexesAt(f.pciBusId));
  }

  function onLine(line: string): void {
    const ev = parser.feed(line);
    if (!ev) return;
    switch (ev.type) {
      case "row": {
        const now = deps.now();
        samples.put(ev.row.gpu, ev.row.values, now);
        status.lastSuccessMs = now;
        dmonLog.delivering(now, sup.startedMs);
        sup.noteSample();
        return;
      }
      case "error":
        seeFailure(ev.error);
        return;
      case "skip":
        metrics.malformed.inc();
        log.debug({ reason: ev.reason }, `gpu: skipped dmon line: ${ev.line.slice(0, 200)}`);
        return;
      case "header":
        return;
    }
  }

  function onExit(exit: StreamExit, info: ExitInfo): void {
    withdrawAll();
    const retryS = Math.round(info.retryInMs / 1000);
    if (exit.notFound) {
      status.notFound(file, retryS);
      dmonLog.notFound(retryS);
      return;
    }
    const rejected = status.lastSuccessMs === undefined ? dmon.fallBackAfter(status.lastFailure) : undefined;
    if (rejected !== undefined) dmonLog.fellBack(rejected, status.lastFailure, FALLBACK_GROUPS);
    const key = status.ended(exit, info, retryS);
    if (started) dmonLog.ended(key, status.reason);
  }

  const sup = new Supervisor({
    exec: deps.exec,
    file,
    args: dmon.args,
    now: deps.now,
    silenceMs: staleMs,
    maxBackoffMs: MAX_BACKOFF_MS,
    lineBudget: DMON_LINE_BUDGET,
    hooks: {
      onLaunch(restart) {
        parser = new DmonParser();
        status.lastFailure = undefined;
        if (restart) metrics.restarts.inc();
        identity.refresh();
      },
      onLine,
      onExit,
      onOverlong: () => metrics.malformed.inc(),
    },
  });

  return {
    name: "gpu",
    mode: "stream",
    start(): void {
      if (started) return;
      started = true;
      status.starting();
      sup.start();
      tickTimer = setInterval(() => {
        if (sup.checkSilence()) log.debug("gpu: nvidia-smi dmon stalled; killing it");
        refresh();
      }, intervalS * 1000);
      tickTimer.unref();
    },
    async stop(): Promise<void> {
      started = false;
      if (tickTimer) clearInterval(tickTimer);
      tickTimer = undefined;
      // 1 s for dmon to end on SIGTERM, then SIGKILL: shutdown has 5 s for everything (agent/main.ts).
      await sup.stop(1000);
      await identity.settled();
      withdrawAll();
      identity.clear();
    },
    health(): CollectorHealth {
      return status.health(started, started && isFresh(), sup, dmonLog.absent);
    },
    async once(): Promise<void> {
      const rows = await dmonSnapshot(run, file, dmon, (kind) => metrics.countError(kind));
      await identity.read();
      const now = deps.now();
      samples.replaceAll(rows, now);
      metrics.up.set(1);
      status.lastSuccessMs = now;
    },
    latestSamples(): ReadonlyMap<string, GpuSample> {
      if (started) samples.withdrawStale(deps.now());
      return samples.all;
    },
    identities(): ReadonlyMap<string, GpuIdentity> {
      return identity.current;
    },
  };
}
