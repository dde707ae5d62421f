/**
 * The node's running agent, asked by `ringwatch check --check.agent-url`: its /metrics, of which the
 * check reads only the series it names (the NCCL RAS diagnostics the agent's querier asked for
 * during a hang). A check never asks NCCL itself: that is a job-wide gather (docs/check.md).
 * The text format is read by hand, line by line, for the names wanted: label values with their
 * escapes (\\, \", \n), no regular expression over a line.
 */
import type { Sample } from "./check-samples.js";

/** The most of the agent's answer read: its /metrics is a few hundred kB at most. */
const MAX_BYTES = 16 << 20;

export type AgentAnswer = { samples: ReadonlyMap<string, Sample[]> } | { error: string };

/** The labels of `{a="x",b="y"}` starting at `text[at] === "{"`; undefined if malformed. */
function labelsAt(text: string, at: number): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (text[i] === " " || text[i] === ",") i++;
    if (text[i] === "}") return { labels, end: i + 1 };
    const eq = text.indexOf("=", i);
    if (eq < 0 || text[eq + 1] !== '"') return undefined;
    const name = text.slice(i, eq).trim();
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        j++;
        value += text[j] === "n" ? "\n" : (text[j] ?? "");
      } else value += text[j];
    }
    if (j >= text.length) return undefined;
    labels[name] = value;
    i = j + 1;
  }
}

/** The series of the metrics `names` in an exposition text (text format 0.0.4 or OpenMetrics). */
export function seriesOf(text: string, names: readonly string[]): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>(names.map((n) => [n, []]));
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line === "" || line.startsWith("#")) continue;
    const brace = line.indexOf("{");
    const space = line.indexOf(" ");
    const nameEnd = brace >= 0 && (space < 0 || brace < space) ? brace : space;
    if (nameEnd <= 0) continue;
    const list = out.get(line.slice(0, nameEnd));
    if (list === undefined) continue;
    let labels: Record<string, string> = {};
    let rest = nameEnd;
    if (line[nameEnd] === "{") {
      const parsed = labelsAt(line, nameEnd);
      if (parsed === undefined) continue;
      labels = parsed.labels;
      rest = parsed.end;
    }
    const value = Number(line.slice(rest).trim().split(" ")[0]);
    if (!Number.isNaN(value)) list.push({ labels, value });
  }
  return out;
}

/** GETs `url` (the agent's /metrics) by `deadlineMs` (Unix ms) and reads the series `names`. */
export async function askAgent(url: string, names: readonly string[], deadlineMs: number): Promise<AgentAnswer> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, deadlineMs - Date.now())), redirect: "error" });
    if (res.status !== 200) return { error: `the agent at ${url} answered HTTP ${res.status}` };
    const length = Number(res.headers.get("content-length") ?? "0");
    if (length > MAX_BYTES) return { error: `the agent at ${url} answered ${length} bytes, over ${MAX_BYTES}` };
    return { samples: seriesOf(await res.text(), names) };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    const name = err instanceof Error && err.name === "TimeoutError" ? "no answer within --check.timeout" : err instanceof Error ? err.message : String(err);
    return { error: `cannot ask the agent at ${url}: ${name}${cause}` };
  }
}
