/**
 * What `ringwatch check` prints: one line per check and a summary line, or one JSON document
 * (--json); and its exit code. Both forms are contracts (docs/check.md, "Output").
 */
import { escapeControls, jsonWithoutControls } from "./control-chars.js";
import type { Source } from "./check-run.js";
import type { CheckResult, CheckStatus } from "./check-result.js";

/** 0 healthy, 1 unhealthy (a check failed), 2 could not check (none failed, one could not be judged). */
export function exitCode(results: readonly CheckResult[]): 0 | 1 | 2 {
  if (results.some((r) => r.status === "fail")) return 1;
  if (results.some((r) => r.status === "error")) return 2;
  return 0;
}

const VERDICT = { 0: "healthy", 1: "unhealthy", 2: "unknown" } as const;

const WORD: Readonly<Record<CheckStatus, string>> = { ok: "ok", fail: "FAIL", skip: "skip", error: "ERROR" };

const NAME_WIDTH = 14;

/** `FAIL  ib.port.rate   mlx5_0/1 at 200 Gb/s, expected 400`, one per check, then the summary. */
export function formatText(results: readonly CheckResult[]): string {
  const lines = results.map((r) => `${WORD[r.status].padEnd(5)} ${r.name.padEnd(NAME_WIDTH)} ${escapeControls(r.message)}`);
  return [...lines, summary(results)].join("\n") + "\n";
}

/** `ringwatch check: unhealthy: gpu.count, ib.port.state failed (5 ok, 4 skipped)`. */
export function summary(results: readonly CheckResult[]): string {
  const n = (s: CheckStatus): number => results.filter((r) => r.status === s).length;
  const names = (s: CheckStatus): string =>
    results
      .filter((r) => r.status === s)
      .map((r) => r.name)
      .join(", ");
  const parts = [`${n("ok")} ok`, `${n("skip")} skipped`];
  const code = exitCode(results);
  let head: string = VERDICT[code];
  if (n("fail") > 0) head += `: ${names("fail")} failed`;
  if (n("error") > 0) head += `${n("fail") > 0 ? ";" : ":"} could not check ${names("error")}`;
  return `ringwatch check: ${head} (${parts.join(", ")})`;
}

export interface JsonReport {
  version: string;
  time: string;
  status: (typeof VERDICT)[keyof typeof VERDICT];
  exit_code: 0 | 1 | 2;
  checks: CheckResult[];
  sources: Source[];
  expectations: Record<string, unknown>;
}

export function formatJson(a: { version: string; nowMs: number; results: CheckResult[]; sources: Source[]; expectations: Record<string, unknown> }): string {
  const code = exitCode(a.results);
  const report: JsonReport = {
    version: a.version,
    time: new Date(a.nowMs).toISOString(),
    status: VERDICT[code],
    exit_code: code,
    checks: a.results,
    sources: a.sources,
    expectations: a.expectations,
  };
  return jsonWithoutControls(JSON.stringify(report, null, 2)) + "\n";
}
