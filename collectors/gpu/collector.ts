/**
 * The gpu collector: one long-lived `nvidia-smi dmon` child feeds per-GPU gauges as rows arrive;
 * identity (uuid, name, bus id, driver, power limit) is read once per child start with
 * `--query-gpu`. Series of a GPU without a fresh row for 3 intervals, and all series when the
 * child is gone, are withdrawn (checked at scrape time and on a timer), never served stale.
 */
import { CollectorError, type Collector, type CollectorDeps, type CollectorHealth } from "../collector.js";
import { trustedStdout, type StreamExit } from "../exec.js";
import { canonicalBusId } from "../pci.js";
import type { NvsmiFailure } from "./failures.js";
import { GpuMetrics } from "./metrics.js";
import { DmonParser, lastRowPerGpu, parseDmonText, type DmonValues } from "./parse-dmon.js";
import { IDENTITY_FIELDS, parseIdentity, type GpuIdentity } from "./parse-query.js";
import { Supervisor, type ExitInfo } from "./supervisor.js";

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

export interface GpuSample {
  /** When the row was read (deps.now()). */
  atMs: number;
  /** dmon's values in dmon's units (sm %, pwr W, ...). */
  values: DmonValues;
}

export interface GpuCollector extends Collector {
  /** Latest fresh sample per GPU (dmon index); GPUs without a row for 3 intervals are absent. */
  latestSamples(): ReadonlyMap<string, GpuSample>;
  /** Identity per GPU index (bus id, power limit) from the last --query-gpu read. */
  identities(): ReadonlyMap<string, GpuIdentity>;
}

const STALE_INTERVALS = 3;
const QUERY_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 60_000;
/** --query-gpu prints one short line per GPU, dmon -c 1 one sample set: more than 1 MiB is a broken tool. */
const ONE_SHOT_MAX_BYTES = 1024 * 1024;
/**
 * dmon prints one row per GPU (per MIG instance) per interval and a header now and then: at most
 * a few hundred lines a second on the largest node. A child far over that is broken, and parsing
 * its flood would keep a core busy: it is killed (and restarted with growing delays).
 */
const DMON_LINE_BUDGET = { burst: 5000, perSecond: 1000 };
/** A child that delivered for this long resets log de-duplication. */
const QUIET_RESET_MS = 10 * 60_000;

/** dmon's own default groups: power/temperature, utilisation, clocks; every driver has them. */
const FALLBACK_GROUPS = "puc";

function rejectsGroups(f: NvsmiFailure | undefined): boolean {
  return f !== undefined && (f.kind === "command_failed" || f.kind === "not_supported");
}

export function identityArgs(): string[] {
  return [`--query-gpu=${IDENTITY_FIELDS.join(",")}`, "--format=csv,noheader,nounits"];
}

export function createGpuCollector(deps: CollectorDeps, opts: GpuOptions): GpuCollector {
  // deps.logger already carries {collector: "gpu"} (agent/app.ts); a second child() would print the key twice.
  const log = deps.logger;
  const file = opts.nvidiaSmi;
  const groups = opts.groups ?? "pucvmet";
  const intervalS = Math.max(1, Math.round(opts.intervalSeconds));
  const intervalMs = intervalS * 1000;
  const staleMs = STALE_INTERVALS * intervalMs;
  const queryTimeoutMs = opts.timeoutMs ?? QUERY_TIMEOUT_MS;

  const latest = new Map<string, GpuSample>();
  let identity = new Map<string, GpuIdentity>();
  let started = false;
  let tickTimer: NodeJS.Timeout | undefined;
  let parser = new DmonParser();
  let lastSuccessMs: number | undefined;
  let absent = false;
  let downReason = "not started";
  let lastLoggedProblem: string | undefined;
  let lastFailure: NvsmiFailure | undefined;
  const loggedFailures = new Set<string>();
  let identityFailureLogged = false;
  let identityInFlight: Promise<void> | undefined;

  const metrics = new GpuMetrics(deps.registry, () => {
    if (!started) return; // --once: leave what once() published
    withdrawStale();
    metrics.up.set(isFresh() ? 1 : 0);
  });

  function isFresh(): boolean {
    const t = sup.lastSampleMs;
    return sup.running && t !== undefined && deps.now() - t <= staleMs;
  }

  function withdrawStale(): void {
    const now = deps.now();
    for (const [gpu, s] of latest) {
      if (now - s.atMs > staleMs) {
        latest.delete(gpu);
        metrics.withdrawGpu(gpu);
      }
    }
  }

  function withdrawAll(): void {
    latest.clear();
    metrics.withdrawAllSamples();
    metrics.up.set(0);
  }

  function seeFailure(f: NvsmiFailure): void {
    metrics.countError(f.kind);
    lastFailure = f;
    const key = `${f.kind}|${f.pciBusId ?? ""}`;
    if (!loggedFailures.has(key)) {
      loggedFailures.add(key);
      log.warn({ kind: f.kind, pciBusId: f.pciBusId }, `gpu: nvidia-smi reports: ${f.message}`);
    }
    // A GPU that fell off the bus: its series go now, not 3 intervals later.
    if (f.pciBusId !== undefined && (f.kind === "gpu_lost" || f.kind === "device_handle")) {
      const bus = canonicalBusId(f.pciBusId);
      for (const g of identity.values()) {
        if (g.pciBusId !== undefined && canonicalBusId(g.pciBusId) === bus) {
          latest.delete(g.index);
          metrics.withdrawGpu(g.index);
        }
      }
    }
  }

  async function readIdentity(): Promise<void> {
    const r = await deps.exec.run(file, identityArgs(), { timeoutMs: queryTimeoutMs, maxBytes: ONE_SHOT_MAX_BYTES });
    const parsed = parseIdentity(trustedStdout(r));
    // Partial output (one GPU lost, the others listed) still identifies the GPUs it lists.
    identity = new Map(parsed.gpus.map((g) => [g.index, g]));
    metrics.publishIdentity(parsed.gpus);
    if (r.ok && parsed.gpus.length > 0 && parsed.errors.length === 0) {
      identityFailureLogged = false;
      return;
    }
    // A missing binary is reported once by the dmon side.
    if (r.notFound || identityFailureLogged) return;
    identityFailureLogged = true;
    const why = parsed.errors[0]?.message ?? r.problem ?? "no GPUs in the output";
    log.warn(`gpu: identity query incomplete (${parsed.gpus.length} GPUs identified; samples continue): ${why}`);
  }

  function refreshIdentity(): void {
    if (identityInFlight) return;
    identityInFlight = readIdentity()
      .catch((err: unknown) => log.warn(`gpu: identity query failed: ${String(err)}`))
      .finally(() => {
        identityInFlight = undefined;
      });
  }

  function onLine(line: string): void {
    const ev = parser.feed(line);
    if (!ev) return;
    switch (ev.type) {
      case "row": {
        const now = deps.now();
        latest.set(ev.row.gpu, { atMs: now, values: ev.row.values });
        metrics.publishRow(ev.row.gpu, ev.row.values);
        lastSuccessMs = now;
        if (absent) {
          log.info(`gpu: ${file} found; nvidia-smi dmon is delivering samples`);
          absent = false;
        }
        // After a long healthy run, the next failure is news again: log it at warn.
        if (lastLoggedProblem !== undefined && now - (sup.startedMs ?? now) > QUIET_RESET_MS) {
          lastLoggedProblem = undefined;
          loggedFailures.clear();
        }
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
      downReason = `${file} not found or not executable (no NVIDIA driver tools on this node?); retrying every ${retryS}s`;
      if (!absent) log.info(`gpu: ${file} not found; GPU metrics are off until it appears (checked every ${retryS}s)`);
      absent = true;
      return;
    }
    if (lastSuccessMs === undefined && rejectsGroups(lastFailure) && dmonArgs[2] !== FALLBACK_GROUPS) {
      log.warn(`gpu: nvidia-smi dmon rejected groups "${dmonArgs[2] ?? ""}" (${lastFailure?.message ?? ""}); falling back to "${FALLBACK_GROUPS}"`);
      dmonArgs[2] = FALLBACK_GROUPS;
    }
    const failure = lastFailure ? `: ${lastFailure.message}` : "";
    const what = info.flooded
      ? `nvidia-smi dmon printed ${info.flooded.lines} lines in ${(info.flooded.ms / 1000).toFixed(1)}s (about one per GPU per interval expected) and was killed`
      : info.stalled
        ? `nvidia-smi dmon was silent for ${STALE_INTERVALS} intervals and was killed`
        : exit.problem;
    downReason = `${what}${failure}; restarting in ${retryS}s`;
    lastFailure = undefined;
    if (!started) return;
    const key = info.flooded ? "flooded" : info.stalled ? "stalled" : `${exit.exitCode ?? exit.signal ?? "?"}${failure}`;
    if (key !== lastLoggedProblem) {
      lastLoggedProblem = key;
      log.warn(`gpu: ${downReason}`);
    } else {
      log.debug(`gpu: ${downReason}`);
    }
  }

  // Mutable: an old driver that rejects the configured groups gets dmon's default set instead.
  const dmonArgs = ["dmon", "-s", groups, "-d", String(intervalS)];
  const sup = new Supervisor({
    exec: deps.exec,
    file,
    args: dmonArgs,
    now: deps.now,
    silenceMs: staleMs,
    maxBackoffMs: MAX_BACKOFF_MS,
    lineBudget: DMON_LINE_BUDGET,
    hooks: {
      onLaunch(restart) {
        parser = new DmonParser();
        lastFailure = undefined;
        if (restart) metrics.restarts.inc();
        refreshIdentity();
      },
      onLine,
      onExit,
      onOverlong: () => metrics.malformed.inc(),
    },
  });

  function tick(): void {
    if (sup.checkSilence()) log.debug("gpu: nvidia-smi dmon stalled; killing it");
    withdrawStale();
    metrics.up.set(isFresh() ? 1 : 0);
  }

  async function once(): Promise<void> {
    let r = await deps.exec.run(file, ["dmon", "-s", dmonArgs[2] ?? groups, "-c", "1", "-d", "1"], { timeoutMs: queryTimeoutMs, maxBytes: ONE_SHOT_MAX_BYTES });
    if (!r.ok && dmonArgs[2] !== FALLBACK_GROUPS && rejectsGroups(parseDmonText(r.stdout).errors[0])) {
      dmonArgs[2] = FALLBACK_GROUPS;
      r = await deps.exec.run(file, ["dmon", "-s", FALLBACK_GROUPS, "-c", "1", "-d", "1"], { timeoutMs: queryTimeoutMs, maxBytes: ONE_SHOT_MAX_BYTES });
    }
    if (r.notFound) throw new CollectorError(`${file} not found or not executable`, { absent: true });
    const parsed = parseDmonText(trustedStdout(r));
    for (const f of parseDmonText(r.stdout).errors) metrics.countError(f.kind);
    if (parsed.rows.length === 0) {
      const why = parsed.errors[0]?.message ?? r.problem ?? "nvidia-smi dmon printed no samples";
      throw new CollectorError(`gpu: ${why}`);
    }
    await readIdentity();
    const now = deps.now();
    latest.clear();
    metrics.withdrawAllSamples();
    for (const [gpu, row] of lastRowPerGpu(parsed.rows)) {
      latest.set(gpu, { atMs: now, values: row.values });
      metrics.publishRow(gpu, row.values);
    }
    metrics.up.set(1);
    lastSuccessMs = now;
  }

  return {
    name: "gpu",
    mode: "stream",
    start(): void {
      if (started) return;
      started = true;
      downReason = "waiting for nvidia-smi dmon to start";
      sup.start();
      tickTimer = setInterval(tick, intervalMs);
      tickTimer.unref();
    },
    async stop(): Promise<void> {
      started = false;
      if (tickTimer) clearInterval(tickTimer);
      tickTimer = undefined;
      // 1 s for dmon to end on SIGTERM, then SIGKILL: shutdown has 5 s for everything (agent/main.ts).
      await sup.stop(1000);
      await identityInFlight;
      withdrawAll();
      identity = new Map();
      metrics.publishIdentity([]);
    },
    health(): CollectorHealth {
      const h: CollectorHealth = { ok: started && isFresh() };
      if (lastSuccessMs !== undefined) h.lastSuccessMs = lastSuccessMs;
      if (h.ok) return h;
      if (!started) h.reason = "gpu collector is not running";
      else if (!sup.running) h.reason = downReason;
      else if (sup.lastSampleMs === undefined) {
        h.reason = "waiting for the first sample from nvidia-smi dmon";
        h.starting = true;
      } else h.reason = `no sample from nvidia-smi dmon for ${STALE_INTERVALS} intervals`;
      if (absent) h.absent = true;
      return h;
    },
    once,
    latestSamples(): ReadonlyMap<string, GpuSample> {
      if (started) withdrawStale();
      return latest;
    },
    identities(): ReadonlyMap<string, GpuIdentity> {
      return identity;
    },
  };
}
