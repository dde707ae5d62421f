/** Reads deploy/prometheus/ringwatch-rules.yml and its promtool tests, and the metric names PromQL uses. */
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";

export const repoRoot = resolve(import.meta.dirname, "../..");
export const rulesFile = join(repoRoot, "deploy/prometheus/ringwatch-rules.yml");
export const rulesTestDir = join(repoRoot, "deploy/prometheus/tests");
export const alertmanagerFile = join(repoRoot, "deploy/alertmanager/alertmanager.yml");

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

export function loadRules(file = rulesFile): RuleFile {
  return parse(readFileSync(file, "utf8")) as RuleFile;
}

export const allRules = (f: RuleFile): Rule[] => f.groups.flatMap((g) => g.rules);

export function ruleTestFiles(): string[] {
  return readdirSync(rulesTestDir)
    .filter((n) => n.endsWith(".yml"))
    .sort()
    .map((n) => join(rulesTestDir, n));
}

export interface RuleTests {
  tests: {
    name?: string;
    promql_expr_test?: { expr: string; eval_time: string; exp_samples?: unknown[] }[];
    alert_rule_test?: { alertname: string; eval_time: string; exp_alerts?: unknown[] | null }[];
  }[];
}

export function loadRuleTests(): { file: string; doc: RuleTests }[] {
  return ruleTestFiles().map((file) => ({ file, doc: parse(readFileSync(file, "utf8")) as RuleTests }));
}

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on", "ignoring", "group_left", "group_right", "atan2"]);

/**
 * Metric names an expression selects: identifiers that are neither functions, aggregations,
 * keywords, label names (inside {} or by/on/... lists) nor parts of strings, durations or numbers.
 */
export function metricNamesIn(expr: string): string[] {
  let s = expr.replace(/#[^\n]*/g, " ");
  s = s.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  s = s.replace(/\{[^}]*\}/g, " ");
  s = s.replace(/\[[^\]]*\]/g, " ");
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const out = new Set<string>();
  for (const m of s.matchAll(/(?<![\w.:])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const rest = s.slice((m.index ?? 0) + m[0].length).trimStart();
    if (rest.startsWith("(")) continue; // a function or an aggregation
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    out.add(m[0]);
  }
  return [...out];
}

/** ringwatch metric names mentioned in prose (annotations). */
export function metricNamesInText(text: string): string[] {
  return [...new Set([...text.matchAll(/\bringwatch_[a-z0-9_]+/g)].map((m) => m[0]))];
}
