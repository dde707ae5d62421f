/**
 * `ringwatch analyze`: the same state and verdicts as the live collector, built offline from any set
 * of logs (a file per rank, or one combined stdout with many ranks interleaved).
 */
import { parseLine } from "../parse/line.js";
import { RasReader } from "../ras/parse-text.js";
import { looksLikeJson, rasReportFromJson } from "../ras/parse-json.js";
import { transportOf } from "../state/transport.js";
import { Tracker } from "../state/tracker.js";
import { commFindings } from "./comm.js";
import { pytorchFindings } from "./pytorch.js";
import { rasFindings, type RasSource } from "./ras.js";
import { transportFindings } from "./transport.js";
import { sortFindings, type CommunicatorSummary, type ProcessSummary, type Report } from "./report.js";

export interface LogText {
  /** Name used in evidence (`name:line`). */
  name: string;
  text: string;
}

/**
 * Feeds every complete line of `text` into the tracker (and into `ras`, which collects NCCL RAS
 * reports, when given); returns the last line number used.
 */
export function ingestText(t: Tracker, name: string, text: string, firstLineNo = 1, ras?: RasReader): number {
  let lineNo = firstLineNo - 1;
  let i = 0;
  while (i < text.length) {
    let nl = text.indexOf("\n", i);
    if (nl < 0) nl = text.length;
    lineNo++;
    const line = text.slice(i, nl);
    const ev = parseLine(line);
    if (ev) t.ingest(ev, { source: name, lineNo });
    ras?.line(line, lineNo);
    i = nl + 1;
  }
  return lineNo;
}

export function newOfflineTracker(): Tracker {
  return new Tracker({ maxComms: 100_000, maxProcesses: 100_000 });
}

/** Feeds every line of every log into one Tracker, in file order, and collects RAS reports per log. */
export function trackLogs(logs: readonly LogText[]): { tracker: Tracker; ras: RasSource[] } {
  const t = newOfflineTracker();
  const ras: RasSource[] = [];
  for (const log of logs) {
    // A RAS report saved as JSON (`ncclras -f json`) is a document, not lines.
    const json = looksLikeJson(log.text) ? rasReportFromJson(log.text) : undefined;
    if (json !== undefined) {
      ras.push({ source: log.name, reports: [json] });
      continue;
    }
    const reader = new RasReader();
    ingestText(t, log.name, log.text, 1, reader);
    ras.push({ source: log.name, reports: reader.reports() });
  }
  return { tracker: t, ras };
}

function summaries(t: Tracker): { processes: ProcessSummary[]; communicators: CommunicatorSummary[] } {
  const ranksByProc = new Map<string, { comm_id: string; rank: number }[]>();
  const communicators: CommunicatorSummary[] = [];
  for (const c of t.comms.values()) {
    const ranks = [...c.ranks.values()];
    for (const r of ranks) ranksByProc.set(r.processKey, [...(ranksByProc.get(r.processKey) ?? []), { comm_id: c.key, rank: r.rank }]);
    const counts = ranks.map((r) => r.collectives);
    communicators.push({
      comm_id: c.key,
      nranks: c.nranks ?? null,
      ranks_seen: ranks.length,
      collectives_max: counts.length ? Math.max(...counts) : 0,
      collectives_min: counts.length ? Math.min(...counts) : 0,
      last_op: c.seqOps.get(c.maxCollectives)?.op ?? null,
      torn_down: ranks.length > 0 && ranks.every((r) => r.tornDownMs !== undefined),
    });
  }
  const processes = [...t.processes.values()].map((p) => {
    const tr = transportOf(p);
    return {
      process: p.key,
      host: p.host,
      pid: p.pid,
      nccl_version: p.version ?? null,
      net: tr.net,
      gdr: tr.gdr,
      files: [...p.sources.keys()],
      ranks: (ranksByProc.get(p.key) ?? []).sort((a, b) => a.rank - b.rank),
      warnings: p.warnings.length,
    };
  });
  return { processes, communicators };
}

export function analyzeLogs(logs: readonly LogText[]): Report {
  const { tracker, ras } = trackLogs(logs);
  return reportOf(tracker, ras);
}

export function reportOf(t: Tracker, ras: readonly RasSource[] = []): Report {
  const findings = sortFindings([...rasFindings(ras), ...commFindings(t), ...pytorchFindings(t), ...transportFindings(t)]);
  return { findings, ...summaries(t) };
}
