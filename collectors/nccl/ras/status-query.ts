/**
 * One STATUS query as the RAS watch makes it (ras/client.ts carries it): JSON asked for, NCCL's
 * per-peer wait (5 s by default), a deadline of twice that plus 3 s (NCCL gathers in two legs) and a
 * 4 MiB cap unless set; then the report in the answer, JSON where the job's NCCL has it (2.28.7+,
 * ras/parse-json.ts), else the last of the reports in the text, as `ncclras` prints them
 * (ras/parse-text.ts). An answer with no report counts as an `error`.
 */
import { queryRas, type RasAddress, type RasQueryOutcome, type RasQueryResult } from "./client.js";
import { looksLikeJson, rasReportFromJson } from "./parse-json.js";
import { RasReader, type RasReport } from "./parse-text.js";
import type { RasConnection } from "./socket-owner.js";

/** The last report in a text answer. */
export function lastTextReport(text: string): RasReport | undefined {
  const reader = new RasReader();
  let start = 0;
  let lineNo = 1;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    reader.line(text.slice(start, end), lineNo++);
    start = end + 1;
  }
  const all = reader.reports();
  return all[all.length - 1];
}

/** The report in an answer, JSON or text. */
export function reportOf(text: string, format: "json" | "text"): RasReport | undefined {
  // Told by the text itself too: a proxy or a wrapper may answer the format command for NCCL.
  return format === "json" || looksLikeJson(text) ? (rasReportFromJson(text) ?? lastTextReport(text)) : lastTextReport(text);
}

/** The watch's settings a query reads (RasWatchOptions). */
export interface StatusQueryOptions {
  address: RasAddress;
  legTimeoutSeconds?: number;
  deadlineMs?: number;
  maxBytes?: number;
}

export interface StatusAnswer {
  /** `host:port` asked. */
  where: string;
  r: RasQueryResult;
  report: RasReport | undefined;
  outcome: RasQueryOutcome;
}

/** Asks for the job's status; undefined when aborted. */
export async function queryStatus(
  o: StatusQueryOptions,
  signal: AbortSignal,
  verify: (c: RasConnection) => string | undefined,
): Promise<StatusAnswer | undefined> {
  const leg = o.legTimeoutSeconds ?? 5;
  const { host, port } = o.address;
  const r: RasQueryResult = await queryRas({
    host,
    port,
    legTimeoutSeconds: leg,
    deadlineMs: o.deadlineMs ?? leg * 2000 + 3000,
    maxBytes: o.maxBytes ?? 4 * 1024 * 1024,
    signal,
    json: true,
    verify,
  });
  if (signal.aborted) return undefined;
  const report = r.ok ? reportOf(r.text, r.format) : undefined;
  const outcome: RasQueryOutcome = !r.ok ? r.result : report === undefined ? "error" : "ok";
  return { where: `${host}:${port}`, r, report, outcome };
}
