/**
 * The text exposition (format 0.0.4) of a registry: byte for byte what prom-client's
 * registry.metrics() returns, at a fraction of its cost, except that a control character in a
 * label value is written `\xNN` (prom-client writes it raw, a line feed as `\n`). prom-client
 * builds every sample line from arrays it filters and joins, escapes every label value with two
 * regex replaces, and flattens an empty "shared labels" object per sample; on a GPU node with
 * ~1,200 series that was most of a scrape. Here HELP/TYPE headers are cached per metric, a label
 * value is escaped only when it holds a character that needs it, and each metric is one string
 * built by appending.
 */
import type { Registry } from "prom-client";
import { controlEscape } from "../control-chars.js";

interface Sample {
  value: number;
  labels?: Record<string, string | number | undefined>;
  metricName?: string;
  sharedLabels?: Record<string, string | number | undefined>;
}

interface Snapshot {
  name: string;
  help: string;
  type: string;
  values?: Sample[];
}

type Gettable = { get(): Promise<Snapshot> | Snapshot; getForPromString?: () => Promise<Snapshot> | Snapshot };

/** What a label value cannot hold as it is: `\\`, `"`, and the controls of control-chars.ts. One class: no backtracking. */
const NEEDS_ESCAPE = /[\\"\x00-\x1f\x7f-\x9f]/;

function escapeHelp(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/**
 * A label value as the text format writes it: `\\` and `"` escaped, and every control that a job's
 * log put there written `\xNN` (docs/metrics.md), its backslash escaped in the text: ESC is
 * `\\x1b` in the exposition and `\x1b` in Prometheus. No raw control reaches a label value.
 */
function escapeLabel(v: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    let rep: string;
    if (c === 92) rep = "\\\\";
    else if (c === 34) rep = '\\"';
    else {
      const e = controlEscape(c);
      if (e === undefined) continue;
      rep = `\\${e}`;
    }
    out += v.slice(from, i) + rep;
    from = i + 1;
  }
  return out + v.slice(from);
}

function labelValue(v: string | number | undefined): string {
  if (typeof v !== "string") return `${v}`;
  return NEEDS_ESCAPE.test(v) ? escapeLabel(v) : v;
}

function valueText(v: number): string {
  if (Number.isNaN(v)) return "Nan";
  if (!Number.isFinite(v)) return v < 0 ? "-Inf" : "+Inf";
  return `${v}`;
}

const headers = new Map<string, string>();

function header(m: Snapshot): string {
  const key = `${m.name}\u0000${m.type}\u0000${m.help}`;
  let h = headers.get(key);
  if (h === undefined) {
    const name = escapeHelp(m.name);
    h = `# HELP ${name} ${escapeHelp(m.help)}\n# TYPE ${name} ${m.type}`;
    if (headers.size > 10_000) headers.clear();
    headers.set(key, h);
  }
  return h;
}

function sampleLine(name: string, s: Sample): string {
  let line = s.metricName ?? name;
  const labels = s.labels;
  const shared = s.sharedLabels;
  let first = true;
  if (labels !== undefined) {
    for (const k in labels) {
      if (!Object.prototype.hasOwnProperty.call(labels, k)) continue;
      if (shared !== undefined && Object.prototype.hasOwnProperty.call(shared, k)) continue;
      line += `${first ? "{" : ","}${k}="${labelValue(labels[k])}"`;
      first = false;
    }
  }
  if (shared !== undefined) {
    for (const k in shared) {
      if (!Object.prototype.hasOwnProperty.call(shared, k)) continue;
      line += `${first ? "{" : ","}${k}="${labelValue(shared[k])}"`;
      first = false;
    }
  }
  if (!first) line += "}";
  return `${line} ${valueText(s.value)}`;
}

function render(m: Snapshot): string {
  let out = header(m);
  const name = escapeHelp(m.name);
  for (const s of m.values ?? []) out += `\n${sampleLine(name, s)}`;
  return out;
}

/** registry.metrics() for a registry without default labels, in the Prometheus text format. */
export async function exposition(registry: Registry): Promise<string> {
  const snapshots = await Promise.all(
    registry.getMetricsAsArray().map((metric) => {
      const m = metric as unknown as Gettable;
      return Promise.resolve(typeof m.getForPromString === "function" ? m.getForPromString() : m.get());
    }),
  );
  return `${snapshots.map(render).join("\n\n")}\n`;
}
