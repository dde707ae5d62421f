/**
 * The one reader of the Prometheus text exposition in the tests: parsePromText (every series with
 * its labels and value, and the TYPE lines), sample (one series' value by its exact text) and
 * samplesOf (the sample lines of one family).
 */

export interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  series: Series[];
  types: Map<string, string>;
}

const SERIES = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;

function unescape(v: string): string {
  return v.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

function parseValue(v: string): number {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  return Number(v);
}

export function parsePromText(text: string): Exposition {
  const series: Series[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const t = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (t?.[1] && t[2]) {
      types.set(t[1], t[2]);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = SERIES.exec(line);
    if (!m?.[1] || m[3] === undefined) throw new Error(`not a series line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) {
      if (l[1] !== undefined && l[2] !== undefined) labels[l[1]] = unescape(l[2]);
    }
    series.push({ name: m[1], labels, value: parseValue(m[3]) });
  }
  return { series, types };
}

/** `name{a="1",b="2"}` with sorted labels, for set comparisons. */
export function seriesKey(s: { name: string; labels: Record<string, string> }): string {
  const labels = Object.entries(s.labels)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(",");
  return `${s.name}{${labels}}`;
}

/** Value of one sample in an exposition, e.g. sample(text, 'ringwatch_gpu_power_watts{gpu="0"}'). */
export function sample(exposition: string, series: string): number | undefined {
  for (const line of exposition.split("\n")) {
    if (line.startsWith(series + " ")) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** Every sample line of one metric family name. */
export function samplesOf(exposition: string, name: string): string[] {
  return exposition.split("\n").filter((l) => l.startsWith(name + "{") || l.startsWith(name + " "));
}
