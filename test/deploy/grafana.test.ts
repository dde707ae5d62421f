/**
 * deploy/grafana/ringwatch-dashboard.json: structure (the datasource variable, variables, ids,
 * layout), the provisioning file beside it, and every PromQL expression in it. A small PromQL
 * tokenizer pulls the metric names out of each expression; each name must be registered by a real
 * agent, be a recording rule of deploy/prometheus/ringwatch-rules.yml, or be a Prometheus built-in
 * series. Where promtool is installed (CI installs prometheus), every expression is also evaluated
 * on a synthetic two-node cluster with `promtool test rules`: it must parse, run without a matching
 * error and return samples.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createAgent } from "../../agent/app.js";
import { parseCli } from "../../agent/config/config.js";

const root = resolve(import.meta.dirname, "../..");
const dashboardPath = join(root, "deploy/grafana/ringwatch-dashboard.json");
const rulesPath = join(root, "deploy/prometheus/ringwatch-rules.yml");

// ───────────────────────────── PromQL tokenizer

type TokenKind = "ident" | "string" | "number" | "duration" | "op" | "punct" | "var" | "range";
export interface Token {
  kind: TokenKind;
  /** Source text; for strings the unquoted value. */
  text: string;
  pos: number;
}

const IDENT = /^[A-Za-z_:][A-Za-z0-9_:]*/;
const DURATION = /^(?:\d+(?:ms|[smhdwy]))+/;
const HEX = /^0[xX][0-9a-fA-F]+/;
const FLOAT = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const OPS = ["==", "!=", "<=", ">=", "=~", "!~", "<", ">", "=", "+", "-", "*", "/", "%", "^", "@"];

/** Splits one PromQL expression (Grafana variables allowed) into tokens; throws on anything else. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`PromQL: ${why} at ${i} in ${JSON.stringify(src)}`);
  };
  while (i < src.length) {
    const c = src.charAt(i);
    const rest = src.slice(i);
    if (/\s/.test(c)) {
      i++;
    } else if (c === "#") {
      while (i < src.length && src.charAt(i) !== "\n") i++;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let value = "";
      for (;;) {
        if (j >= src.length) fail("unterminated string");
        const d = src.charAt(j);
        if (d === "\\") {
          value += src.charAt(j + 1);
          j += 2;
        } else if (d === c) {
          break;
        } else {
          value += d;
          j++;
        }
      }
      out.push({ kind: "string", text: value, pos: i });
      i = j + 1;
    } else if (c === "`") {
      const j = src.indexOf("`", i + 1);
      if (j < 0) fail("unterminated raw string");
      out.push({ kind: "string", text: src.slice(i + 1, j), pos: i });
      i = j + 1;
    } else if (c === "$") {
      const m = /^\$(?:\{[^}]+\}|\w+)/.exec(rest);
      if (!m) fail("bad variable");
      out.push({ kind: "var", text: m?.[0] ?? "", pos: i });
      i += m?.[0].length ?? 1;
    } else if (c === "[") {
      // Range or subquery: durations, ':', Grafana variables. No metric name can appear inside.
      const j = src.indexOf("]", i);
      if (j < 0) fail("unterminated range");
      const body = src.slice(i + 1, j);
      if (!/^[\s\w$:{}.+-]+$/.test(body)) fail(`bad range [${body}]`);
      out.push({ kind: "range", text: body.trim(), pos: i });
      i = j + 1;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(src.charAt(i + 1)))) {
      const d = DURATION.exec(rest);
      const m = d ?? HEX.exec(rest) ?? FLOAT.exec(rest);
      const text = m?.[0] ?? "";
      if (/^[A-Za-z0-9_:]/.test(src.slice(i + text.length))) fail("bad number or duration");
      out.push({ kind: d ? "duration" : "number", text, pos: i });
      i += text.length;
    } else if (IDENT.test(rest)) {
      const text = IDENT.exec(rest)?.[0] ?? "";
      out.push({ kind: "ident", text, pos: i });
      i += text.length;
    } else if ("(){},".includes(c)) {
      out.push({ kind: "punct", text: c, pos: i });
      i++;
    } else {
      const op = OPS.find((o) => rest.startsWith(o));
      if (!op) fail(`unexpected ${JSON.stringify(c)}`);
      out.push({ kind: "op", text: op ?? c, pos: i });
      i += op?.length ?? 1;
    }
  }
  return out;
}

const AGGREGATIONS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
  "limitk",
  "limit_ratio",
]);
const FUNCTIONS = new Set([
  ...AGGREGATIONS,
  ..."abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil changes clamp clamp_max clamp_min cos cosh count_over_time days_in_month day_of_month day_of_week day_of_year deg delta deriv double_exponential_smoothing exp first_over_time floor histogram_avg histogram_count histogram_fraction histogram_quantile histogram_stddev histogram_stdvar histogram_sum holt_winters hour idelta increase info irate label_join label_replace last_over_time ln log10 log2 mad_over_time max_over_time min_over_time minute month pi predict_linear present_over_time quantile_over_time rad rate resets round scalar sgn sin sinh sort sort_by_label sort_by_label_desc sort_desc sqrt stddev_over_time stdvar_over_time sum_over_time tan tanh time timestamp ts_of_last_over_time ts_of_max_over_time ts_of_min_over_time vector year start end".split(
    " ",
  ),
]);
const BINARY_KEYWORDS = new Set(["and", "or", "unless", "atan2"]);
const GROUPING = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const MATCH_OPS = new Set(["=", "!=", "=~", "!~"]);

export interface Selector {
  metric: string | undefined;
  labels: string[];
}
export interface ExprInfo {
  metrics: string[];
  selectors: Selector[];
  /** Labels named in by / without / on / ignoring / group_left / group_right. */
  grouping: string[];
  /** Labels an expression creates: count_values' first argument, label_replace's and label_join's second. */
  created: string[];
}

/** What one PromQL expression reads: metric names (not functions, keywords, labels, durations, strings). */
export function analyzeExpr(src: string): ExprInfo {
  const toks = tokenize(src);
  const selectors: Selector[] = [];
  const grouping: string[] = [];
  const created: string[] = [];
  const at = (k: number): Token | undefined => toks[k];
  const is = (k: number, kind: TokenKind, text?: string): boolean => at(k)?.kind === kind && (text === undefined || at(k)?.text === text);

  /** Parses `{...}` starting at k (the `{`); returns the index after `}`. */
  const matchers = (k: number, sel: Selector): number => {
    let j = k + 1;
    while (!is(j, "punct", "}")) {
      const t = at(j);
      if (!t) throw new Error(`PromQL: unterminated {} in ${JSON.stringify(src)}`);
      if (t.kind === "punct" && t.text === ",") {
        j++;
        continue;
      }
      const op = at(j + 1);
      if ((t.kind === "ident" || t.kind === "string") && op?.kind === "op" && MATCH_OPS.has(op.text)) {
        const value = at(j + 2);
        if (value?.kind !== "string") throw new Error(`PromQL: matcher ${t.text}${op.text} needs a string in ${JSON.stringify(src)}`);
        if (t.text === "__name__") {
          if (op.text !== "=") throw new Error(`PromQL: a regex or negative __name__ matcher cannot be checked: ${src}`);
          sel.metric = value.text;
        } else {
          sel.labels.push(t.text);
        }
        j += 3;
      } else if (t.kind === "string" && sel.metric === undefined) {
        sel.metric = t.text; // {"metric.name", ...} (Prometheus 3 quoted names)
        j++;
      } else {
        throw new Error(`PromQL: bad matcher ${JSON.stringify(t.text)} in ${JSON.stringify(src)}`);
      }
    }
    return j + 1;
  };

  /** The first token of argument n of the call whose `(` is at index open. */
  const argument = (open: number, n: number): Token | undefined => {
    let depth = 0;
    let seen = 0;
    for (let j = open + 1; j < toks.length; j++) {
      const t = toks[j];
      if (!t) break;
      if (seen === n && depth === 0 && !(t.kind === "punct" && (t.text === "," || t.text === ")"))) return t;
      if (t.kind === "punct" && (t.text === "(" || t.text === "{")) depth++;
      else if (t.kind === "punct" && (t.text === ")" || t.text === "}")) {
        if (depth === 0) return undefined;
        depth--;
      } else if (t.kind === "punct" && t.text === "," && depth === 0) seen++;
    }
    return undefined;
  };

  let k = 0;
  while (k < toks.length) {
    const t = toks[k];
    if (!t) break;
    if (t.kind === "punct" && t.text === "{") {
      const sel: Selector = { metric: undefined, labels: [] };
      k = matchers(k, sel);
      selectors.push(sel);
      continue;
    }
    if (t.kind !== "ident") {
      k++;
      continue;
    }
    const lower = t.text.toLowerCase();
    if (lower === "inf" || lower === "nan" || lower === "bool" || lower === "offset" || BINARY_KEYWORDS.has(lower)) {
      k++;
      continue;
    }
    if (GROUPING.has(t.text)) {
      k++;
      if (is(k, "punct", "(")) {
        k++;
        while (!is(k, "punct", ")")) {
          const l = at(k);
          if (!l) throw new Error(`PromQL: unterminated ${t.text}(...) in ${JSON.stringify(src)}`);
          if (l.kind === "ident" || l.kind === "string") grouping.push(l.text);
          else if (!(l.kind === "punct" && l.text === ",")) throw new Error(`PromQL: bad label ${JSON.stringify(l.text)} in ${t.text}(...)`);
          k++;
        }
        k++;
      }
      continue;
    }
    const next = at(k + 1);
    const isCall = next?.kind === "punct" && next.text === "(";
    const isAggregation = AGGREGATIONS.has(t.text) && next?.kind === "ident" && (next.text === "by" || next.text === "without");
    if (isCall || isAggregation) {
      if (!FUNCTIONS.has(t.text)) throw new Error(`PromQL: unknown function ${t.text}() in ${JSON.stringify(src)}`);
      let open = k + 1;
      while (open < toks.length && !is(open, "punct", "(")) open++;
      if (isAggregation) {
        // skip `by (labels)`: the argument list is the next `(` after it
        open++;
        while (open < toks.length && !is(open, "punct", ")")) open++;
        open++;
      }
      const made = t.text === "count_values" ? argument(open, 0) : t.text === "label_replace" || t.text === "label_join" ? argument(open, 1) : undefined;
      if (made?.kind === "string") created.push(made.text);
      k++;
      continue;
    }
    const sel: Selector = { metric: t.text, labels: [] };
    k++;
    if (is(k, "punct", "{")) k = matchers(k, sel);
    selectors.push(sel);
  }
  const metrics = [...new Set(selectors.map((s) => s.metric).filter((m): m is string => m !== undefined))];
  return { metrics, selectors, grouping, created };
}

export function metricNames(src: string): string[] {
  return analyzeExpr(src).metrics;
}

/** A Grafana Prometheus variable query: label_values(selector, label), label_values(label), query_result(expr), metrics(re), label_names(). */
export function analyzeVariableQuery(q: string): { info: ExprInfo; label: string | undefined; promql: string | undefined } {
  const empty: ExprInfo = { metrics: [], selectors: [], grouping: [], created: [] };
  const m = /^\s*(label_values|query_result|metrics|label_names)\s*\(([\s\S]*)\)\s*$/.exec(q);
  if (!m) {
    const info = analyzeExpr(q); // Grafana 10+: a plain PromQL query is a "classic query"
    return { info, label: undefined, promql: q };
  }
  const [, fn, inner = ""] = m;
  if (fn === "query_result") return { info: analyzeExpr(inner), label: undefined, promql: inner };
  if (fn !== "label_values") return { info: empty, label: undefined, promql: undefined };
  const toks = tokenize(inner);
  let depth = 0;
  let comma = -1;
  toks.forEach((t, idx) => {
    if (t.kind === "punct" && (t.text === "(" || t.text === "{")) depth++;
    else if (t.kind === "punct" && (t.text === ")" || t.text === "}")) depth--;
    else if (t.kind === "punct" && t.text === "," && depth === 0) comma = idx;
  });
  const labelTok = toks[comma + 1];
  if (labelTok?.kind !== "ident" || toks.length !== comma + 2) throw new Error(`label_values: bad label in ${JSON.stringify(q)}`);
  if (comma < 0) return { info: empty, label: labelTok.text, promql: undefined };
  const selector = inner.slice(0, toks[comma]?.pos);
  return { info: analyzeExpr(selector), label: labelTok.text, promql: `group by (${labelTok.text}) (${selector})` };
}

// ───────────────────────────── the dashboard

interface DsRef {
  type?: string;
  uid?: string;
}
interface Target {
  expr?: string;
  refId?: string;
  datasource?: DsRef;
  legendFormat?: string;
}
interface Override {
  matcher: { id: string; options: unknown };
  properties: { id: string; value: unknown }[];
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: DsRef;
  gridPos?: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  panels?: Panel[];
  collapsed?: boolean;
  fieldConfig?: { defaults?: { unit?: string }; overrides?: Override[] };
}
interface Variable {
  name: string;
  type: string;
  current?: unknown;
  multi?: boolean;
  includeAll?: boolean;
  datasource?: DsRef;
  query?: string | { query?: string };
  definition?: string;
}
interface Dashboard {
  __inputs?: unknown;
  title?: string;
  uid?: string;
  schemaVersion?: number;
  refresh?: string;
  panels: Panel[];
  templating: { list: Variable[] };
  annotations?: { list: { datasource?: DsRef; expr?: string; name?: string }[] };
}

const dashboardText = readFileSync(dashboardPath, "utf8");
const dashboard = JSON.parse(dashboardText) as Dashboard;

/** Every panel, rows' collapsed children included. */
function allPanels(): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}
const dataPanels = (): Panel[] => allPanels().filter((p) => p.type !== "row");

function variableQuery(v: Variable): string {
  return typeof v.query === "string" ? v.query : (v.query?.query ?? v.definition ?? "");
}
/** The variables that run a PromQL query (the datasource variable's query is a plugin id). */
const queryVariables = (): Variable[] => dashboard.templating.list.filter((v) => v.type === "query");

/** What every Prometheus query of the dashboard names as its data source: the `datasource` variable. */
const DATASOURCE = { type: "prometheus", uid: "${datasource}" };

/** Every string of a JSON value, with where it stands (`panels[3].targets[0].expr`). */
function jsonStrings(v: unknown, path = ""): { path: string; text: string }[] {
  if (typeof v === "string") return [{ path, text: v }];
  if (Array.isArray(v)) return v.flatMap((x, i) => jsonStrings(x, `${path}[${i}]`));
  if (v !== null && typeof v === "object") return Object.entries(v).flatMap(([k, x]) => jsonStrings(x, path ? `${path}.${k}` : k));
  return [];
}

/** Grafana's variable syntaxes: `$name`, `${name}`, `${name:format}`, `${name.field}`, `[[name]]`, `[[name:format]]`. */
const VARIABLE_USE = /\$\{(\w+)(?:[:.][^}]*)?\}|\$(\w+)|\[\[(\w+)(?::[^\]]*)?\]\]/g;

/** Every variable a dashboard uses, anywhere in it (queries, titles, links, datasource uids), with where. */
function variableUses(d: unknown): { path: string; name: string }[] {
  return jsonStrings(d).flatMap(({ path, text }) => [...text.matchAll(VARIABLE_USE)].map((m) => ({ path, name: m[1] ?? m[2] ?? m[3] ?? "" })));
}

/** `path: name` for each use of a variable that the dashboard does not define and Grafana does not provide. */
function undefinedVariables(d: Dashboard): string[] {
  const defined = new Set((d.templating.list ?? []).map((v) => v.name));
  return variableUses(d)
    .filter((u) => !defined.has(u.name) && !GRAFANA_VARS.has(u.name))
    .map((u) => `${u.path}: ${u.name}`);
}

/** Every `datasource` value of a JSON value (panels, targets, variables, annotations), with where. */
function datasourceRefs(v: unknown, path = ""): { path: string; ref: unknown }[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => datasourceRefs(x, `${path}[${i}]`));
  if (v === null || typeof v !== "object") return [];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => {
    const at = path ? `${path}.${k}` : k;
    return k === "datasource" ? [{ path: at, ref: x }, ...datasourceRefs(x, at)] : datasourceRefs(x, at);
  });
}

interface Expr {
  where: string;
  expr: string;
  panel?: Panel;
  target?: Target;
}
function panelExprs(): Expr[] {
  return dataPanels().flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel ${p.id ?? "?"} "${p.title ?? ""}" ${t.refId ?? ""}`, expr: t.expr ?? "", panel: p, target: t })),
  );
}
function annotationExprs(): Expr[] {
  return (dashboard.annotations?.list ?? []).filter((a) => a.expr !== undefined).map((a) => ({ where: `annotation "${a.name ?? ""}"`, expr: a.expr ?? "" }));
}

// ───────────────────────────── what exists

interface Family {
  name: string;
  type: string;
  labels: string[];
}
function registeredFamilies(): Family[] {
  const action = parseCli([], {});
  if (action.kind !== "run") throw new Error("expected run");
  const agent = createAgent(action.config, { logger: pino({ level: "silent" }) });
  return agent.registry.getMetricsAsArray().map((m) => ({
    name: m.name,
    type: String(m.type),
    labels: [...((m as { labelNames?: readonly string[] }).labelNames ?? [])],
  }));
}
const families = registeredFamilies();
const familyByName = new Map<string, Family>();
for (const f of families) {
  familyByName.set(f.name, f);
  if (f.type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) familyByName.set(f.name + s, { ...f, labels: [...f.labels, "le"] });
  if (f.type === "summary") for (const s of ["_sum", "_count"]) familyByName.set(f.name + s, f);
}

function recordingRules(): string[] {
  if (!existsSync(rulesPath)) return [];
  const doc = parseYaml(readFileSync(rulesPath, "utf8")) as unknown;
  const groups = (doc as { groups?: { rules?: { record?: unknown }[] }[] } | null)?.groups ?? [];
  return groups.flatMap((g) => (g.rules ?? []).map((r) => r.record)).filter((r): r is string => typeof r === "string");
}
const rules = new Set(recordingRules());

/** Series Prometheus itself writes for a target or for alerts. */
const PROMETHEUS_BUILTINS = new Set([
  "up",
  "scrape_duration_seconds",
  "scrape_samples_scraped",
  "scrape_samples_post_metric_relabeling",
  "scrape_series_added",
  "ALERTS",
  "ALERTS_FOR_STATE",
]);
/** Labels the scrape configuration adds; ringwatch never sets them (docs/metrics.md). */
const TARGET_LABELS = ["node", "instance", "job"];
/** Grafana's global variables (and `$__all`, the value of an "All" selection). */
const GRAFANA_VARS = new Set([
  "__all",
  "__interval",
  "__interval_ms",
  "__rate_interval",
  "__rate_interval_ms",
  "__range",
  "__range_s",
  "__range_ms",
  "__from",
  "__to",
  "__dashboard",
  "__org",
  "__user",
]);

function unknownMetrics(exprs: string[], known: (name: string) => boolean): string[] {
  return [...new Set(exprs.flatMap((e) => metricNames(e)))].filter((n) => !known(n)).sort();
}
const isKnown = (n: string): boolean => familyByName.has(n) || rules.has(n) || PROMETHEUS_BUILTINS.has(n);

// ───────────────────────────── tests

describe("PromQL tokenizer", () => {
  const cases: [string, string[]][] = [
    ['sum by (comm_id) (rate(ringwatch_nccl_rank_collectives_total{comm_id="$comm_id"}[5m]))', ["ringwatch_nccl_rank_collectives_total"]],
    ['time() - ringwatch_nccl_rank_last_progress_timestamp_seconds{rank="3", node=~"$node"}', ["ringwatch_nccl_rank_last_progress_timestamp_seconds"]],
    ["a * on (instance, job) group_left (name) b offset 5m", ["a", "b"]],
    ["sum without (gpu) (x) > bool 0 and y unless z or w", ["x", "y", "z", "w"]],
    ["sum(x) by (node) / ignoring (kind) group_right count(y)", ["x", "y"]],
    ['count_values by (link_type) ("mtu", m * on (device) group_left (link_type) info{link_type!="loopback"})', ["m", "info"]],
    ["rate(x{l=\"a{b}[5m] by (c) y\"}[$__rate_interval]) + rate(z{l='it\\'s'}[${__rate_interval}])", ["x", "z"]],
    ['{__name__="x", a="b"} + {"y.z", a="b"}', ["x", "y.z"]],
    ["ringwatch:nccl_rank_collectives:rate5m", ["ringwatch:nccl_rank_collectives:rate5m"]],
    ["max_over_time(x[5m:1m]) @ start() - x @ end() offset -1h30m", ["x"]],
    ["1e3 + 0x1F + Inf + -NaN + .5 + 2.5e-3 * vector(1) atan2 scalar(x)", ["x"]],
    ["x # by (y) z", ["x"]],
    ['label_replace(x, "collector", "gdr", "", "") or topk by (a) (1, y)', ["x", "y"]],
    ["histogram_quantile(0.99, sum by (le) (rate(nodejs_gc_duration_seconds_bucket[5m])))", ["nodejs_gc_duration_seconds_bucket"]],
  ];
  it.each(cases)("%s", (expr, want) => {
    expect(metricNames(expr)).toEqual(want);
  });

  it("keeps label names, grouping labels and created labels apart from metric names", () => {
    const info = analyzeExpr('count_values by (link_type) ("mtu", m{device="ib0"} * on (instance, device) group_left (link_type) n)');
    expect(info.metrics).toEqual(["m", "n"]);
    expect(info.grouping).toEqual(["link_type", "instance", "device", "link_type"]);
    expect(info.created).toEqual(["mtu"]);
    expect(info.selectors).toEqual([
      { metric: "m", labels: ["device"] },
      { metric: "n", labels: [] },
    ]);
    expect(analyzeExpr('label_replace(x, "collector", "gdr", "", "")').created).toEqual(["collector"]);
  });

  it("reads Grafana variable queries", () => {
    const lv = analyzeVariableQuery('label_values(ringwatch_nccl_rank_info{node=~"$node", x="a,b"}, comm_id)');
    expect(lv.info.metrics).toEqual(["ringwatch_nccl_rank_info"]);
    expect(lv.label).toBe("comm_id");
    expect(lv.promql).toBe('group by (comm_id) (ringwatch_nccl_rank_info{node=~"$node", x="a,b"})');
    expect(analyzeVariableQuery("label_values(node)")).toMatchObject({ label: "node", info: { metrics: [] } });
    expect(analyzeVariableQuery("query_result(topk(5, rate(x[5m])))").info.metrics).toEqual(["x"]);
    expect(analyzeVariableQuery("up").info.metrics).toEqual(["up"]);
  });

  it.each([
    ["rat(x[5m])", /unknown function rat/],
    ['x{a="b}', /unterminated string/],
    ["x[5m", /unterminated range/],
    ["x{a}", /bad matcher/],
    ["5mx", /bad number or duration/],
    ["x{a=b}", /needs a string/],
    ['{__name__=~"x.*"}', /cannot be checked/],
    ["x ; y", /unexpected/],
    ["label_values(x, 1)", /bad label/],
  ])("rejects %s", (expr, why) => {
    expect(() => (expr.startsWith("label_values") ? analyzeVariableQuery(expr) : analyzeExpr(expr))).toThrow(why);
  });

  it("flags a metric ringwatch does not export", () => {
    expect(unknownMetrics(["rate(ringwatch_gpu_utilisation_ratio[5m]) + ringwatch_gpu_utilization_ratio", "up"], isKnown)).toEqual([
      "ringwatch_gpu_utilisation_ratio",
    ]);
  });
});

describe("deploy/grafana/ringwatch-dashboard.json", () => {
  it("is a dashboard that needs no import input, so that file provisioning and the sidecar can load it", () => {
    // Only the import dialog fills __inputs in; a provisioned dashboard would keep ${DS_...} as it is.
    expect(Object.keys(dashboard)).not.toContain("__inputs");
    expect(dashboard.title).toMatch(/ringwatch/);
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36); // Grafana 9.x schema and later; 39 is Grafana 10.4 / 11.0
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41);
    const refresh = /^(\d+)([smh])$/.exec(dashboard.refresh ?? "");
    expect(refresh, "a refresh interval").not.toBeNull();
    const seconds = Number(refresh?.[1]) * { s: 1, m: 60, h: 3600 }[(refresh?.[2] ?? "s") as "s" | "m" | "h"];
    expect(seconds).toBeGreaterThanOrEqual(15); // no faster than the default poll interval
    expect(seconds).toBeLessThanOrEqual(300);
    // No datasource uid is hard-coded: all go through the variable (the built-in annotation aside).
    const uids = [...dashboardText.matchAll(/"uid":\s*"([^"]*)"/g)].map((m) => m[1]);
    expect(new Set(uids)).toEqual(new Set(["${datasource}", "-- Grafana --", dashboard.uid]));
  });

  it("selects its Prometheus through a `datasource` variable, defined before the variables that query it", () => {
    const list = dashboard.templating.list;
    const ds = list[0];
    expect(ds).toMatchObject({ name: "datasource", type: "datasource", query: "prometheus", multi: false, includeAll: false });
    // Nothing pinned: each Grafana that loads it fills in one of its own Prometheus data sources.
    expect(ds?.current ?? {}).toEqual({});
    expect(list.filter((v) => v.type === "datasource")).toHaveLength(1);
  });

  it("names the `datasource` variable in every datasource field: panels, targets, variables, annotations", () => {
    const refs = datasourceRefs(dashboard);
    const builtIn = refs.filter((r) => /^annotations\.list\[\d+\]\.datasource$/.test(r.path) && (r.ref as DsRef).type === "grafana");
    expect(builtIn.map((r) => r.ref)).toEqual([{ type: "grafana", uid: "-- Grafana --" }]);
    const others = refs.filter((r) => !builtIn.includes(r));
    // panels and their targets, the query variables and the hang annotation: far more than a handful
    expect(others.length).toBeGreaterThan(allPanels().length + queryVariables().length);
    expect(others.filter((r) => !isDeepStrictEqual(r.ref, DATASOURCE)).map((r) => `${r.path}: ${JSON.stringify(r.ref)}`)).toEqual([]);
  });

  it("uses, anywhere, only variables it defines and Grafana's built-in ones (a ${DS_...} input would fail here)", () => {
    const names = new Set(variableUses(dashboard).map((u) => u.name));
    for (const v of ["datasource", "job", "node", "comm_id", "__rate_interval"]) expect(names, v).toContain(v);
    expect(undefinedVariables(dashboard)).toEqual([]);
  });

  it("finds undefined variables in every syntax and every place (the check above can fail)", () => {
    const broken = structuredClone(dashboard) as Dashboard & { links?: unknown[] };
    const panel = broken.panels.find((p) => p.type !== "row" && (p.targets?.length ?? 0) > 0) as Panel;
    const target = panel.targets?.[0] as Target;
    target.datasource = { type: "prometheus", uid: "${DS_PROMETHEUS}" };
    target.expr = `${target.expr ?? ""} + $gpu + \${__rate_interval} * [[rank:regex]]`;
    panel.title = "GPU ${gpu_model:text}";
    broken.links = [{ url: "/d/x?var-node=${node}&var-x=${x.text}" }];
    expect(
      undefinedVariables(broken)
        .map((u) => u.replace(/^panels\[\d+\]/, "panels[i]"))
        .sort(),
    ).toEqual(
      [
        "panels[i].targets[0].expr: gpu",
        "panels[i].targets[0].expr: rank",
        "panels[i].targets[0].datasource.uid: DS_PROMETHEUS",
        "panels[i].title: gpu_model",
        "links[0].url: x",
      ].sort(),
    );
    broken.templating.list = broken.templating.list.filter((v) => v.name !== "datasource");
    expect(undefinedVariables(broken).filter((u) => u.endsWith(": datasource")).length).toBeGreaterThan(300);
  });

  it("has the node, comm_id and job variables, from ringwatch metrics, on the `datasource` variable", () => {
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    const node = vars.get("node");
    const comm = vars.get("comm_id");
    expect(node && analyzeVariableQuery(variableQuery(node))).toMatchObject({ label: "node", info: { metrics: ["ringwatch_build_info"] } });
    expect(comm && analyzeVariableQuery(variableQuery(comm))).toMatchObject({ label: "comm_id", info: { metrics: ["ringwatch_nccl_hang_suspected"] } });
    expect(vars.has("job")).toBe(true);
    expect(queryVariables().map((v) => v.name)).toEqual(["job", "node", "comm_id"]);
    expect(dashboard.templating.list.map((v) => v.type)).toEqual(["datasource", "query", "query", "query"]);
    for (const v of queryVariables()) expect(v.datasource, v.name).toEqual(DATASOURCE);
  });

  it("gives every panel a title, a unique id, a gridPos and the ${datasource} datasource", () => {
    const panels = allPanels();
    expect(panels.length).toBeGreaterThan(40);
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels) {
      const what = `panel ${p.id ?? "?"} "${p.title ?? ""}"`;
      expect(p.title?.trim(), what).toBeTruthy();
      expect(p.datasource, what).toEqual(DATASOURCE);
      const g = p.gridPos;
      expect(g, what).toBeDefined();
      if (!g) continue;
      for (const n of [g.h, g.w, g.x, g.y]) expect(Number.isInteger(n) && n >= 0, what).toBe(true);
      expect(g.w > 0 && g.h > 0 && g.x + g.w <= 24, what).toBe(true);
      if (p.type === "row") {
        expect(p.targets ?? [], what).toEqual([]);
        continue;
      }
      expect(["timeseries", "stat", "table", "state-timeline", "bargauge", "gauge", "heatmap", "text"], what).toContain(p.type);
      const targets = p.targets ?? [];
      expect(targets.length, what).toBeGreaterThan(0);
      const refIds = targets.map((t) => t.refId);
      expect(new Set(refIds).size, what).toBe(refIds.length);
      for (const t of targets) {
        expect(t.datasource, what).toEqual(DATASOURCE);
        expect(t.expr?.trim(), what).toBeTruthy();
      }
    }
    const titles = dataPanels().map((p) => p.title);
    expect(titles.filter((t, i) => titles.indexOf(t) !== i)).toEqual([]);
  });

  it("lays panels out without overlaps", () => {
    const boxes = dashboard.panels.map((p) => ({ id: p.id, ...(p.gridPos ?? { h: 0, w: 0, x: 0, y: 0 }) }));
    const overlaps: string[] = [];
    boxes.forEach((a, i) =>
      boxes.slice(i + 1).forEach((b) => {
        if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) overlaps.push(`${a.id ?? "?"}/${b.id ?? "?"}`);
      }),
    );
    expect(overlaps).toEqual([]);
  });

  it("has the rows of the issue, in order", () => {
    const rows = dashboard.panels.filter((p) => p.type === "row").map((p) => p.title ?? "");
    const want = [/^Overview/, /^GPU$/, /^InfiniBand/, /^GPUDirect RDMA & network/, /^NCCL per communicator and rank/, /^Hang timeline/];
    let from = 0;
    for (const w of want) {
      const at = rows.findIndex((r, i) => i >= from && w.test(r));
      expect(at, `row ${String(w)} in ${rows.join(", ")}`).toBeGreaterThanOrEqual(0);
      from = at + 1;
    }
  });

  it("parses every expression with the tokenizer", () => {
    const exprs = [...panelExprs(), ...annotationExprs()];
    expect(exprs.length).toBeGreaterThan(80);
    for (const e of exprs) {
      expect(() => analyzeExpr(e.expr), e.where).not.toThrow();
      expect(metricNames(e.expr).length, `${e.where}: reads no metric`).toBeGreaterThan(0);
      expect(e.expr, `${e.where}: ASCII only`).toMatch(/^[\x20-\x7e\n]*$/);
    }
  });

  it("uses only metrics ringwatch registers, recording rules of deploy/prometheus/ringwatch-rules.yml, and Prometheus built-ins", () => {
    const exprs = [
      ...panelExprs().map((e) => e.expr),
      ...annotationExprs().map((e) => e.expr),
      ...queryVariables().flatMap((v) => analyzeVariableQuery(variableQuery(v)).info.metrics),
    ];
    expect(families.filter((f) => f.name.startsWith("ringwatch_")).length).toBeGreaterThan(60);
    expect(unknownMetrics(exprs, isKnown)).toEqual([]);
  });

  it("names only labels the metrics carry (or target labels, or labels the expression creates)", () => {
    const problems: string[] = [];
    for (const e of [...panelExprs(), ...annotationExprs()]) {
      const info = analyzeExpr(e.expr);
      const available = new Set([...TARGET_LABELS, ...info.created, "__name__"]);
      let allKnown = true;
      for (const s of info.selectors) {
        const fam = s.metric === undefined ? undefined : familyByName.get(s.metric);
        if (!fam) {
          allKnown = false; // a recording rule or a built-in: its labels are not known here
          continue;
        }
        fam.labels.forEach((l) => available.add(l));
        for (const l of s.labels) if (!fam.labels.includes(l) && !TARGET_LABELS.includes(l)) problems.push(`${e.where}: ${s.metric ?? ""} has no label ${l}`);
      }
      if (!allKnown) continue;
      for (const l of info.grouping) if (!available.has(l)) problems.push(`${e.where}: groups by unknown label ${l}`);
      for (const m of (e.target?.legendFormat ?? "").matchAll(/\{\{\s*(\w+)\s*\}\}/g)) {
        if (!available.has(m[1] ?? "")) problems.push(`${e.where}: legend uses unknown label ${m[1] ?? ""}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("shows every ringwatch metric family (GPU, InfiniBand, NCCL verdicts, gdr, mtu, agent) on a panel", () => {
    const onPanels = new Set(panelExprs().flatMap((e) => metricNames(e.expr)));
    const ringwatch = families.map((f) => f.name).filter((n) => n.startsWith("ringwatch_"));
    for (const group of [/^ringwatch_gpu_/, /^ringwatch_infiniband_/, /^ringwatch_(nccl|pytorch)_/]) {
      expect(ringwatch.filter((n) => group.test(n)).length, String(group)).toBeGreaterThan(5);
    }
    expect(ringwatch.filter((n) => !onPanels.has(n))).toEqual([]);
    for (const verdict of [
      "ringwatch_nccl_hang_suspected",
      "ringwatch_nccl_rank_behind",
      "ringwatch_nccl_straggler",
      "ringwatch_nccl_collective_mismatch",
      "ringwatch_gpu_hang_signature",
      "ringwatch_nccl_process_transport_info",
    ]) {
      expect(onPanels.has(verdict), verdict).toBe(true);
    }
  });

  it("sets the unit the metric names imply", () => {
    /** The unit a query's values have, from its metric's suffix; undefined where the name does not tell. */
    const implied = (expr: string): string | undefined => {
      if (/^\s*count\s*\(/.test(expr) || expr.includes("/")) return undefined;
      const names = metricNames(expr);
      const rated = /\b(rate|irate|increase)\s*\(/.test(expr);
      const units = new Set(
        names.map((n) => {
          if (rated) return n.endsWith("_bytes_total") ? "Bps" : n.endsWith("_seconds_total") ? "percentunit" : undefined;
          if (/^time\s*\(\s*\)\s*-/.test(expr.trim()) && n.endsWith("_timestamp_seconds")) return "s";
          if (n.endsWith("_ratio")) return "percentunit";
          if (n.endsWith("_watts")) return "watt";
          if (n.endsWith("_celsius")) return "celsius";
          if (n.endsWith("_hertz")) return "hertz";
          if (n.endsWith("_bytes_per_second")) return "Bps";
          if (n.endsWith("_bytes")) return "bytes";
          if (n.endsWith("_seconds")) return "s";
          return undefined;
        }),
      );
      return units.size === 1 ? [...units][0] : undefined;
    };
    const wrong: string[] = [];
    let checked = 0;
    for (const e of panelExprs()) {
      const p = e.panel;
      if (!p || !["timeseries", "stat", "gauge", "bargauge"].includes(p.type ?? "")) continue;
      const want = implied(e.expr);
      if (!want) continue;
      const override = (p.fieldConfig?.overrides ?? [])
        .filter((o) => o.matcher.id === "byFrameRefID" && o.matcher.options === e.target?.refId)
        .flatMap((o) => o.properties)
        .find((prop) => prop.id === "unit")?.value;
      const unit = (override as string | undefined) ?? p.fieldConfig?.defaults?.unit;
      checked++;
      if (unit !== want) wrong.push(`${e.where}: unit ${unit ?? "unset"}, want ${want}`);
    }
    expect(checked).toBeGreaterThan(25);
    expect(wrong).toEqual([]);
  });
});

// ───────────────────────────── file provisioning

const providerPath = join(root, "deploy/grafana/dashboard-provider.yaml");
const grafanaReadme = join(root, "deploy/grafana/README.md");

/** The keys of a dashboard provider (apiVersion 1) that Grafana reads (pkg/services/provisioning/dashboards/types.go). */
const PROVIDER_KEYS = new Set([
  "name",
  "type",
  "orgId",
  "folder",
  "folderUid",
  "editable",
  "options",
  "disableDeletion",
  "updateIntervalSeconds",
  "allowUiUpdates",
]);
const FILE_OPTIONS = new Set(["path", "foldersFromFilesStructure"]);

interface Provider {
  name?: unknown;
  type?: unknown;
  options?: { path?: unknown; [k: string]: unknown };
  [k: string]: unknown;
}

/** What Grafana would ignore or reject in a dashboard provisioning file: unknown keys (silently ignored), no file path. */
function providerProblems(doc: unknown): string[] {
  const d = doc as { apiVersion?: unknown; providers?: unknown } | null;
  if (d?.apiVersion !== 1) return [`apiVersion ${JSON.stringify(d?.apiVersion)}, want 1 (0 reads another layout)`];
  if (!Array.isArray(d.providers) || d.providers.length === 0) return ["no providers"];
  const out: string[] = [];
  const extra = Object.keys(d).filter((k) => k !== "apiVersion" && k !== "providers");
  if (extra.length > 0) out.push(`unknown top-level key(s) ${extra.join(", ")}`);
  (d.providers as Provider[]).forEach((p, i) => {
    for (const k of Object.keys(p)) if (!PROVIDER_KEYS.has(k)) out.push(`providers[${i}]: unknown key ${k}`);
    if (typeof p.name !== "string" || p.name === "") out.push(`providers[${i}]: no name`);
    if (p.type !== "file") out.push(`providers[${i}]: type ${JSON.stringify(p.type)}, want file`);
    for (const k of Object.keys(p.options ?? {})) if (!FILE_OPTIONS.has(k)) out.push(`providers[${i}].options: unknown key ${k}`);
    if (typeof p.options?.path !== "string" || !p.options.path.startsWith("/")) out.push(`providers[${i}].options.path: not an absolute path`);
  });
  return out;
}

/** The `install SRC DEST` commands of a Markdown text's sh blocks, as [source basename, destination]. */
function installCommands(markdown: string): [string, string][] {
  const blocks = [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks.flatMap((b) =>
    b.split("\n").flatMap((line) => {
      const words = line
        .trim()
        .replace(/^sudo\s+/, "")
        .split(/\s+/);
      if (words[0] !== "install" || words.includes("-d")) return [];
      const operands = words.slice(1).filter((w, i, all) => !w.startsWith("-") && !all[i - 1]?.startsWith("-m"));
      const [src, dest] = operands;
      return src && dest && operands.length === 2 ? [[src.split("/").pop() ?? src, dest] as [string, string]] : [];
    }),
  );
}

describe("deploy/grafana/dashboard-provider.yaml (file provisioning)", () => {
  const provider = parseYaml(readFileSync(providerPath, "utf8")) as { providers: Provider[] };

  it("is a dashboard provider file with only keys Grafana reads", () => {
    expect(providerProblems(provider)).toEqual([]);
    expect(provider.providers).toHaveLength(1);
    // A folder per file structure would put the dashboard in a folder named after its directory.
    expect(provider.providers[0]?.options?.foldersFromFilesStructure ?? false).toBe(false);
  });

  it("sees what Grafana would ignore or misread (the check above can fail)", () => {
    expect(providerProblems({ apiVersion: 0, providers: [] })).toEqual(["apiVersion 0, want 1 (0 reads another layout)"]);
    expect(providerProblems({ apiVersion: 1, providers: [{ name: "x", type: "file", allowUIUpdates: true, options: { paht: "/x" } }], provider: [] })).toEqual([
      "unknown top-level key(s) provider",
      "providers[0]: unknown key allowUIUpdates",
      "providers[0].options: unknown key paht",
      "providers[0].options.path: not an absolute path",
    ]);
  });

  it("README.md installs the dashboard into the folder the provider reads, and the provider where Grafana looks", () => {
    const installs = new Map(installCommands(readFileSync(grafanaReadme, "utf8")));
    const path = provider.providers[0]?.options?.path as string | undefined;
    expect(path).toMatch(/^\/\S+$/);
    expect(installs.get("ringwatch-dashboard.json")?.replace(/\/$/, "")).toBe(path);
    expect(installs.get("dashboard-provider.yaml")).toMatch(/^\/etc\/grafana\/provisioning\/dashboards\/[\w-]+\.ya?ml$/);
    expect(installCommands("```sh\nsudo install -m 0644 a/b.json /x/y/\ninstall -d /z\n```\n")).toEqual([["b.json", "/x/y/"]]);
  });
});

// ───────────────────────────── evaluation with promtool

const hasPromtool = spawnSync("promtool", ["--version"]).status === 0;
if (!hasPromtool) console.warn("promtool not installed: the dashboard's queries are not evaluated on this machine (CI installs prometheus)");
const withPromtool = hasPromtool || process.env.CI ? it : it.skip;

/** Grafana variables as an "All" selection and a 15 s scrape interval would expand them. */
function expandVariables(expr: string): string {
  return expr.replace(/\$\{?(\w+)(?::\w+)?\}?/g, (_, name: string) => {
    if (name === "__rate_interval") return "1m";
    if (name === "__interval") return "15s";
    if (name === "__range") return "1h";
    return ".*";
  });
}

/**
 * A synthetic cluster of two nodes: every registered counter and gauge, two GPUs, two ranks per node
 * in one communicator, an HCA port, two interfaces; counters rise by 1 per scrape, gauges read 1.
 */
function syntheticSeries(): { series: string; values: string }[] {
  const out: { series: string; values: string }[] = [];
  const nodes: [string, string[]][] = [
    ["gpu-a", ["0", "1"]],
    ["gpu-b", ["2", "3"]],
  ];
  const single: Record<string, string> = {
    comm_id: "0xc0ffee",
    port: "1",
    signature: "spin",
    link_type: "infiniband",
    operstate: "UP",
    kind: "timeout",
    counter: "symbol_error",
    module: "nvidia_peermem",
    net: "IB",
    gdr: "enabled",
    source: "procfs",
    version: "0.1.0",
    nodejs_version: "v20.0.0",
    op_type: "ALLREDUCE",
  };
  for (const [node, ranks] of nodes) {
    const target = { node, instance: `${node}:9742`, job: "ringwatch" };
    out.push({ series: `up${labelText(target)}`, values: "1x60" });
    for (const f of families) {
      if (f.type !== "counter" && f.type !== "gauge") continue;
      let combos: Record<string, string>[] = [{ ...target }];
      for (const l of f.labels) {
        const values =
          l === "gpu"
            ? ["0", "1"]
            : l === "rank"
              ? ranks
              : l === "collector"
                ? ["gpu", "nccl"]
                : l === "device"
                  ? f.name.startsWith("ringwatch_network_")
                    ? ["ib0", "eth0"]
                    : ["mlx5_0"]
                  : [single[l] ?? "x"];
        combos = combos.flatMap((c) => values.map((v) => ({ ...c, [l]: v })));
      }
      for (const c of combos) out.push({ series: `${f.name}${labelText(c)}`, values: f.type === "counter" ? "0+1x60" : "1x60" });
    }
  }
  return out;
}
function labelText(labels: Record<string, string>): string {
  return `{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(",")}}`;
}

describe("the dashboard's queries on Prometheus", () => {
  withPromtool("all evaluate without error and return samples on a synthetic two-node cluster (promtool test rules)", () => {
    const exprs = [
      ...panelExprs().map((e) => ({ where: e.where, expr: expandVariables(e.expr) })),
      ...annotationExprs().map((e) => ({ where: e.where, expr: expandVariables(e.expr) })),
      ...queryVariables().flatMap((v) => {
        const q = analyzeVariableQuery(variableQuery(v)).promql;
        return q ? [{ where: `variable ${v.name}`, expr: expandVariables(q) }] : [];
      }),
    ];
    const usesRules = exprs.some((e) => metricNames(e.expr).some((n) => rules.has(n)));
    const dir = mkdtempSync(join(tmpdir(), "rw-grafana-"));
    const file = join(dir, "dashboard-test.yml");
    const unique = [...new Set(exprs.map((e) => e.expr))];
    writeFileSync(
      file,
      stringifyYaml(
        {
          rule_files: usesRules ? [rulesPath] : [],
          evaluation_interval: "15s",
          tests: [
            {
              interval: "15s",
              input_series: syntheticSeries(),
              // Expecting no samples makes promtool print what every query returned, or its error.
              promql_expr_test: unique.map((expr) => ({ expr, eval_time: "10m", exp_samples: [] })),
            },
          ],
        },
        { lineWidth: 0 },
      ),
    );
    const r = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
    const output = `${r.stdout}\n${r.stderr}`;
    expect(output, output).not.toMatch(/could not|parse error|error loading/i);
    const blocks = new Map<string, string>();
    const re = /expr: ("(?:[^"\\]|\\.)*"), time: [^,\n]*,?/g;
    const heads = [...output.matchAll(re)];
    heads.forEach((m, i) => {
      const end = heads[i + 1]?.index ?? output.length;
      blocks.set(JSON.parse(m[1] ?? '""') as string, output.slice((m.index ?? 0) + m[0].length, end));
    });
    const errors: string[] = [];
    const empty: string[] = [];
    for (const e of exprs) {
      const block = blocks.get(e.expr);
      if (block === undefined) empty.push(`${e.where}: ${e.expr}`);
      else if (/\berr:/.test(block)) errors.push(`${e.where}: ${block.trim()}`);
      else if (!/\bgot:\s*\S/.test(block)) errors.push(`${e.where}: unexpected promtool output ${block.trim()}`);
    }
    expect(errors).toEqual([]);
    expect(empty).toEqual([]);
  });
});
