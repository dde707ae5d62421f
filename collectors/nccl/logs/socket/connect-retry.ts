/**
 * NCCL's socket connect retries: `host:16:63 [0] NCCL INFO Call to connect returned Connection refused,
 * retrying` (misc/socket.cc; also `Connection timed out`). NCCL retries a refused connect for about 20 s
 * and a timed-out one a few times, then WARNs `Connect to <addr> failed` and returns an error. An
 * excerpt whose lines of a process end in the retries (nccl-pasted 556: a pod whose peer never
 * listened) shows the failure before NCCL says it: a network_error warning, unless a finding of the
 * logs (the WARN that follows) already names that process. A process with any line after its
 * retries went on, and is left out. Analyze only; cut at fixed words.
 */
import { parseHeaderAt } from "../parse/header.js";
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = " NCCL INFO Call to connect returned ";
const MAX_PROCESSES = 1024;

export interface Retries {
  /** `host:pid` as NCCL's header names the process. */
  process: string;
  /** What connect returned: `Connection refused`. */
  error: string;
  count: number;
  where: string[];
}

/** The old retry's words are on the line: a line without them is no retry. */
export function isConnectRetry(text: string): boolean {
  return text.indexOf(MARK) >= 0;
}

/**
 * The retries of one log, read from its NCCL lines as the line parser reads them: each line's
 * process comes from the header that parser read already (analyze.ts); only a retry's own header is
 * read here, at its words (a line a paste glued to another's names the process before them).
 */
export class ConnectRetryReader {
  /**
   * `source`: the log's name in evidence; `byProcess`: the processes whose last line so far is a
   * retry, shared by the readers of all the logs (a process's retries in one file, its next line in another).
   */
  constructor(
    private readonly source: string,
    private readonly byProcess = new Map<string, Retries>(),
  ) {}

  /** Some process's last line so far is a retry: the lines of every process matter. */
  get open(): boolean {
    return this.byProcess.size > 0;
  }

  /** An NCCL line of `process` (`host:pid`, as its header names it): a retry, or a line it went on with. */
  line(text: string, process: string, lineNo: number): void {
    const k = text.indexOf(MARK);
    if (k < 0) return this.wentOn(process);
    const h = parseHeaderAt(text, k, 0, text.length);
    if (h === undefined || h.host === "") return;
    const own = `${h.host}:${h.pid}`;
    if (own !== process) this.wentOn(process);
    const from = k + MARK.length;
    const comma = text.indexOf(", retrying", from);
    this.retried(own, text.slice(from, comma > from ? comma : text.length).trim(), lineNo);
  }

  /** Another NCCL line of a retrying process: it went on (connected, or failed in words a finding tells). */
  wentOn(process: string): void {
    if (this.byProcess.size > 0) this.byProcess.delete(process);
  }

  /** A retry of `process` (also NCCL 2.19+'s `retrying (N/M)` before its last, parse/connect-retry.ts): what connect returned. */
  retried(process: string, error: string, lineNo: number): void {
    let r = this.byProcess.get(process);
    if (r === undefined) {
      if (this.byProcess.size >= MAX_PROCESSES) return;
      this.byProcess.set(process, (r = { process, error, count: 0, where: [] }));
    }
    r.count++;
    if (r.where.length < 3) r.where.push(`${this.source}:${lineNo}`);
  }

  retries(): readonly Retries[] {
    return [...this.byProcess.values()];
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
