import { pino, type Logger } from "pino";
import type { Registry } from "prom-client";

export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** A pino logger that keeps its JSON lines in memory. */
export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { logger, lines };
}

export interface Series {
  labels: Record<string, string | number>;
  value: number;
}

/** Scrape the registry (collect hooks run, as for an HTTP scrape) and return one metric's series. */
export async function scrape(registry: Registry): Promise<Map<string, Series[]>> {
  const all = await registry.getMetricsAsJSON();
  return new Map(all.map((m) => [m.name, m.values.map((v) => ({ labels: { ...v.labels } as Series["labels"], value: v.value }))]));
}

export async function series(registry: Registry, name: string): Promise<Series[]> {
  return (await scrape(registry)).get(name) ?? [];
}

/** Value of the series whose labels include `labels`, or undefined when there is none. */
export async function value(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const s = (await series(registry, name)).find((x) => Object.entries(labels).every(([k, v]) => String(x.labels[k]) === v));
  return s?.value;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
