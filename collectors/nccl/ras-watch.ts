/**
 * Asks NCCL's RAS service for the job-wide status while a hang is suspected on this node, and keeps
 * what the last answer says. The local verdict only sees this node's ranks; RAS sees every rank of
 * the job, so it names the rank behind even when that rank runs on another node. A RAS status
 * query makes every NCCL process of the job answer, so it is asked only during a hang: at once when
 * one starts, then every --collector.nccl.ras-interval while it lasts. One query at a time.
 */
import type { Logger } from "pino";
import { commIdOfHash, opCountSplit, rasFindings } from "./findings/ras.js";
import type { Finding } from "./findings/report.js";
import { RasReader, type RasReport } from "./ras/parse-text.js";
import { queryRas, type RasAddress, type RasQueryResult } from "./ras/client.js";

export type RasQueryOutcome = "ok" | "unreachable" | "timeout" | "error";
export const RAS_OUTCOMES: readonly RasQueryOutcome[] = ["ok", "unreachable", "timeout", "error"];

export interface RasWatchOptions {
  address: RasAddress;
  intervalMs: number;
  now: () => number;
  log: Logger;
  /** NCCL's per-peer wait (the TIMEOUT command), seconds. Default 5, NCCL's own. */
  legTimeoutSeconds?: number;
  /** Deadline of one query. Default: twice the leg timeout plus 3 s (NCCL gathers in two legs). */
  deadlineMs?: number;
  /** Default 4 MiB: a 32-rank report is about 1 KiB; the full rank lists of 10,000 ranks fit. */
  maxBytes?: number;
}

/** One rank that RAS lists with a lower operation count than the communicator's highest. */
export interface RasBehind {
  commId: string;
  rank: number;
  /** `node:pid`, or "" when NCCL did not say. */
  process: string;
}

/** What the series show: the last report, while the hang that asked for it lasts. */
export interface RasView {
  queries: ReadonlyMap<RasQueryOutcome, number>;
  lastReportMs: number | undefined;
  behind: readonly RasBehind[];
  /** Communicators whose ranks are at different operation counts. */
  mismatched: readonly string[];
  /** `node:pid` of processes RAS cannot reach. */
  dead: readonly string[];
  findings: readonly Finding[];
}

/** At most this many series per RAS metric. */
export const MAX_RAS_SERIES = 128;
const MAX_LOGGED_FINDINGS = 10;

/** The last report in a RAS answer (text: the client asks for no other format). */
export function lastReport(text: string): RasReport | undefined {
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

/** The series of one report (bounded). */
export function rasSeries(report: RasReport): Pick<RasView, "behind" | "mismatched" | "dead"> {
  const behind: RasBehind[] = [];
  const mismatched: string[] = [];
  const dead = new Set<string>();
  for (const e of report.comms) {
    const split = opCountSplit(e);
    if (split === undefined) continue;
    const commId = commIdOfHash(e.commHash);
    if (mismatched.length < MAX_RAS_SERIES) mismatched.push(commId);
    for (const r of split.listedBehind) {
      if (behind.length >= MAX_RAS_SERIES) break;
      behind.push({ commId, rank: r.rank, process: r.node !== undefined && r.pid !== undefined ? `${r.node}:${r.pid}` : "" });
    }
  }
  for (const p of report.processes) {
    if (p.kind !== "DEAD") continue;
    for (const x of p.processes) if (dead.size < MAX_RAS_SERIES) dead.add(`${x.node}:${x.pid}`);
  }
  return { behind, mismatched: [...new Set(mismatched)], dead: [...dead] };
}

const EMPTY: Pick<RasView, "behind" | "mismatched" | "dead" | "findings"> = { behind: [], mismatched: [], dead: [], findings: [] };

export class RasWatch {
  private opts: RasWatchOptions;
  private readonly queries = new Map<RasQueryOutcome, number>(RAS_OUTCOMES.map((o) => [o, 0]));
  private lastReportMs: number | undefined;
  private lastAskedMs: number | undefined;
  /** When the next query of this hang is due (the interval with ±10 % jitter, so nodes drift apart). */
  private nextAskMs: number | undefined;
  private current = EMPTY;
  private inFlight: Promise<void> | undefined;
  private query: AbortController | undefined;
  private hung = false;
  /** Counts hangs: an answer or a log line belongs to the hang that asked. */
  private episode = 0;
  /** What was logged in this hang, so a repeated answer is not logged again. */
  private loggedAnswer: string | undefined;
  private paused = false;
  private closed = false;

  constructor(
    opts: RasWatchOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...opts };
  }

  /** New settings (SIGHUP); undefined pauses: the query in flight ends, the series go, counts stay. */
  setOptions(o: Pick<RasWatchOptions, "address" | "intervalMs"> | undefined): void {
    if (o === undefined) {
      this.paused = true;
      this.query?.abort();
      this.current = EMPTY;
      return;
    }
    this.paused = false;
    this.opts = { ...this.opts, ...o };
  }

  /** Called after each evaluation: whether a hang is suspected on this node now. */
  update(hung: boolean): void {
    if (!hung) {
      if (this.hung) {
        this.current = EMPTY;
        this.nextAskMs = undefined;
        this.loggedAnswer = undefined;
      }
      this.hung = false;
      return;
    }
    if (!this.hung) this.episode++;
    this.hung = true;
    if (this.inFlight !== undefined || this.paused || this.closed) return;
    const now = this.opts.now();
    // A new hang asks at once, unless the last query was very recent (a hang that flickers).
    const due = this.nextAskMs ?? (this.lastAskedMs === undefined ? now : this.lastAskedMs + this.opts.intervalMs / 4);
    if (now < due) return;
    this.lastAskedMs = now;
    this.nextAskMs = now + this.opts.intervalMs * (0.9 + 0.2 * this.random());
    const ac = new AbortController();
    this.query = ac;
    this.inFlight = this.ask(this.episode, ac.signal)
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

  view(): RasView {
    return { queries: this.queries, lastReportMs: this.lastReportMs, ...this.current };
  }

  private async ask(episode: number, signal: AbortSignal): Promise<void> {
    const leg = this.opts.legTimeoutSeconds ?? 5;
    const { host, port } = this.opts.address;
    const r: RasQueryResult = await queryRas({ host, port, legTimeoutSeconds: leg, deadlineMs: this.opts.deadlineMs ?? leg * 2000 + 3000, maxBytes: this.opts.maxBytes ?? 4 * 1024 * 1024, signal });
    if (signal.aborted) return;
    const report = r.ok ? lastReport(r.text) : undefined;
    const outcome: RasQueryOutcome = !r.ok ? r.result : report === undefined ? "error" : "ok";
    this.queries.set(outcome, (this.queries.get(outcome) ?? 0) + 1);
    if (report !== undefined) this.lastReportMs = this.opts.now();
    // The hang that asked ended while NCCL was answering: its answer and its log lines go with it.
    if (!this.hung || episode !== this.episode) return;
    const where = `${host}:${port}`;
    if (report === undefined) {
      const reason = r.ok ? `the answer holds no RAS report (it begins "${r.text.slice(0, 80).trim()}")` : r.reason;
      this.logOnce(`fail:${outcome}`, () => {
        const msg = `nccl: NCCL RAS at ${where} gave no report: ${reason}`;
        if (outcome === "unreachable") this.opts.log.info({ ras_addr: where, reason }, `${msg} (NCCL older than 2.24, NCCL_RAS_ENABLE=0, or NCCL_RAS_ADDR set elsewhere)`);
        else this.opts.log.warn({ ras_addr: where, reason, outcome }, msg);
      });
      return;
    }
    const findings = rasFindings([{ source: "ras", reports: [report] }]);
    this.current = { ...rasSeries(report), findings };
    this.logOnce(`ok:${findings.map((f) => f.summary).join("\n")}`, () => {
      if (findings.length === 0) {
        this.opts.log.info({ ras_addr: where, ms: Math.round(r.ms) }, "nccl: NCCL RAS reports no mismatch, missing or dead process in the job");
        return;
      }
      for (const f of findings.slice(0, MAX_LOGGED_FINDINGS)) this.opts.log.warn({ ras_addr: where, kind: f.kind, comm_id: f.comm_id, ranks: f.ranks, processes: f.processes }, `nccl: ${f.summary}`);
    });
  }

  private logOnce(key: string, write: () => void): void {
    if (key === this.loggedAnswer) return;
    this.loggedAnswer = key;
    write();
  }
}
