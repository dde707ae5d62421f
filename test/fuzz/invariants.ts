/**
 * Checks shared by the fuzz properties: every number a parser returns is finite (never NaN or
 * ±Infinity), counters are non-negative, and strings are bounded. Violations come back as
 * readable paths (`$.ports[0].rateGbps = Infinity`) so a failing property says where.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fixturesDir, listFixtures, readCapture, readFixtureRaw } from "../helpers/fixtures.js";

export interface Limits {
  /** Longest string allowed anywhere in the value. */
  maxString?: number;
  /** Property names whose numbers must be >= 0 (counters, sizes, lengths). */
  nonNegative?: readonly string[];
}

/** Walks a parser result (objects, arrays, Maps, Sets) and lists what breaks the limits. */
export function violations(value: unknown, limits: Limits = {}): string[] {
  const out: string[] = [];
  const nonNeg = new Set(limits.nonNegative ?? []);
  const seen = new Set<unknown>();
  const walk = (v: unknown, path: string, key: string): void => {
    if (out.length > 10) return;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) out.push(`${path} = ${v}`);
      else if (nonNeg.has(key) && v < 0) out.push(`${path} = ${v} (negative)`);
      return;
    }
    if (typeof v === "bigint") return;
    if (typeof v === "string") {
      if (limits.maxString !== undefined && v.length > limits.maxString) out.push(`${path}: string of ${v.length} chars`);
      return;
    }
    if (typeof v !== "object" || v === null || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, x] of v) walk(x, `${path}.get(${String(k).slice(0, 40)})`, String(k));
      return;
    }
    if (v instanceof Set) {
      let i = 0;
      for (const x of v) walk(x, `${path}{${i++}}`, key);
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((x, i) => walk(x, `${path}[${i}]`, key));
      return;
    }
    for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`, k);
  };
  walk(value, "$", "");
  return out;
}

/** Total characters of every string in a value (for "output no larger than input" checks). */
export function stringChars(value: unknown): number {
  let n = 0;
  const walk = (v: unknown): void => {
    if (typeof v === "string") n += v.length;
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object" && v !== null) Object.values(v).forEach(walk);
  };
  walk(value);
  return n;
}

/** Every capture of a tools/ fixture folder, as printed (provenance line removed). */
export function toolCaptures(dir: string): string[] {
  return listFixtures(`tools/${dir}`).map((f) => readCapture(`tools/${dir}/${f}`));
}

/** The non-blank lines of some texts. */
export function linesOf(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of texts) for (const l of t.split("\n")) if (l.trim() !== "") out.push(l.replace(/\r$/, ""));
  return out;
}

/** Every NCCL / PyTorch log line of the captures in test/fixtures/nccl. */
export function ncclLines(): string[] {
  return linesOf(listFixtures("nccl", ".log").map((f) => readCapture(`nccl/${f}`)));
}

/** The /proc/modules captures of test/fixtures/procfs/gdr-* (no provenance line in these). */
export function procModulesTexts(): string[] {
  const root = join(fixturesDir, "procfs");
  return readdirSync(root)
    .filter((d) => d.startsWith("gdr-"))
    .sort()
    .map((d) => readFixtureRaw(`procfs/${d}/modules`));
}
