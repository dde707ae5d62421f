/**
 * Streaming parser for `nvidia-smi dmon` output, fed one line at a time.
 *
 * Columns are found by the names in the `#` header (`# gpu pwr gtemp ...`, or `#Date Time gpu ...`
 * with `-o DT`), never by position on the screen: rows are split on whitespace, so misaligned,
 * narrow (old drivers) and wide layouts all parse. The header may repeat mid-stream and may change
 * (a restarted child on another driver). `-` is "not available": the column is left out of the
 * row's values, never read as 0. Values keep dmon's units (W, C, %, MHz, MB, MB/s); conversion to
 * base units happens in metrics.ts.
 *
 * Nothing here throws on input: malformed rows are skipped and counted, nvidia-smi failure
 * messages come back as error events. No regular expressions: indexOf/charCode scans only.
 */
import { classifyFailure, type NvsmiFailure } from "./failures.js";

/** Column names dmon prints today (plus `temp`, the single temperature of the oldest drivers). */
export type DmonColumn =
  | "pwr"
  | "gtemp"
  | "mtemp"
  | "temp"
  | "sm"
  | "mem"
  | "enc"
  | "dec"
  | "jpg"
  | "ofa"
  | "mclk"
  | "pclk"
  | "pviol"
  | "tviol"
  | "fb"
  | "bar1"
  | "ccpm"
  | "sbecc"
  | "dbecc"
  | "pci"
  | "rxpci"
  | "txpci";

/** Values of one row by column name, in dmon's units. Unknown future columns are kept too. */
export type DmonValues = Partial<Record<DmonColumn, number>> & Readonly<Record<string, number | undefined>>;

export interface DmonRow {
  /** dmon's GPU index (the `gpu`/`Idx` column), as printed. */
  gpu: string;
  values: DmonValues;
}

export type SkipReason = "no_header" | "field_count" | "bad_index" | "unrecognised";

export type DmonEvent =
  | { type: "header"; columns: readonly string[] }
  | { type: "row"; row: DmonRow }
  | { type: "error"; error: NvsmiFailure }
  | { type: "skip"; reason: SkipReason; line: string };

export interface DmonStats {
  rows: number;
  skipped: number;
  errors: number;
  headers: number;
}

/** Columns that are not measurements: the index itself and `-o D/T` time stamps. */
const NOT_VALUES = new Set(["gpu", "date", "time"]);

/** Whitespace-separated tokens; `^C` (a terminal's echo of Ctrl-C) is treated as whitespace. */
export function tokenize(line: string): string[] {
  const out: string[] = [];
  let start = -1;
  const n = line.length;
  for (let i = 0; i < n; i++) {
    const c = line.charCodeAt(i);
    // "^C": caret followed by C
    const caretC = c === 94 && i + 1 < n && line.charCodeAt(i + 1) === 67;
    const space = c === 32 || c === 9 || c === 13 || c === 10 || c === 11 || c === 12 || caretC;
    if (space) {
      if (start >= 0) {
        out.push(line.slice(start, i));
        start = -1;
      }
      if (caretC) i++;
    } else if (start < 0) {
      start = i;
    }
  }
  if (start >= 0) out.push(line.slice(start));
  return out;
}

function isDigits(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** Plain decimal (`12`, `-3`, `0.5`); anything else, or one too long for a double, is not a number here. */
export function parseDecimal(s: string): number | undefined {
  let i = s.charCodeAt(0) === 45 ? 1 : 0;
  let digits = 0;
  let dot = false;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c === 46 && !dot) dot = true;
    else return undefined;
  }
  if (digits === 0) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

export class DmonParser {
  /** Lower-cased column names of the current header, or undefined before the first header. */
  private columns: string[] | undefined;
  private gpuAt = -1;
  readonly stats: DmonStats = { rows: 0, skipped: 0, errors: 0, headers: 0 };

  /** Current column names (after the first header). */
  get header(): readonly string[] | undefined {
    return this.columns;
  }

  /** Feed one line (without its newline). Returns what it was, or undefined for blank/units lines. */
  feed(line: string): DmonEvent | undefined {
    let i = 0;
    const n = line.length;
    while (i < n && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (i >= n) return undefined;
    if (line.charCodeAt(i) === 35 /* # */) return this.headerLine(line.slice(i + 1));
    const c = line.charCodeAt(i);
    const digitFirst = c >= 48 && c <= 57;
    if (!digitFirst) {
      const failure = classifyFailure(line);
      if (failure) {
        this.stats.errors++;
        return { type: "error", error: failure };
      }
      // A "^C" before the row is a terminal artefact, not junk.
      if (!(c === 94 && line.charCodeAt(i + 1) === 67)) return this.skip("unrecognised", line);
    }
    return this.dataLine(line);
  }

  private headerLine(text: string): DmonEvent | undefined {
    const names = tokenize(text).map((t) => t.toLowerCase());
    const gpuAt = names.indexOf("gpu");
    // The second line (`# Idx W C ...`) carries units: nothing to keep.
    if (gpuAt < 0) return undefined;
    this.columns = names;
    this.gpuAt = gpuAt;
    this.stats.headers++;
    return { type: "header", columns: names };
  }

  private dataLine(line: string): DmonEvent {
    const cols = this.columns;
    if (!cols) return this.skip("no_header", line);
    const tokens = tokenize(line);
    if (tokens.length !== cols.length) return this.skip("field_count", line);
    const gpu = tokens[this.gpuAt] ?? "";
    if (!isDigits(gpu)) return this.skip("bad_index", line);
    const values: Record<string, number> = {};
    for (let k = 0; k < cols.length; k++) {
      const name = cols[k] as string;
      if (NOT_VALUES.has(name)) continue;
      const tok = tokens[k] as string;
      if (tok === "-") continue;
      const v = parseDecimal(tok);
      if (v !== undefined) values[name] = v;
    }
    this.stats.rows++;
    return { type: "row", row: { gpu, values } };
  }

  private skip(reason: SkipReason, line: string): DmonEvent {
    this.stats.skipped++;
    return { type: "skip", reason, line };
  }
}

export interface DmonParseResult {
  rows: DmonRow[];
  errors: NvsmiFailure[];
  skipped: { reason: SkipReason; line: string }[];
  /** Column names of the last header seen. */
  columns: readonly string[] | undefined;
  stats: DmonStats;
}

/** Parse a whole dmon output (for `--once` and tests). */
export function parseDmonText(text: string): DmonParseResult {
  const parser = new DmonParser();
  const result: DmonParseResult = { rows: [], errors: [], skipped: [], columns: undefined, stats: parser.stats };
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    let line = nl < 0 ? text.slice(start) : text.slice(start, nl);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const ev = parser.feed(line);
    if (ev?.type === "row") result.rows.push(ev.row);
    else if (ev?.type === "error") result.errors.push(ev.error);
    else if (ev?.type === "skip") result.skipped.push({ reason: ev.reason, line: ev.line });
    if (nl < 0) break;
    start = nl + 1;
  }
  result.columns = parser.header;
  return result;
}

/** The last row printed for each GPU, in first-seen order. */
export function lastRowPerGpu(rows: readonly DmonRow[]): Map<string, DmonRow> {
  const out = new Map<string, DmonRow>();
  for (const r of rows) out.set(r.gpu, r);
  return out;
}
