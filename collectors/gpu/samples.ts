/**
 * The latest dmon sample of each GPU, as published: a row replaces its GPU's series; a GPU without
 * a fresh row for `staleMs` (3 intervals) is withdrawn, series and sample, never served stale; a
 * GPU that fell off the bus at once, and every GPU when the child is gone.
 */
import type { GpuMetrics } from "./metrics.js";
import type { DmonRow, DmonValues } from "./parse-dmon.js";

export interface GpuSample {
  /** When the row was read (deps.now()). */
  atMs: number;
  /** dmon's values in dmon's units (sm %, pwr W, ...). */
  values: DmonValues;
}

export class LatestSamples {
  private readonly latest = new Map<string, GpuSample>();

  constructor(
    private readonly metrics: GpuMetrics,
    private readonly staleMs: number,
  ) {}

  /** The latest sample per GPU (dmon index): always this one map. */
  get all(): ReadonlyMap<string, GpuSample> {
    return this.latest;
  }

  /** A row of this GPU, read at `atMs`. */
  put(gpu: string, values: DmonValues, atMs: number): void {
    this.latest.set(gpu, { atMs, values });
    this.metrics.publishRow(gpu, values);
  }

  /** Withdraws the GPUs whose latest row is older than staleMs at `nowMs`. */
  withdrawStale(nowMs: number): void {
    for (const [gpu, s] of this.latest) {
      if (nowMs - s.atMs > this.staleMs) {
        this.latest.delete(gpu);
        this.metrics.withdrawGpu(gpu);
      }
    }
  }

  /** Withdraws these GPUs now. */
  withdraw(gpus: Iterable<string>): void {
    for (const gpu of gpus) {
      this.latest.delete(gpu);
      this.metrics.withdrawGpu(gpu);
    }
  }

  withdrawAll(): void {
    this.latest.clear();
    this.metrics.withdrawAllSamples();
  }

  /** Replaces every GPU's sample with these rows, read at `atMs` (--once). */
  replaceAll(rows: ReadonlyMap<string, DmonRow>, atMs: number): void {
    this.withdrawAll();
    for (const [gpu, row] of rows) this.put(gpu, row.values, atMs);
  }
}
