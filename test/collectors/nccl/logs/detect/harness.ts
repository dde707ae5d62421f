/**
 * Drives the tracker and the detectors from a simulated job with a fake clock: every tick, the
 * lines this node's ranks wrote are ingested with the simulated time as read time, and verdicts
 * are evaluated at that time.
 */
import { Registry } from "prom-client";
import { DEFAULT_DETECT, type CommVerdict, type DetectOptions } from "../../../../../collectors/nccl/logs/detect/types.js";
import { evaluateAll, type NodeView } from "../../../../../collectors/nccl/logs/detect/verdict.js";
import type { GpuReading } from "../../../../../collectors/nccl/verdict/gpu-signature.js";
import { NcclMetrics } from "../../../../../collectors/nccl/metrics.js";
import type { SeriesOptions } from "../../../../../collectors/nccl/series.js";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import type { Scenario } from "../../../../sim/index.js";

export type GpuMode = "none" | "busy" | "spin" | "idle" | ((rank: number, t: number, sim: Scenario) => GpuReading | undefined);

export interface Harness {
  tracker: Tracker;
  registry: Registry;
  metrics: NcclMetrics;
  /** Simulated epoch ms now. */
  now(): number;
  /** Advances by ms in ticks; returns the verdicts after each tick. */
  run(ms: number, tickMs?: number): { t: number; verdicts: CommVerdict[] }[];
  verdicts(): CommVerdict[];
  scrape(): Promise<string>;
}

const READINGS: Record<"busy" | "spin" | "idle", GpuReading> = {
  busy: { sm: 100, powerW: 620, powerLimitW: 700 },
  spin: { sm: 100, powerW: 110, powerLimitW: 700 },
  idle: { sm: 0, powerW: 70, powerLimitW: 700 },
};

/** Ranks whose files this node reads: those on `host` (default: the first node). */
export function createHarness(
  sim: Scenario,
  opts: { host?: string; gpu?: GpuMode; detect?: Partial<DetectOptions>; epochMs?: number; liveness?: "pids" | "unknown"; series?: SeriesOptions } = {},
): Harness {
  const host = opts.host ?? sim.spec.nodes[0];
  const epoch = opts.epochMs ?? 1_800_000_000_000;
  const detect = { ...DEFAULT_DETECT, ...opts.detect };
  const tracker = new Tracker({ maxComms: 256, maxProcesses: 4096 });
  const lineNos = new Map<string, number>();
  let t = 0;
  const gpu = opts.gpu ?? "none";
  const view: NodeView = {
    alive: (p) => {
      if (opts.liveness === "unknown") return undefined; // pods: another PID namespace
      const truth = sim.truth();
      const r = truth.ranks.find((x) => p.sources.has(x.file) || x.file.includes(`-${p.pid}.log`));
      return r ? r.alive : undefined;
    },
    gpuFor: (r) => {
      if (gpu === "none") return undefined;
      const reading = typeof gpu === "function" ? gpu(r.rank, t, sim) : READINGS[gpu];
      return reading ? { gpu: String(r.nvmlDev ?? r.cudaDev ?? r.rank), ...reading } : undefined;
    },
  };
  const registry = new Registry();
  const metrics = new NcclMetrics(registry, () => metrics.publish(tracker, evaluateAll(tracker, epoch + t, detect, view), undefined), opts.series);

  /** Every file is looked at every tick: a line read now was not there at the tick before. */
  let sinceMs: number | undefined;
  function ingest(byFile: Map<string, string[]>, readMs: number): void {
    for (const [file, lines] of byFile) {
      if (host && !file.includes(`-${host}-`)) continue;
      let n = lineNos.get(file) ?? 0;
      for (const line of lines) {
        n++;
        const ev = parseLine(line);
        if (ev) tracker.ingest(ev, { source: file, lineNo: n, readMs, sinceMs });
      }
      lineNos.set(file, n);
    }
  }

  return {
    tracker,
    registry,
    metrics,
    now: () => epoch + t,
    run(ms, tickMs = 1000) {
      const out: { t: number; verdicts: CommVerdict[] }[] = [];
      const end = t + ms;
      while (t < end) {
        const step = Math.min(tickMs, end - t);
        const r = sim.advance(step);
        t += step;
        ingest(r.byFile, epoch + t);
        sinceMs = epoch + t;
        out.push({ t, verdicts: evaluateAll(tracker, epoch + t, detect, view) });
      }
      return out;
    },
    verdicts: () => evaluateAll(tracker, epoch + t, detect, view),
    scrape: () => registry.metrics(),
  };
}

/** First simulated time (ms since start) at which some communicator was hung, or undefined. */
export function firstHang(history: { t: number; verdicts: CommVerdict[] }[]): number | undefined {
  return history.find((h) => h.verdicts.some((v) => v.hangSuspected))?.t;
}
