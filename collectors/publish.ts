/**
 * Replacing a metric's series in one synchronous step. Collectors read their source completely,
 * then call these: a scrape never sees half an update, and series of things that vanished are gone.
 */
import { Counter, Gauge, type Registry } from "prom-client";

export type Labels = Record<string, string>;
export interface Sample {
  labels: Labels;
  value: number;
}

export function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

export function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

/** Replace every series of a gauge. Non-finite values are dropped (absent, never NaN). */
export function publishGauge(metric: Gauge<string>, samples: Iterable<Sample>): void {
  metric.reset();
  for (const s of samples) {
    if (Number.isFinite(s.value)) metric.set(s.labels, s.value);
  }
}

/**
 * Replace every series of a counter with absolute values read from a source that counts by
 * itself (sysfs, perfquery). Negative and non-finite values are dropped.
 */
export function publishCounter(metric: Counter<string>, samples: Iterable<Sample>): void {
  metric.reset();
  for (const s of samples) {
    if (Number.isFinite(s.value) && s.value >= 0) metric.inc(s.labels, s.value);
  }
}
