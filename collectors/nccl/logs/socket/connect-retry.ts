/**
 * NCCL's socket connect retries: `host:16:63 [0] NCCL INFO Call to connect returned Connection refused,
 * retrying` (misc/socket.cc; also `Connection timed out`). NCCL retries a refused connect for about 20 s
 * and a timed-out one a few times, then WARNs `Connect to <addr> failed` and returns an error. An
 * excerpt whose lines of a process end in the retries (nccl-pasted 556: a pod whose peer never
 * listened) shows the failure before NCCL says it: a network_error warning, unless a finding of the
 * logs (the WARN that follows) already names that process. A process with any line after its
 * retries went on, and is left out. Analyze only; cut at fixed words.
 */
import { connectRetryLine } from "../parse/connect-retry.js";
import { parseHeaderAt } from "../parse/header.js";
import type { WarnEvent } from "../parse/types.js";
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = " NCCL INFO Call to connect returned ";
const MAX_PROCESSES = 1024;
/** Threads whose last line so far is a connect's last retry, kept at once. */
const MAX_THREADS = 65_536;

export interface Retries {
  /** `host:pid` as NCCL's header names the process. */
  process: string;
  /** What connect returned: `Connection refused`. */
  error: string;
  count: number;
  where: string[];
}

/** A thread's connect at its last retry (NCCL 2.19+'s `retrying (34/34)`), as the WARN of its failure would say it. */
export interface LastRetry {
  ev: WarnEvent;
  ctx: { source: string; lineNo: number };
}

/**
 * What the retries of all the logs leave open: one state across the logs, as a process's retries in
 * one file and its next line in another are one process.
 */
export class RetryState {
  /** The processes whose last line so far is a retry (the old form, and 2.19+'s before its last). */
  readonly byProcess = new Map<string, Retries>();
  /** `host:pid:tid` → the thread's connect at its last retry, while no later line of that thread is read. */
  readonly lastRetries = new Map<string, LastRetry>();
}

/**
 * The retries of one log, read from its lines as the line parser reads them: a line that gave no
 * event is offered to retryLine first, then (with the header that parser read) to line; a line
 * that gave an event, to event. Only a retry's own header is read here, at its words (a line a
 * paste glued to another's names the process before them).
 */
export class ConnectRetryReader {
  /** `source`: the log's name in evidence; `state`: shared by the readers of all the logs. */
  constructor(
    private readonly source: string,
    private readonly state = new RetryState(),
  ) {}

  /** Some process's or thread's last line so far is a retry: the lines of every process matter. */
  get open(): boolean {
    return this.state.byProcess.size > 0 || this.state.lastRetries.size > 0;
  }

  /** Whether `text`'s header should be read for this reader's sake (a retry's words, or retries open). */
  wantsHeader(text: string): boolean {
    return this.open || text.indexOf(MARK) >= 0;
  }

  /**
   * NCCL 2.19+'s retry (`socketPollConnect: connect returned ..., retrying (N/M) ...`): true when
   * `text` is one. A retry before the last counts as the old retries do; the last is the thread's
   * failed connect, unless a later line of that thread follows.
   */
  retryLine(text: string, lineNo: number): boolean {
    const retry = connectRetryLine(text);
    if (retry === undefined) return false;
    const { ev, tries, of } = retry;
    if (tries < of) {
      if (ev.host !== undefined && ev.host !== "") this.retried(`${ev.host}:${ev.pid}`, ev.error ?? "", lineNo);
    } else if (this.state.lastRetries.size < MAX_THREADS) {
      this.state.lastRetries.set(`${ev.host}:${ev.pid}:${ev.tid}`, { ev, ctx: { source: this.source, lineNo } });
    }
    return true;
  }

  /** An NCCL line that gave no event, of the process and thread its header names: a retry (old form), or a line it went on with. */
  line(text: string, h: { process: string; thread: string }, lineNo: number): void {
    if (this.state.lastRetries.size > 0) this.state.lastRetries.delete(h.thread);
    const k = text.indexOf(MARK);
    if (k < 0) return this.wentOn(h.process);
    const own = parseHeaderAt(text, k, 0, text.length);
    if (own === undefined || own.host === "") return;
    const process = `${own.host}:${own.pid}`;
    if (process !== h.process) this.wentOn(h.process);
    const from = k + MARK.length;
    const comma = text.indexOf(", retrying", from);
    this.retried(process, text.slice(from, comma > from ? comma : text.length).trim(), lineNo);
  }

  /** A line that gave an event, of this process and thread: it went on (connected, or failed in words a finding tells). */
  event(host: string, pid: number, tid: number | undefined): void {
    if (this.state.lastRetries.size > 0) this.state.lastRetries.delete(`${host}:${pid}:${tid}`);
    this.wentOn(`${host}:${pid}`);
  }

  private wentOn(process: string): void {
    if (this.state.byProcess.size > 0) this.state.byProcess.delete(process);
  }

  private retried(process: string, error: string, lineNo: number): void {
    const byProcess = this.state.byProcess;
    let r = byProcess.get(process);
    if (r === undefined) {
      if (byProcess.size >= MAX_PROCESSES) return;
      byProcess.set(process, (r = { process, error, count: 0, where: [] }));
    }
    r.count++;
    if (r.where.length < 3) r.where.push(`${this.source}:${lineNo}`);
  }
}

/** One network_error warning for the processes whose retries no other finding of the logs tells. */
export function connectRetryFindings(all: readonly Retries[], told: ReadonlySet<string>): Finding[] {
  const open = all.filter((r) => !told.has(r.process));
  if (open.length === 0) return [];
  return [
    networkError({
      severity: "warning",
      summary: networkErrorWords.connectRetries({
        processes: open.map((r) => r.process),
        errors: [...new Set(open.map((r) => r.error))],
        count: open.reduce((n, r) => n + r.count, 0),
      }),
      ranks: [],
      processes: open.map((r) => r.process),
      comm_id: null,
      evidence: open.flatMap((r) => r.where).slice(0, 5),
    }),
  ];
}
