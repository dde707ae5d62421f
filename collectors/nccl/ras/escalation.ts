/**
 * The two exchanges the querier makes with NCCL RAS beyond STATUS when a hang begins (NCCL 2.31.2+):
 * RAS diagnostics (ras/diagnostics.ts says when) and NCCL Inspector's job-wide switch
 * (ras/profiler-switch.ts says when). Each is one connection through ras/client.ts, checked like a
 * query (who answered), and logged here; the watch counts them and keeps their state.
 */
import type { Logger } from "pino";
import { queryRas, type RasAddress, type RasQueryOutcome } from "./client.js";
import { DIAG_DEADLINE_MS, DIAG_LEG_TIMEOUT_S } from "./diagnostics.js";
import { diagFindings } from "./diag-findings.js";
import { diagProblems, parseDiagnostics, type DiagReport } from "./parse-diag.js";
import { INSPECTOR_MASK, type SwitchTo } from "./profiler-switch.js";
import type { RasConnection } from "./socket-owner.js";

export interface ExchangeContext {
  address: RasAddress;
  log: Logger;
  maxBytes: number;
  legTimeoutSeconds: number;
  verify: (c: RasConnection) => string | undefined;
}

/** DIAGNOSTICS: the outcome as a query counts it, and the answer when it holds one (BUSY included). */
export async function askDiagnostics(
  ctx: ExchangeContext,
  signal: AbortSignal,
): Promise<{ outcome: RasQueryOutcome; report: DiagReport | undefined } | undefined> {
  const { host, port } = ctx.address;
  const where = `${host}:${port}`;
  const r = await queryRas({
    host,
    port,
    legTimeoutSeconds: DIAG_LEG_TIMEOUT_S,
    deadlineMs: DIAG_DEADLINE_MS,
    maxBytes: ctx.maxBytes,
    signal,
    command: "DIAGNOSTICS",
    verify: ctx.verify,
  });
  if (signal.aborted) return undefined;
  const report = r.ok ? parseDiagnostics(r.text) : undefined;
  const outcome: RasQueryOutcome = !r.ok ? r.result : report === undefined || (report.results.length === 0 && !report.busy) ? "error" : "ok";
  if (report === undefined || outcome !== "ok") {
    const reason = !r.ok ? r.reason : report?.errors[0] !== undefined ? report.errors[0] : "the answer holds no diagnostics line";
    ctx.log.warn({ ras_addr: where, reason, outcome }, `nccl: NCCL RAS diagnostics at ${where} gave no answer: ${reason}`);
    return { outcome, report: undefined };
  }
  if (report.busy) {
    ctx.log.info({ ras_addr: where }, "nccl: NCCL RAS diagnostics are already running in the process asked (BUSY); asking again in one interval");
    return { outcome, report };
  }
  const problems = diagProblems(report);
  ctx.log.info(
    { ras_addr: where, ms: report.completed?.ms ?? null, peers: report.completed?.peers ?? null, results: report.results.length, problems: problems.length },
    `nccl: NCCL RAS diagnostics for this hang: ${problems.length} problem(s) in ${report.results.length} result(s)${report.completed !== undefined ? ` from ${report.completed.peers} processes` : " (the answer ended early)"}`,
  );
  // The same words as `ringwatch analyze` on these lines (ras/diag-findings.ts).
  for (const f of diagFindings(where, report).slice(0, 32))
    ctx.log[f.severity === "critical" ? "error" : "warn"](
      { kind: f.kind, event: f.event ?? null, comm_id: f.comm_id, ranks: f.ranks, host: f.host ?? null, code: f.code ?? null },
      `nccl: ${f.summary}`,
    );
  return { outcome, report };
}

export type SwitchResult = "ok" | "refused" | "failed";

/** `CONTROL PROFILER_MASK`: Inspector on (its mask) or off (none), job-wide; ok only when NCCL answered OK. */
export async function switchInspector(ctx: ExchangeContext, to: SwitchTo, signal?: AbortSignal): Promise<SwitchResult> {
  const { host, port } = ctx.address;
  const where = `${host}:${port}`;
  const r = await queryRas({
    host,
    port,
    legTimeoutSeconds: ctx.legTimeoutSeconds,
    deadlineMs: 5000,
    maxBytes: 4096,
    ...(signal !== undefined ? { signal } : {}),
    command: `CONTROL PROFILER_MASK ${to === "on" ? INSPECTOR_MASK : "none"}`,
    verify: ctx.verify,
  });
  const reply = r.ok ? r.text.trim() : undefined;
  const result: SwitchResult = reply === "OK" ? "ok" : reply !== undefined ? "refused" : "failed";
  const why = r.ok ? `NCCL answered "${(reply ?? "").slice(0, 120)}"` : r.reason;
  const level = result === "ok" ? "info" : "warn";
  if (to === "on")
    ctx.log[level](
      { ras_addr: where, result, reason: why },
      result === "ok"
        ? `nccl: NCCL Inspector switched on job-wide through RAS for this hang (CONTROL PROFILER_MASK ${INSPECTOR_MASK})`
        : `nccl: NCCL Inspector could not be switched on: ${why}`,
    );
  else
    ctx.log[level](
      { ras_addr: where, result, reason: why },
      result === "ok"
        ? "nccl: NCCL Inspector switched off again job-wide (CONTROL PROFILER_MASK none)"
        : `nccl: NCCL Inspector could not be switched off yet (${why}); trying again in one interval`,
    );
  return result;
}
