/**
 * A rank's own Python exception: the last line of its traceback under PyTorch's rank prefix
 * (`[rank4]: FileNotFoundError: [Errno 2] No such file or directory: '...'`, also behind DeepSpeed's
 * pdsh launcher's `192.168.205.202: `; nccl-pasted 880, 881). The rank failed in the job's own code
 * and left; its node's launcher killed the others there, and the ranks on other nodes wait in the
 * next collective until their watchdogs time out, half an hour later. Where the findings before
 * it hold such a timeout (or another hang) on other ranks, the failed rank is the one they waited
 * for: a rank_behind that names the exception, sorted before the timeouts, so that the verdict
 * names the cause and not "the network or a GPU". An exception of the distributed layer itself
 * (DistBackendError, the watchdog's own RuntimeError, a store's or a socket's words, Gloo's) is the
 * hang's consequence, not its cause, and is not read. One scan of the line, no regular expression.
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

/** Words of an exception the distributed layer raised because of the hang, not before it. */
const DISTRIBUTED = [
  "NCCL",
  "Watchdog",
  "watchdog",
  "ProcessGroup",
  "c10d",
  "TCPStore",
  "Socket",
  "socket",
  "Connection",
  "connection",
  "timed out",
  "Timed out",
  "timeout",
  "Gloo",
  "collective",
  "rendezvous",
  "store",
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
  if (tag < 0 || tag > MAX_TAG_AT) return undefined;
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
  if (!name.endsWith("Error") && !name.endsWith("Exception")) return undefined;
  if (name.startsWith("Dist") || name === "ChildFailedError") return undefined;
  const message = text.slice(i + 2).trim();
  if (DISTRIBUTED.some((w) => message.indexOf(w) >= 0)) return undefined;
  return { rank, exception, message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}...` : message };
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
  const first = new Map<number, RankException>();
  for (const e of items) if (!waiting.has(e.rank) && !first.has(e.rank)) first.set(e.rank, e);
  const failed = [...first.values()].sort((a, b) => a.rank - b.rank);
  if (failed.length === 0) return [];
  const lead = failed[0] as RankException;
  const hang = hangs[0] as Finding;
  return [
    rankBehind({
      summary: rankBehindWords.failedFirst({
        ranks: failed.map((e) => e.rank),
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
