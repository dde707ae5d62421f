/**
 * The series of one collector run, by metric name, as `/metrics` would show them
 * (registry.getMetricsAsJSON()): the check judges exactly these values.
 */
import type { MetricFamily } from "./check-run.js";

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

export class Samples {
  private readonly byName = new Map<string, Sample[]>();

  constructor(families: readonly MetricFamily[]) {
    for (const f of families) {
      for (const v of f.values) {
        // Histograms and summaries name each of their series (`_bucket`, `_sum`); the type omits it.
        const name = (v as { metricName?: string }).metricName ?? f.name;
        const labels: Record<string, string> = {};
        for (const [k, x] of Object.entries(v.labels)) if (x !== undefined) labels[k] = String(x);
        const list = this.byName.get(name) ?? [];
        list.push({ labels, value: v.value });
        this.byName.set(name, list);
      }
    }
  }

  /** Every series of a metric (none when it has no series). */
  of(name: string): readonly Sample[] {
    return this.byName.get(name) ?? [];
  }

  /** The value of the first series whose labels include these, or undefined. */
  value(name: string, labels: Readonly<Record<string, string>>): number | undefined {
    return this.of(name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  }
}
