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

interface Retries {
  /** `host:pid` as NCCL's header names the process. */
  process: string;
  /** What connect returned: `Connection refused`. */
  error: string;
  count: number;
  where: string[];
}

/** `host:pid` of the NCCL header whose ` NCCL ` marker starts at k; undefined if it is none. */
function headerProcess(s: string, k: number): string | undefined {
  const h = parseHeaderAt(s, k, 0, s.length);
  return h !== undefined && h.host !== "" ? `${h.host}:${h.pid}` : undefined;
}

export class ConnectRetryReader {
  /** Processes whose last line so far is a retry. */
  private readonly byProcess = new Map<string, Retries>();

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    const k = text.indexOf(MARK);
    if (k < 0) {
      // Another NCCL line of a retrying process: it went on (connected, or failed in words a finding tells).
      if (this.byProcess.size > 0) {
        const n = text.indexOf(" NCCL ");
        const p = n > 0 ? headerProcess(text, n) : undefined;
        if (p !== undefined) this.byProcess.delete(p);
      }
      return;
    }
    const process = headerProcess(text, k);
    if (process === undefined) return;
    const from = k + MARK.length;
    const comma = text.indexOf(", retrying", from);
    const error = text.slice(from, comma > from ? comma : text.length).trim();
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
