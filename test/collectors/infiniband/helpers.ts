/** Shared set-up for collector tests: deps with a fresh registry, and reading the exposition back. */
import type { CollectorDeps } from "../../../collectors/collector.js";
import { parsePromText, type Series } from "../../helpers/exposition.js";

/** The infiniband tests' clock: fixed, so that nothing in their expositions depends on when they ran. */
export const fixedNow = (): number => 1_700_000_000_000;

/** Every ringwatch_infiniband_* series currently exposed. */
export async function exposed(deps: CollectorDeps): Promise<Series[]> {
  return parsePromText(await deps.registry.metrics()).series.filter((s) => s.name.startsWith("ringwatch_infiniband_"));
}

/** Value of one series, or undefined. */
export function valueOf(series: Series[], name: string, labels: Record<string, string>): number | undefined {
  return series.find(
    (s) =>
      s.name === `ringwatch_infiniband_${name}` &&
      Object.keys(labels).every((k) => s.labels[k] === labels[k]) &&
      Object.keys(s.labels).length === Object.keys(labels).length,
  )?.value;
}

/** Distinct `device/port` pairs that have a state_id series. */
export function portsOf(series: Series[]): string[] {
  return series
    .filter((s) => s.name === "ringwatch_infiniband_state_id")
    .map((s) => `${s.labels.device}/${s.labels.port}`)
    .sort();
}
