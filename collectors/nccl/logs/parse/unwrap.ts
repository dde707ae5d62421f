/**
 * Logical lines out of physical lines as people paste them (offline only: `ringwatch analyze`).
 * Two things break PyTorch's lines on the way to an issue thread:
 *
 * - Glued: a progress bar redraws with `\r`, so the error that follows lands on the bar's line:
 *   `24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.18 ProcessGroupNCCL.cpp:632] ...`.
 *   A PyTorch line start (`[rankN]:`, or a c10 log header `[E0602 11:17:52.18 X.cpp:N]` /
 *   `[E X.cpp:N]`) found after text that is not a prefix starts a new line there.
 * - Wrapped: a terminal, tmux or a job runner breaks long lines at a fixed width (mid-word, the
 *   last row padded with blanks) or at a blank, and the rows after the first have no prefix. The
 *   rows after a PyTorch c10 log line are joined back to it while they have no line start of
 *   their own, up to the end of its sentence; so is the row after a NCCL WARN that ends in a colon. A row ending in `Last error:` is joined to the
 *   next row when that row carries the same prefix (`[rank3]: Last error:` / `[rank3]: NET/OFI ...`).
 *
 * NCCL's own lines need neither: the header is found anywhere in a line (line.ts). A terminal
 * wraps at a fixed width, mid-word (`OpTy` / `pe=BROADCAST`): the first 2,000 rows of a log are
 * read before any is passed on, and a width that two or more wrapped rows share (and most of them)
 * is the terminal's; a row of that width is joined to the next as it is. Any other joined row gets
 * a blank unless one is already at the joint (a runner that wraps at blanks may drop the blank), so
 * that at worst a word becomes two: numbers stay whole or are not read at all.
 */
import { parsePrefix } from "./prefix.js";
import { isDigit, skipSpaces, trimEnd } from "./scan.js";

/** Rows joined into one logical line at most, and its length. */
const MAX_ROWS = 24;
const MAX_JOINED = 8192;
/** `[` positions tried per physical line when looking for a glued start. */
const MAX_TRIES = 64;
/** Rows read before the first is passed on, to learn a terminal's wrap width. */
const HEAD_ROWS = 2000;
/** Rows shorter than this are not taken for a terminal's width. */
const MIN_WIDTH = 60;

/** The watchdog's own words (ProcessGroupNCCL.cpp), which a reporter may lay out over rows without their header. */
const WATCHDOG_WORDS = "Watchdog caught collective operation timeout";
const FAILURE_WORDS = "failure detected by watchdog at work sequence id";

/** Rows that begin something of their own (after blanks), never a wrapped row. */
const OWN_STARTS = [
  "frame #",
  "Exception raised from",
  "Traceback",
  'File "',
  "CUDA kernel errors",
  "For debugging consider",
  "Compile with",
  "terminate called",
  "what():",
  "RuntimeError",
  "torch.",
  "#",
  "[",
  "(",
];

/** Index just after `]` of a c10 log header `[E0602 11:17:52.185 File.cpp:632]` / `[E File.cpp:138]` at i, else -1. */
function c10HeaderEnd(s: string, i: number, end: number): number {
  if (s.charCodeAt(i) !== 91) return -1;
  const lv = s.charCodeAt(i + 1);
  if (lv !== 69 && lv !== 87 && lv !== 73 && lv !== 70) return -1; // E W I F
  const c2 = s.charCodeAt(i + 2);
  if (c2 !== 32 && !isDigit(c2)) return -1;
  const close = s.indexOf("]", i + 2);
  if (close < 0 || close >= end || close - i > 80) return -1;
  const dot = s.indexOf(".cpp:", i + 2);
  return dot > 0 && dot < close ? close + 1 : -1;
}

/** `[rankN]:` at i. */
function rankTagAt(s: string, i: number): boolean {
  if (!s.startsWith("[rank", i)) return false;
  let k = i + 5;
  if (!isDigit(s.charCodeAt(k))) return false;
  while (isDigit(s.charCodeAt(k))) k++;
  return s.charCodeAt(k) === 93 && s.charCodeAt(k + 1) === 58;
}

/** Where a PyTorch line glued to other text starts in s (after index 0), or -1. */
function gluedStart(s: string): number {
  let k = s.indexOf("[", 1);
  for (let tries = 0; k > 0 && tries < MAX_TRIES; tries++) {
    if (rankTagAt(s, k) || c10HeaderEnd(s, k, s.length) > 0) {
      // Only prefixes before it (`[1,0]<stdout>:`, a timestamp, `[rank3]:` before `[E...]`): not glued.
      if (parsePrefix(s, 0, k).end < k) return k;
    }
    k = s.indexOf("[", k + 1);
  }
  return -1;
}

/** The text after the line's prefixes, and the prefix text itself. */
function splitPrefix(s: string): { prefix: string; body: number } {
  const p = parsePrefix(s, 0, s.length, true);
  return { prefix: s.slice(0, p.end).trimEnd(), body: p.end };
}

/** A row that may be the continuation of a wrapped line: no prefix, no start of its own, not blank. */
function isBareRow(s: string): boolean {
  const i = skipSpaces(s, 0, s.length);
  if (i >= s.length) return false;
  for (const start of OWN_STARTS) if (s.startsWith(start, i)) return false;
  if (parsePrefix(s, 0, s.length, true).end > 0) return false;
  // A NCCL line (`host:pid:tid [n] NCCL INFO`) is whole.
  return s.indexOf(" NCCL INFO ") < 0 && s.indexOf(" NCCL WARN ") < 0;
}

/** A row indented with blanks whose text starts nothing of its own (`         ran for 1800003 milliseconds ...`). */
function isIndentedRow(s: string): boolean {
  const i = skipSpaces(s, 0, s.length);
  if (i === 0 || i >= s.length) return false;
  for (const start of OWN_STARTS) if (s.startsWith(start, i)) return false;
  return parsePrefix(s, i, s.length, true).end === i && s.indexOf(" NCCL ", i) < 0;
}

/** The watchdog's words without a c10 header, their sentence not ended: rows a reporter laid out. */
function isWatchdogLayout(s: string): boolean {
  return s.indexOf(".cpp:") < 0 && (s.indexOf(WATCHDOG_WORDS) >= 0 || s.indexOf(FAILURE_WORDS) >= 0);
}

/** A body (after a prefix) that starts a line of its own: a bracket or a date, a traceback, a NCCL line. */
function opensOwnLine(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c === 91 /* [ */ || (c >= 48 && c <= 57)) return true;
  for (const start of OWN_STARTS) if (s.startsWith(start, i)) return true;
  return s.indexOf(" NCCL ", i) >= 0;
}

/** A row that opens with a lowercase `word: ` and no other start of its own (no NCCL header, no launcher tag in brackets). */
function isWordColonRow(s: string): boolean {
  const c = s.charCodeAt(0);
  if (c < 97 || c > 122) return false;
  for (const start of OWN_STARTS) if (s.startsWith(start)) return false;
  const p = parsePrefix(s, 0, s.length, true);
  return p.launcher?.kind === "pdsh" && s.indexOf(" NCCL INFO ") < 0 && s.indexOf(" NCCL WARN ") < 0;
}

/**
 * A PyTorch c10 log line whose message may go on in the next rows, a NCCL WARN line that breaks
 * off after a colon (`... message truncated :` / `receiving 1048576 bytes instead of 65536`), or
 * the watchdog's words without their c10 header, as a reporter laid them out over rows until the
 * sentence ends (`[Rank 4] Watchdog caught collective operation timeout:` / `WorkNCCL(SeqNum=27732,
 * ...` / `ran for 1800003 milliseconds before timing out.`, nccl-pasted 659).
 */
function mayContinue(s: string): boolean {
  if (s.indexOf(".cpp:") < 0) {
    const last = s.charCodeAt(trimEnd(s, 0, s.length) - 1);
    if (s.indexOf("atchdog") >= 0 && (s.indexOf(WATCHDOG_WORDS) >= 0 || s.indexOf(FAILURE_WORDS) >= 0)) return last !== 46; // .
    return last === 58 && s.indexOf("NCCL WARN ") >= 0;
  }
  const body = parsePrefix(s, 0, s.length, true).end;
  if (c10HeaderEnd(s, body, s.length) < 0) return false;
  return s.charCodeAt(trimEnd(s, 0, s.length) - 1) !== 46; // a sentence that ends: whole
}

/**
 * The width a terminal wrapped these rows at: the length (MIN_WIDTH or more) that two or more rows
 * followed by a bare row share, and most of such rows have; undefined when there is none.
 */
function wrapWidth(rows: readonly string[]): number | undefined {
  const byLen = new Map<number, number>();
  let wrapped = 0;
  for (let i = 0; i + 1 < rows.length; i++) {
    const r = rows[i] as string;
    if (r.length < MIN_WIDTH || !isBareRow(rows[i + 1] as string)) continue;
    wrapped++;
    byLen.set(r.length, (byLen.get(r.length) ?? 0) + 1);
  }
  let best: [number, number] | undefined;
  for (const e of byLen) if (best === undefined || e[1] > best[1]) best = e;
  return best !== undefined && best[1] >= 2 && best[1] * 2 >= wrapped ? best[0] : undefined;
}

/**
 * Feeds physical lines, emits logical ones with the number of their first physical line. Call
 * end() after the last line.
 */
export class LineUnwrapper {
  private pending: string | undefined;
  private pendingNo = 0;
  private rows = 0;
  /** The pending line ends in `Last error:`; the next row with this prefix goes on with it. */
  private lastErrorPrefix: string | undefined;
  /** Rows held until the terminal's width is known (undefined once they were passed on). */
  private head: [string, number][] | undefined = [];
  private width: number | undefined;
  /** Length of the last row joined to the pending line. */
  private lastRowLen = 0;

  constructor(private readonly emit: (text: string, lineNo: number) => void) {}

  push(text: string, lineNo: number): void {
    if (this.head !== undefined) {
      this.head.push([text, lineNo]);
      if (this.head.length >= HEAD_ROWS) this.replayHead();
      return;
    }
    this.feed(text, lineNo);
  }

  /** After the last line: passes on everything still held. */
  end(): void {
    if (this.head !== undefined) this.replayHead();
    this.flush();
  }

  private replayHead(): void {
    const rows = this.head ?? [];
    this.head = undefined;
    this.width = wrapWidth(rows.map(([t]) => t));
    for (const [t, n] of rows) this.feed(t, n);
  }

  private feed(text: string, lineNo: number): void {
    if (this.pending !== undefined && this.joins(text)) return;
    this.flush();
    // Split glued starts; each piece but the last is whole.
    let rest = text;
    for (let k = gluedStart(rest); k > 0; k = gluedStart(rest)) {
      this.emit(rest.slice(0, k), lineNo);
      rest = rest.slice(k);
    }
    this.hold(rest, lineNo);
  }

  /** Emits the line held back for possible continuation rows. */
  private flush(): void {
    if (this.pending === undefined) return;
    this.emit(this.pending, this.pendingNo);
    this.pending = undefined;
    this.lastErrorPrefix = undefined;
  }

  private hold(text: string, lineNo: number): void {
    const le = lastErrorPrefixOf(text);
    if (le === undefined && !mayContinue(text) && !this.wrappedWhat(text, text.length)) {
      this.emit(text, lineNo);
      return;
    }
    this.pending = text;
    this.pendingNo = lineNo;
    this.rows = 1;
    this.lastRowLen = text.length;
    this.lastErrorPrefix = le;
  }

  /**
   * The exception text of `terminate called ...` (`  what():  [Rank 1] NCCL watchdog ...`), whose
   * last row filled the terminal's width (nccl-pasted 582): the next bare row goes on with it.
   */
  private wrappedWhat(text: string, lastRowLen: number): boolean {
    return this.width !== undefined && lastRowLen === this.width && text.indexOf("what():") >= 0;
  }

  /** Joins text to the pending line when it continues it; false when it does not. */
  private joins(text: string): boolean {
    const p = this.pending as string;
    if (this.rows >= MAX_ROWS || p.length + text.length > MAX_JOINED) return false;
    let row: string;
    if (this.lastErrorPrefix !== undefined) {
      const lp = this.lastErrorPrefix;
      const split = splitPrefix(text);
      // The same prefix, as the strict reading gives it or literally (pdsh's `node2: ` before `Net : Call to recv ...`).
      const literal = lp !== "" && text.startsWith(lp) && text.charCodeAt(lp.length) === 32 ? skipSpaces(text, lp.length, text.length) : -1;
      const body = split.prefix === lp ? split.body : literal >= 0 && !opensOwnLine(text, literal) ? literal : -1;
      if (body < 0 || body >= text.length) return false;
      row = text.slice(body);
      this.lastErrorPrefix = undefined;
    } else {
      // After a row that filled the terminal's width, a row whose `word: [` only looks like a pdsh tag
      // (`exception: [Rank 1] Watchdog caught ...`, nccl-pasted 582) goes on with it all the same.
      if (
        !isBareRow(text) &&
        !(this.width !== undefined && this.lastRowLen === this.width && isWordColonRow(text)) &&
        !(isIndentedRow(text) && isWatchdogLayout(p))
      )
        return false;
      row = text;
    }
    // A row's indent is layout, not text: one blank at the joint.
    if (/^\s/.test(row) && this.lastRowLen !== this.width) row = row.trimStart();
    const glue = this.lastRowLen === this.width || /\s$/.test(p) || /^\s/.test(row) ? "" : " ";
    this.pending = p + glue + row;
    this.rows++;
    this.lastRowLen = text.length;
    // Go on while the message has no end yet.
    if (!mayContinue(this.pending) && !this.wrappedWhat(this.pending, this.lastRowLen)) this.flush();
    return true;
  }
}

/** The prefix of a row that ends in `Last error:` (PyTorch prints the error on the next row). */
function lastErrorPrefixOf(s: string): string | undefined {
  const e = trimEnd(s, 0, s.length);
  if (e < 11 || !s.startsWith("Last error:", e - 11)) return undefined;
  return splitPrefix(s).prefix;
}
