/**
 * Asks NCCL's RAS service (NCCL 2.24+, on by default in every job process) for the job-wide status
 * every --collector.nccl.ras-interval (±10 % jitter, so the nodes of a job drift apart), whether or
 * not any log is followed: in production jobs (no COLL lines) RAS is the live source of the hang
 * verdict. A refused connection is the normal "no job here" answer and costs a few microseconds.
 * A COLL-log hang that begins asks at once. One query at a time; JSON where the job's NCCL has it
 * (2.28.7+), text otherwise. The reports feed ras/progress.ts; ras-verdict.ts turns them into verdicts.
 */
import type { Logger } from "pino";
import { rasFindings } from "./findings/ras.js";
import type { Finding } from "./findings/report.js";
import { queryRas, type RasAddress, type RasQueryResult } from "./ras/client.js";
import { looksLikeJson, rasReportFromJson } from "./ras/parse-json.js";
import { RasReader, type RasReport } from "./ras/parse-text.js";
import { deadProcesses, observe, RasProgress, type ProgressOptions, type RasCommProgress } from "./ras/progress.js";

export type RasQueryOutcome = "ok" | "unreachable" | "timeout" | "error";
export const RAS_OUTCOMES: readonly RasQueryOutcome[] = ["ok", "unreachable", "timeout", "error"];

export interface RasWatchOptions {
  address: RasAddress;
  intervalMs: number;
  now: () => number;
  log: Logger;
  /** Hang threshold and its stretch (ras/progress.ts). */
  progress: ProgressOptions;
  /** NCCL's per-peer wait (the TIMEOUT command), seconds. Default 5, NCCL's own. */
  legTimeoutSeconds?: number;
  /** Deadline of one query. Default: twice the leg timeout plus 3 s (NCCL gathers in two legs). */
  deadlineMs?: number;
  /** Default 4 MiB: a 32-rank text report is about 1 KiB, a 1,000-rank JSON report about 600 KiB. */
  maxBytes?: number;
}

/** What the last answer holds. */
export interface RasSnapshot {
  queries: ReadonlyMap<RasQueryOutcome, number>;
  lastReportMs: number | undefined;
  /** The last report, while the job answers. */
  report: RasReport | undefined;
  format: "json" | "text" | undefined;
  /** `node:pid` of processes RAS cannot reach (dead, or their node cut off). */
  dead: readonly string[];
  progress: readonly RasCommProgress[];
  /** Findings of the last report (ringwatch analyze's words). */
  findings: readonly Finding[];
}

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

/** At most this many series per job-wide RAS metric (dead processes, ranks behind, mismatches). */
export const MAX_RAS_SERIES = 128;

export class RasWatch {
  private opts: RasWatchOptions;
  private readonly queries = new Map<RasQueryOutcome, number>(RAS_OUTCOMES.map((o) => [o, 0]));
  private readonly progress: RasProgress;
  private lastReportMs: number | undefined;
  private lastAskedMs: number | undefined;
  private nextAskMs: number | undefined;
  private report: RasReport | undefined;
  private format: "json" | "text" | undefined;
  private findings: readonly Finding[] = [];
  private inFlight: Promise<void> | undefined;
  private query: AbortController | undefined;
  /** The last outcome logged, so a repeated one is not logged again. */
  private loggedState: string | undefined;
  private urgentBefore = false;
  private paused = false;
  private closed = false;

  constructor(
    opts: RasWatchOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...opts };
    this.progress = new RasProgress({ ...opts.progress });
  }

  /** New settings (SIGHUP); undefined pauses: the query in flight ends, what was known goes, counts stay. */
  setOptions(o: Pick<RasWatchOptions, "address" | "intervalMs"> | undefined): void {
    if (o === undefined) {
      this.paused = true;
      this.query?.abort();
      this.forget();
      return;
    }
    const moved = o.address.host !== this.opts.address.host || o.address.port !== this.opts.address.port;
    this.paused = false;
    this.opts = { ...this.opts, ...o };
    if (moved) this.forget();
    this.nextAskMs = undefined;
  }

  setThreshold(ms: number): void {
    this.progress.setThreshold(ms);
  }

  /**
   * Called at every evaluation: asks when the interval is up. `urgent` (a hang suspected from the
   * logs) asks at once when it begins, unless the last query is very recent.
   */
  tick(urgent = false): void {
    const rising = urgent && !this.urgentBefore;
    this.urgentBefore = urgent;
    if (this.inFlight !== undefined || this.paused || this.closed) return;
    const now = this.opts.now();
    let due = this.nextAskMs ?? now;
    if (rising) due = Math.min(due, this.lastAskedMs === undefined ? now : this.lastAskedMs + this.opts.intervalMs / 4);
    if (now < due) return;
    this.lastAskedMs = now;
    this.nextAskMs = now + this.opts.intervalMs * (0.9 + 0.2 * this.random());
    const ac = new AbortController();
    this.query = ac;
    this.inFlight = this.ask(ac.signal)
      .catch((err: unknown) => this.opts.log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: NCCL RAS query failed"))
      .finally(() => {
        this.inFlight = undefined;
        this.query = undefined;
      });
  }

  /** Resolves when no query is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
  }

  /** Ends the query in flight, if any; no query starts after this. */
  async close(): Promise<void> {
    this.closed = true;
    this.query?.abort();
    await this.settled();
  }

  snapshot(): RasSnapshot {
    const dead = this.report === undefined ? [] : [...deadProcesses(this.report)].slice(0, MAX_RAS_SERIES);
    return { queries: this.queries, lastReportMs: this.lastReportMs, report: this.report, format: this.format, dead, progress: [...this.progress.states()], findings: this.findings };
  }

  private forget(): void {
    this.progress.clear();
    this.report = undefined;
    this.format = undefined;
    this.findings = [];
  }

  private async ask(signal: AbortSignal): Promise<void> {
    const leg = this.opts.legTimeoutSeconds ?? 5;
    const { host, port } = this.opts.address;
    const r: RasQueryResult = await queryRas({ host, port, legTimeoutSeconds: leg, deadlineMs: this.opts.deadlineMs ?? leg * 2000 + 3000, maxBytes: this.opts.maxBytes ?? 4 * 1024 * 1024, signal, json: true });
    if (signal.aborted) return;
    const report = r.ok ? reportOf(r.text, r.format) : undefined;
    const outcome: RasQueryOutcome = !r.ok ? r.result : report === undefined ? "error" : "ok";
    this.queries.set(outcome, (this.queries.get(outcome) ?? 0) + 1);
    const now = this.opts.now();
    const where = `${host}:${port}`;
    if (report === undefined) {
      // No job answers (it ended, or none runs here): what the last one said goes with it.
      // A timeout or a garbled answer keeps it: the job may be too busy to answer in time.
      if (outcome === "unreachable") this.forget();
      const reason = r.ok ? `the answer holds no RAS report (it begins "${r.text.slice(0, 80).trim()}")` : r.reason;
      this.logOnce(`fail:${outcome}`, () => {
        if (outcome === "unreachable") this.opts.log.info({ ras_addr: where, reason }, `nccl: no NCCL RAS service at ${where} (no NCCL 2.24+ job on this node, NCCL_RAS_ENABLE=0, or NCCL_RAS_ADDR set elsewhere)`);
        else this.opts.log.warn({ ras_addr: where, reason, outcome }, `nccl: NCCL RAS at ${where} gave no report: ${reason}`);
      });
      return;
    }
    const format = r.ok ? r.format : "text";
    this.lastReportMs = now;
    this.report = report;
    this.format = report.full !== undefined ? "json" : format === "json" ? "json" : "text";
    const observed = observe(report);
    this.progress.record(now, observed);
    this.findings = rasFindings([{ source: "ras", reports: [report] }]);
    this.logOnce(`ok:${this.format}`, () =>
      this.opts.log.info(
        { ras_addr: where, ms: Math.round(r.ms), format: this.format, nccl_version: report.version ?? null, communicators: observed.length },
        `nccl: NCCL RAS at ${where} answers (${this.format === "json" ? "every rank's counts" : "text: counts only where they differ"})`,
      ),
    );
  }

  private logOnce(key: string, write: () => void): void {
    if (key === this.loggedState) return;
    this.loggedState = key;
    write();
  }
}
