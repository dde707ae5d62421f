/**
 * Horovod's stall inspector (horovod/common/stall_inspector.cc, before 0.17 operations.cc): the
 * warning the coordinator prints when some ranks submitted a tensor for a collective and the
 * others have not for `HOROVOD_STALL_CHECK_TIME_SECONDS` (60 s by default). One line in, one fact
 * out; the reader below puts a report's lines together. The writer's forms, oldest first:
 *
 * - 0.9 to 0.13.5 (std::cerr): `WARNING: One or more tensors were submitted to be reduced, gathered or
 *   broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.
 *   This may indicate ... which will cause deadlock. Stalled ops: <tensor> [ready ranks: 5, 1, 4],
 *   <tensor> [ready ranks: ...], ...` (the ranks that did submit; in mid-2018 on a line each, and
 *   briefly `[ready ranks: 1, 2], [missing ranks: 0]`).
 * - 0.13.10 to 0.16.1: `Stalled ops:` ends the preamble, then `<tensor> [missing ranks: 1]` per
 *   tensor (from 0.16.0 one `LOG(WARNING)` per tensor: the first glued to `Stalled ops:`, the others
 *   behind their own `[2019-04-13 13:55:31.858119: W horovod/common/operations.cc:588] ` header).
 * - `Stalled ranks:` (0.16.2 to 0.20.2; stall_inspector.cc from 0.17), `Missing ranks:` (0.20.3 on):
 *   then one line per missing rank, `<rank>: [<tensor>, <tensor>, ... ...]` (at most six names, then
 *   ` ...`), the rank followed by `!` when it is past `HOROVOD_STALL_SHUTDOWN_TIME_SECONDS`; and then
 *   `One or more rank (marked by "!") is stalled for longer than 180 seconds. Will shutdown.`
 *   (the whole report then `LOG(ERROR)`).
 *
 * Launchers put their tags in front of each line (`[1,0]<stderr>:`, horovodrun's `[0] `), sometimes
 * in the middle of one (OpenMPI splits a write). Cut at fixed words with indexOf: no regular
 * expression, nothing that backtracks on a long line.
 */
import { isDigit, isSpace, readInt, readRankList, pos, trimEnd } from "../parse/scan.js";

/** Reports kept per log, tensors and lines kept per report, ranks kept per report. */
const MAX_REPORTS = 8;
const MAX_TENSORS = 64;
const MAX_LINES = 64;
const MAX_RANKS = 4096;

/** Appends up to the cap. */
function add<T>(to: T[], xs: readonly T[], cap: number): void {
  for (const x of xs) {
    if (to.length >= cap) return;
    to.push(x);
  }
}

/** The words that open every stall report, in every version. */
const HEADER = "One or more tensors were submitted to be";
const SHUTDOWN = "is stalled for longer than ";
/** The header's words after a wrap (`...remaind` / `er of ranks for more than 60 seconds. This may indicate ...`). */
const REST = " ranks for more than ";
const SECTIONS = [
  ["Stalled ranks:", "ranks"],
  ["Missing ranks:", "ranks"],
  ["Stalled ops:", "ops"],
] as const;

/** A tensor and the ranks the writer listed with it. */
export interface StallTensor {
  name: string;
  /** `[missing ranks: ...]`: the ranks that have not submitted it. */
  missing?: number[];
  /** `[ready ranks: ...]`: the ranks that have (the oldest form lists only these). */
  ready?: number[];
}

export type StallFact =
  /** The report's first line: how long the tensors have waited, when the line says (it may wrap before). */
  | { kind: "header"; seconds?: number; error: boolean }
  /** `Stalled ranks:` / `Missing ranks:` (a rank per line follows) or `Stalled ops:` (tensors follow; some may be on this line). */
  | { kind: "section"; section: "ranks" | "ops"; tensors: StallTensor[]; header?: { seconds?: number } }
  /** `<tensor> [missing ranks: 1]` or `<tensor> [ready ranks: 0, 2], ...`: one or more tensors on a line. */
  | { kind: "tensors"; tensors: StallTensor[] }
  /** `4: [a, b, c ...]` or `4!: [...]` (past the shutdown time): a rank line, only meaningful after a `ranks` section. */
  | { kind: "rank"; rank: number; shutdown: boolean; tensors: string[]; closed: boolean; more: boolean }
  /** The rest of a header that a terminal or a paste wrapped: `...ranks for more than 60 seconds. This may indicate ...`. */
  | { kind: "header_rest"; seconds: number }
  /** `One or more rank (marked by "!") is stalled for longer than 180 seconds. Will shutdown.` */
  | { kind: "shutdown"; seconds?: number };

/**
 * Where the text after the launcher's tags begins: past the leading OpenMPI `[1,0]<stderr>:` tags
 * (one or more) or a horovodrun `[0] ` / `[0]: ` / `[0]<stderr>:` tag.
 */
export function contentStart(s: string): number {
  let i = 0;
  for (let n = 0; n < 4 && s.charCodeAt(i) === 91 /* [ */ && isDigit(s.charCodeAt(i + 1)); n++) {
    let j = i + 1;
    while (j < s.length && j - i < 24 && (isDigit(s.charCodeAt(j)) || s.charCodeAt(j) === 44)) j++;
    if (s.charCodeAt(j) !== 93 /* ] */) break;
    j++;
    if (s.startsWith("<stderr>:", j) || s.startsWith("<stdout>:", j)) j += 9;
    else if (s.charCodeAt(j) === 58 /* : */) j++;
    else if (!isSpace(s.charCodeAt(j))) break;
    i = j;
    while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  }
  return i;
}

/** The integer after `label`, or undefined. */
function intAfterLabel(s: string, label: string): number | undefined {
  const k = s.indexOf(label);
  return k < 0 ? undefined : readInt(s, k + label.length, s.length);
}

/**
 * Every `<tensor> [missing ranks: ...]` / `<tensor> [ready ranks: ...]` in s from `from`; a tensor's
 * name is the text before its bracket, back to the previous `], ` or `from`. A list cut by the end of
 * the line is left out.
 */
function tensorsIn(s: string, from: number, end: number): StallTensor[] {
  const out: StallTensor[] = [];
  let nameStart = from;
  let i = from;
  while (i < end && out.length < MAX_TENSORS) {
    const k = s.indexOf(" [", i);
    if (k < 0 || k >= end) break;
    const missing = s.startsWith("missing ranks:", k + 2);
    const ready = !missing && s.startsWith("ready ranks:", k + 2);
    if (!missing && !ready) {
      i = k + 2;
      continue;
    }
    const open = k + 2 + (missing ? 14 : 12);
    const close = s.indexOf("]", open);
    if (close < 0 || close >= end) break;
    const ranks = readRankList(s, open, close);
    let n0 = nameStart;
    while (n0 < k && (isSpace(s.charCodeAt(n0)) || s.charCodeAt(n0) === 44)) n0++;
    const name = s.slice(n0, k);
    if (ranks !== undefined && name.length > 0) {
      const t: StallTensor = { name };
      if (missing) t.missing = ranks;
      else t.ready = ranks;
      // `[ready ranks: 1, 2], [missing ranks: 0]` (mid-2018): the second list belongs to the same tensor.
      if (ready && s.startsWith(", [missing ranks:", close + 1)) {
        const c2 = s.indexOf("]", close + 18);
        const m = c2 > 0 && c2 < end ? readRankList(s, close + 18, c2) : undefined;
        if (m !== undefined) t.missing = m;
        i = c2 > 0 && c2 < end ? c2 + 1 : close + 1;
      } else i = close + 1;
      out.push(t);
    } else i = close + 1;
    nameStart = i;
  }
  return out;
}

/** `4: [a, b ...]`, `4!: [a]` at `at`; names up to `]` or the end of the line (a list that wraps goes on in the next line). */
function rankLine(s: string, at: number, end: number): StallFact | undefined {
  if (!isDigit(s.charCodeAt(at))) return undefined;
  const rank = readInt(s, at, end);
  if (rank === undefined) return undefined;
  let i = pos;
  const shutdown = s.charCodeAt(i) === 33; /* ! */
  if (shutdown) i++;
  if (!s.startsWith(": [", i)) return undefined;
  const { names, closed, more } = tensorNames(s, i + 3, end);
  return { kind: "rank", rank, shutdown, tensors: names, closed, more };
}

/** The names of a `[a, b, c ...]` list from `i`: up to `]` (closed) or the end of the line; `more`: the writer's `...` (or MAX_TENSORS) cut it. */
export function tensorNames(s: string, i: number, end: number): { names: string[]; closed: boolean; more: boolean } {
  const close = s.indexOf("]", i);
  const closed = close >= 0 && close < end;
  const stop = closed ? close : end;
  const names: string[] = [];
  let more = false;
  let a = i;
  while (a < stop) {
    if (names.length >= MAX_TENSORS) {
      more = true;
      break;
    }
    let b = s.indexOf(",", a);
    if (b < 0 || b > stop) b = stop;
    let x = a;
    let y = b;
    while (x < y && isSpace(s.charCodeAt(x))) x++;
    while (y > x && isSpace(s.charCodeAt(y - 1))) y--;
    if (s.startsWith(" ...", y - 4) && y - 4 >= x) {
      y -= 4; // the writer's "more than six" mark
      more = true;
    } else if (y - x === 3 && s.startsWith("...", x)) {
      y = x;
      more = true;
    }
    if (y > x) names.push(s.slice(x, y));
    a = b + 1;
  }
  return { names, closed, more };
}

/** One line → what it says of a stall report, or undefined for any other line. */
/** Whether a line outside a report can be one of its facts: the header (or its wrapped rest), a section, a tensor's ranks, the shutdown. */
function mayBeStallLine(s: string): boolean {
  // NCCL's INFO lines, most of a log, are never Horovod's: one short scan (the words come early) rules them out.
  if (s.indexOf("NCCL INFO") >= 0) return false;
  return (
    s.indexOf("ranks:") >= 0 ||
    s.indexOf("One or more") >= 0 ||
    s.indexOf(" ranks for more than ") >= 0 ||
    s.indexOf("Stalled ops") >= 0 ||
    s.indexOf("is stalled for") >= 0
  );
}

export function parseStallLine(s: string): StallFact | undefined {
  const end = trimEnd(s, 0, s.length);
  let k = s.indexOf(HEADER);
  if (k >= 0 && k < end) {
    const sec = intAfterLabel(s, "for more than ");
    const fact: StallFact = { kind: "header", error: s.lastIndexOf(": E ", k) >= 0 };
    if (sec !== undefined) fact.seconds = sec;
    // The oldest form goes on, on the same line, with `Stalled ops: ...`.
    const ops = s.indexOf("Stalled ops:", k);
    if (ops >= 0 && ops < end)
      return { kind: "section", section: "ops", tensors: tensorsIn(s, ops + 12, end), header: sec !== undefined ? { seconds: sec } : {} };
    return fact;
  }
  k = s.indexOf(REST);
  if (k >= 0 && k < end && s.indexOf("This may indicate that different ranks", k) >= 0) {
    const v = readInt(s, k + REST.length, end);
    if (v !== undefined) return { kind: "header_rest", seconds: v };
  }
  k = s.indexOf(SHUTDOWN);
  if (k >= 0 && k < end && s.indexOf("marked by") >= 0) {
    const v = readInt(s, k + SHUTDOWN.length, end);
    return v !== undefined ? { kind: "shutdown", seconds: v } : { kind: "shutdown" };
  }
  const c = contentStart(s);
  for (const [word, section] of SECTIONS) if (s.startsWith(word, c)) return { kind: "section", section, tensors: tensorsIn(s, c + word.length, end) };
  const r = rankLine(s, c, end);
  if (r !== undefined) return r;
  if (s.indexOf(" [missing ranks:") >= 0 || s.indexOf(" [ready ranks:") >= 0) {
    // After a `[... W horovod/common/operations.cc:588] ` header, the tensor starts past its `] `.
    let from = c;
    if (s.charCodeAt(c) === 91 /* [ */) {
      const h = s.indexOf("] ", c);
      if (h > 0 && s.indexOf(".cc", c) < h && s.indexOf(".cc", c) > 0) from = h + 2;
    }
    const tensors = tensorsIn(s, from, end);
    if (tensors.length > 0) return { kind: "tensors", tensors };
  }
  return undefined;
}

/** One stall report: its header's line, the tensors and the ranks the writer listed. */
export interface StallReport {
  /** Line of the header; undefined for tensor lines seen before any header (a window that starts mid-report). */
  headerLine?: number;
  seconds?: number;
  /** The ranks' lines (`Stalled ranks:` / `Missing ranks:`): rank → tensors it has not submitted; `partial`: the list was cut (`...`, or not closed). */
  ranks: Map<number, { tensors: string[]; shutdown: boolean; partial: boolean; openOnly?: boolean }>;
  /** The tensor lines (`Stalled ops:`). */
  tensors: StallTensor[];
  shutdown?: { seconds?: number; line: number };
  /** Every line of the report. */
  lines: number[];
}

/**
 * The stall reports of one log, its lines given in order. A report starts at a header (or at tensor
 * lines with none before them); rank lines count only after `Stalled ranks:`/`Missing ranks:`, and a
 * rank's list that the line cut goes on in the next line when that line is not a fact of its own.
 */
export class StallReader {
  /** The last MAX_REPORTS reports (Horovod repeats its report every check interval while the stall lasts). */
  readonly reports: StallReport[] = [];
  /** Reports seen, those dropped included. */
  count = 0;
  private cur: StallReport | undefined;
  private inRanks = false;
  /** The rank whose list is still open (its `]` not seen yet). */
  private openRank: number | undefined;

  line(text: string, lineNo: number): void {
    // Most lines of a log are nothing of the sort (NCCL's COLL lines say `nranks`, not these): every
    // fact but a rank line (only read inside a report) has one of these words.
    if (!this.inRanks && this.openRank === undefined && !mayBeStallLine(text)) return;
    const f = parseStallLine(text);
    if (f === undefined) {
      if (this.openRank !== undefined && this.cur !== undefined) {
        const end = trimEnd(text, 0, text.length);
        const { names, closed, more } = tensorNames(text, contentStart(text), end);
        if (names.length > 0) {
          const r = this.cur.ranks.get(this.openRank);
          if (r) {
            add(r.tensors, names, MAX_TENSORS);
            // Cut if any row of it was; still open until a row closes it.
            r.partial = (r.partial && !r.openOnly) || more || !closed;
            r.openOnly = !more && !closed;
          }
          add(this.cur.lines, [lineNo], MAX_LINES);
          if (closed) this.openRank = undefined;
          return;
        }
      }
      this.inRanks = false;
      this.openRank = undefined;
      return;
    }
    this.openRank = undefined;
    switch (f.kind) {
      case "header":
        this.start(lineNo, f.seconds);
        this.inRanks = false;
        return;
      case "header_rest":
        // Only right after its header.
        if (this.cur !== undefined && this.cur.headerLine === lineNo - 1 && this.cur.seconds === undefined) {
          this.cur.seconds = f.seconds;
          add(this.cur.lines, [lineNo], MAX_LINES);
        }
        return;
      case "section": {
        // The oldest form's one-line report (header and tensors) starts a report of its own.
        const r = f.header !== undefined ? this.start(lineNo, f.header.seconds) : (this.cur ?? this.start(undefined, undefined));
        if (f.header === undefined) add(r.lines, [lineNo], MAX_LINES);
        add(r.tensors, f.tensors, MAX_TENSORS);
        this.inRanks = f.section === "ranks";
        return;
      }
      case "tensors": {
        // A tensor line of the per-tensor form belongs to the report being printed, or starts one.
        const r = this.cur ?? this.start(undefined, undefined);
        add(r.lines, [lineNo], MAX_LINES);
        add(r.tensors, f.tensors, MAX_TENSORS);
        return;
      }
      case "rank": {
        if (!this.inRanks || this.cur === undefined) return;
        const prev = this.cur.ranks.get(f.rank);
        if (prev) {
          add(prev.tensors, f.tensors, MAX_TENSORS);
          prev.partial ||= f.more || !f.closed;
        } else if (this.cur.ranks.size < MAX_RANKS)
          this.cur.ranks.set(f.rank, {
            tensors: f.tensors.slice(0, MAX_TENSORS),
            shutdown: f.shutdown,
            partial: f.more || !f.closed,
            openOnly: !f.more && !f.closed,
          });
        add(this.cur.lines, [lineNo], MAX_LINES);
        if (!f.closed) this.openRank = f.rank;
        return;
      }
      case "shutdown": {
        const r = this.cur ?? this.start(undefined, undefined);
        r.shutdown = f.seconds !== undefined ? { seconds: f.seconds, line: lineNo } : { line: lineNo };
        add(r.lines, [lineNo], MAX_LINES);
        this.inRanks = false;
        return;
      }
    }
  }

  private start(lineNo: number | undefined, seconds: number | undefined): StallReport {
    const r: StallReport = { ranks: new Map(), tensors: [], lines: lineNo !== undefined ? [lineNo] : [] };
    this.count++;
    if (this.reports.length >= MAX_REPORTS) this.reports.shift();
    if (lineNo !== undefined) r.headerLine = lineNo;
    if (seconds !== undefined) r.seconds = seconds;
    this.reports.push(r);
    this.cur = r;
    return r;
  }
}
