/**
 * A rank's own Python exception: the last line of its traceback under PyTorch's rank prefix
 * (`[rank4]: FileNotFoundError: [Errno 2] No such file or directory: '...'`, also behind DeepSpeed's
 * pdsh launcher's `192.168.205.202: `; nccl-pasted 880, 881). The rank failed in the job's own code
 * and left; its node's launcher killed the others there, and the ranks on other nodes wait in the
 * next collective until their watchdogs time out, half an hour later. Where the findings before
 * it hold such a timeout (or another hang) on other ranks, the failed rank is the one they waited
 * for: a rank_behind that names the exception, sorted before the timeouts, so that the verdict
 * names the cause and not "the network or a GPU". Only an exception read before the hang's first
 * line in the same log (a restart's or a stopped job's comes after), under the rank tag at the
 * line's start or after a launcher's host prefix. An exception of the distributed layer itself
 * (DistBackendError, the watchdog's own RuntimeError, a store's or a socket's words, Gloo's), or of
 * a process being stopped (SIGTERM, killed by signal), is the hang's consequence, not its cause,
 * and is not read. One scan of the line, no regular expression.
 */
import { isDigit } from "../parse/scan.js";
import { rankBehind } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { rankBehindWords } from "../../verdict/words.js";

/** Words every line this reader reads holds (evidence.ts's gate). */
export const RANK_EXCEPTION_MARKS = ["Error: ", "Exception: "];

/** Where the `[rankN]:` tag may start: after a launcher's host prefix, not deep in a message. */
const MAX_TAG_AT = 80;
/** Characters of the message kept. */
const MAX_MESSAGE = 160;
/** Ranks' exceptions kept (the first of each rank). */
const MAX_RANKS = 4096;

/**
 * Words of an exception the distributed layer raised because of the hang, or a process raised when
 * it was stopped (a time limit's SIGTERM, a dead store), not before it.
 */
const CONSEQUENCES = [
  "NCCL",
  "Watchdog",
  "watchdog",
  "ProcessGroup",
  "c10d",
  "TCPStore",
  "store->",
  "Socket",
  "socket",
  "Connection",
  "timed out",
  "Timed out",
  "Gloo",
  "rendezvous",
  "monitoredBarrier",
  "killed by signal",
  "exited unexpectedly",
  "Broken pipe",
  "Stop_waiting",
  "Terminated",
  "SIGTERM",
  "aborted",
];

export interface RankException {
  rank: number;
  /** `FileNotFoundError`, `torch.OutOfMemoryError`. */
  exception: string;
  message: string;
  where: string;
}

/** `[rank4]: FileNotFoundError: msg` (after any host prefix) → rank, exception and message; undefined for any other line. */
export function rankException(text: string): Omit<RankException, "where"> | undefined {
  const tag = text.indexOf("[rank");
  if (tag < 0 || tag > MAX_TAG_AT || !prefixBefore(text, tag)) return undefined;
  let i = tag + 5;
  let rank = 0;
  const digits = i;
  while (i < text.length && isDigit(text.charCodeAt(i))) rank = rank * 10 + (text.charCodeAt(i++) - 48);
  if (i === digits || !text.startsWith("]:", i)) return undefined;
  i += 2;
  while (text.charCodeAt(i) === 32) i++;
  // A Python name, dotted (`torch.OutOfMemoryError`), then `: `: the traceback's last line, unindented.
  const start = i;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || (i > start && isDigit(c))) i++;
    else break;
  }
  if (i === start || !text.startsWith(": ", i)) return undefined;
  const exception = text.slice(start, i);
  const name = exception.slice(exception.lastIndexOf(".") + 1);
  // `ValueError`, `torch.OutOfMemoryError`; not a log's own `Error: could not open ...`.
  if ((!name.endsWith("Error") && !name.endsWith("Exception")) || name === "Error" || name === "Exception") return undefined;
  if (name.startsWith("Dist") || name === "ChildFailedError") return undefined;
  const message = text.slice(i + 2).trim();
  if (CONSEQUENCES.some((w) => message.indexOf(w) >= 0)) return undefined;
  return { rank, exception, message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}...` : message };
}

/** The tag opens the line, or follows a launcher's host prefix (`192.168.205.202: `, one word and `: `): not prose that quotes it. */
function prefixBefore(text: string, tag: number): boolean {
  if (tag === 0) return true;
  if (tag < 3 || !text.startsWith(": ", tag - 2)) return false;
  for (let i = 0; i < tag - 2; i++) if (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9) return false;
  return true;
}

/** `dir/x.log:12` → its log and line. */
function place(where: string): { source: string; line: number } | undefined {
  const c = where.lastIndexOf(":");
  const line = Number(where.slice(c + 1));
  return c > 0 && Number.isInteger(line) ? { source: where.slice(0, c), line } : undefined;
}

export interface RankExceptionReader {
  readonly items: readonly RankException[];
  line(text: string, lineNo: number): void;
}

/** The first exception of each rank in one log. */
export function rankExceptionReader(source: string): RankExceptionReader {
  const items: RankException[] = [];
  const seen = new Set<number>();
  return {
    items,
    line(text: string, lineNo: number): void {
      if (seen.size >= MAX_RANKS) return;
      const e = rankException(text);
      if (e === undefined || seen.has(e.rank)) return;
      seen.add(e.rank);
      items.push({ ...e, where: `${source}:${lineNo}` });
    },
  };
}

/**
 * The ranks whose own exception came while others hang: one rank_behind naming them and the ranks
 * that waited (the ranks of the timeouts and hangs at warning or above before it), where those
 * ranks are not the failed ones; none where nothing hangs.
 */
export function rankExceptionFindings(items: readonly RankException[], before: readonly Finding[]): Finding[] {
  const hangs = before.filter((f) => (f.kind === "watchdog_timeout" || f.kind === "hang_suspected") && f.severity !== "info" && f.ranks.length > 0);
  if (hangs.length === 0 || items.length === 0) return [];
  const waiting = new Set(hangs.flatMap((f) => f.ranks));
  // The first line of a hang in each log: an exception after it in the same log came later (a restart's, a stop's).
  const hangStart = new Map<string, number>();
  for (const w of hangs.flatMap((f) => f.evidence)) {
    const at = place(w);
    if (at !== undefined && at.line < (hangStart.get(at.source) ?? Infinity)) hangStart.set(at.source, at.line);
  }
  const first = new Map<number, RankException>();
  for (const e of items) {
    const at = place(e.where);
    const start = at !== undefined ? hangStart.get(at.source) : undefined;
    if (at !== undefined && start !== undefined && at.line > start) continue;
    if (!waiting.has(e.rank) && !first.has(e.rank)) first.set(e.rank, e);
  }
  // The lead is the first exception read; the ranks, in order.
  const lead = [...first.values()][0];
  if (lead === undefined) return [];
  const failed = [...first.values()].sort((a, b) => a.rank - b.rank);
  const hang = hangs[0] as Finding;
  return [
    rankBehind({
      summary: rankBehindWords.failedFirst({
        ranks: failed.map((e) => e.rank),
        rank: lead.rank,
        gpu: lead.message.indexOf("CUDA") >= 0 || lead.exception.indexOf("OutOfMemory") >= 0,
        exception: lead.exception,
        message: lead.message,
        where: lead.where,
        waiting: [...waiting].sort((a, b) => a - b),
        ...(hang.seq !== undefined ? { seq: hang.seq } : {}),
        ...(hang.op !== undefined ? { op: hang.op } : {}),
      }),
      ranks: failed.map((e) => e.rank),
      processes: [],
      comm_id: null,
      evidence: [...failed.slice(0, 4).map((e) => e.where), ...hang.evidence.slice(0, 1)],
      waiting_ranks: [...waiting].sort((a, b) => a - b),
    }),
  ];
}
