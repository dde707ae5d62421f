/**
 * The text PyTorch's Flight Recorder analyzer prints (`torchfrtrace`, `python -m
 * torch.distributed.flight_recorder.fr_trace`, before 2.7 tools/flight_recorder/fr_trace.py), as
 * people paste it into logs and issues. Its logger prints the bare message (`%(message)s`). For each
 * collective it cannot match across ranks it prints an opening line, then one field per line
 * (components/types.py EntryState.log, older builder.py):
 *
 *     Not all ranks joining collective, sequence number: 31117     (2.7+; 2.6: `...collective: sequence number: N`;
 *                                                                   2.5: `...collective 5 at entry 4`)
 *     Collective sequence number: 12 has errors                    (2.5: `Collective 3 at entry 2 error(s)`)
 *     Input/output mismatch in the collective sequence number: 7   (all_to_all; 2.5: `...collective 7 at entry 6`)
 *     internal record id: 31116
 *     group info: 0:default_pg                                      (`<pg name>:<desc>`, or the name alone)
 *     collective: nccl:all_reduce
 *     missing ranks: {3, 4, 5, 6, 7}
 *     total input numel: 8 / total output numel: 6
 *     input sizes: [[1571911]] / output sizes: [[1571911]]
 *     world size: 8
 *     expected ranks: {0, 1, ..., 7}                                (2.5: their number)
 *     collective state: scheduled
 *     error msg: Culprit rank 1; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[3, 4]]' does not match found input sizes: '[[3, 5]]'
 *     collective stack trace:
 *      all_reduce at /.../torch/distributed/distributed_c10d.py:2707
 *     wrapper at /.../c10d_logger.py:81
 *
 * The oldest (2.4) prints one line: `Not all ranks joining collective for group 0:default_pg collective
 * nccl:all_reduce Missing ranks are {1}`. Besides: `We cannot decide what's wrong with this collective
 * entry because we missed FR dumps from ranks ({3, 4}) ...` and `Missing dump files from ranks {3}`.
 * One line in, one fact out (parseFrTextLine); FrTextReader puts a collective's lines together.
 * indexOf and startsWith only: nothing that backtracks on a long line.
 */
import { parseRanks } from "./ranks.js";
import type { FrFrame } from "./types.js";

/** torchfrtrace's classes of a difference (types.py MatchState), as ringwatch names them. */
export type FrTextMismatch = "op" | "size" | "dtype" | "state";

const ERROR_TYPES: readonly (readonly [string, FrTextMismatch])[] = [
  ["COLLECTIVE_TYPE_MISMATCH", "op"],
  ["SIZE_OR_SYNTAX_MISMATCH", "size"],
  ["COLLECTIVE_DTYPE_MISMATCH", "dtype"],
  ["COLLECTIVE_STATE_MISMATCH", "state"],
];

/** One rank the analyzer blames (`Culprit rank 1; Error type: ..., <detail>`). */
export interface FrTextCulprit {
  rank: number;
  mismatch?: FrTextMismatch;
  /** `Expected input sizes: 'A' does not match found input sizes: 'B'`: A and B. */
  expected?: string;
  found?: string;
  /** The detail after the error type, as printed. */
  detail: string;
}

export type FrTextFact =
  | { kind: "open"; what: "not_joined" | "errors" | "numel"; seq?: number; record?: number; group?: string; op?: string; missing?: number[] }
  | { kind: "record"; record: number }
  | { kind: "group"; group: string }
  | { kind: "op"; op: string }
  | { kind: "missing"; ranks: number[] }
  | { kind: "numel"; side: "input" | "output"; value: number }
  | { kind: "sizes"; side: "input" | "output"; value: string }
  | { kind: "world"; size: number }
  | { kind: "expected"; ranks?: number[]; count?: number }
  | { kind: "state"; state: string }
  | { kind: "errors"; text: string; culprits: FrTextCulprit[] }
  | { kind: "stack" }
  | { kind: "frame"; frame: FrFrame }
  /** Ranks without a dump (`we missed FR dumps from ranks (...)`, `Missing dump files from ranks {...}`). */
  | { kind: "no_dumps"; ranks: number[] };

/** Text cut off at this length (a field such as `input sizes` of a coalesced collective can be long). */
const MAX_TEXT = 256;

/** `{3, 4}` / `[3, 4]` / `set()` at i → the ranks; undefined when it is neither. */
function rankSet(s: string, i: number): number[] | undefined {
  const t = s.slice(i).trim();
  if (t === "set()") return [];
  const open = t.charCodeAt(0);
  if (open !== 123 /* { */ && open !== 91 /* [ */) return undefined;
  const close = t.indexOf(open === 123 ? "}" : "]");
  return close < 0 ? undefined : parseRanks(`[${t.slice(1, close)}]`);
}

/** Non-negative integer at i (digits only), and where it ends. */
function natAt(s: string, i: number): [number, number] | undefined {
  let j = i;
  let v = 0;
  while (j < s.length && j - i < 15) {
    const c = s.charCodeAt(j);
    if (c < 48 || c > 57) break;
    v = v * 10 + (c - 48);
    j++;
  }
  return j > i ? [v, j] : undefined;
}

/** `5 at entry 4` at i. */
function seqAtEntry(s: string, i: number): { seq: number; record?: number } | undefined {
  const a = natAt(s, i);
  if (a === undefined) return undefined;
  if (!s.startsWith(" at entry ", a[1])) return { seq: a[0] };
  const b = natAt(s, a[1] + 10);
  return b === undefined ? { seq: a[0] } : { seq: a[0], record: b[0] };
}

function opener(s: string): FrTextFact | undefined {
  if (s.startsWith("Not all ranks joining collective")) {
    const f: FrTextFact = { kind: "open", what: "not_joined" };
    const k = s.indexOf("sequence number:");
    if (k >= 0) {
      const a = natAt(s, k + 16 + (s.charCodeAt(k + 16) === 32 ? 1 : 0));
      if (a) f.seq = a[0];
    } else if (s.startsWith(" for group ", 32)) {
      // 2.4: `... for group <pg>:<desc> collective <op> Missing ranks are {...}`
      const c = s.indexOf(" collective ", 43);
      if (c > 43) {
        f.group = s.slice(43, c);
        const opEnd = s.indexOf(" ", c + 12);
        f.op = s.slice(c + 12, opEnd < 0 ? s.length : opEnd);
      }
      const m = s.indexOf("Missing ranks are ");
      const ranks = m >= 0 ? rankSet(s, m + 18) : undefined;
      if (ranks !== undefined) f.missing = ranks;
    } else if (s.charCodeAt(32) === 32) {
      const e = seqAtEntry(s, 33);
      if (e) Object.assign(f, e);
    }
    return f;
  }
  if (s.startsWith("Collective sequence number: ")) {
    const a = natAt(s, 28);
    return a ? { kind: "open", what: "errors", seq: a[0] } : undefined;
  }
  if (s.startsWith("Collective ") && s.indexOf(" at entry ") > 0 && s.indexOf(" error") > 0) {
    const e = seqAtEntry(s, 11);
    return e ? { kind: "open", what: "errors", ...e } : undefined;
  }
  if (s.startsWith("Input/output mismatch in the collective ")) {
    const k = s.indexOf("sequence number: ", 40);
    if (k >= 0) {
      const a = natAt(s, k + 17);
      return a ? { kind: "open", what: "numel", seq: a[0] } : { kind: "open", what: "numel" };
    }
    const e = seqAtEntry(s, 40);
    return { kind: "open", what: "numel", ...(e ?? {}) };
  }
  return undefined;
}

/** `'A'` starting at i: A, and the index past the closing quote (the last `'` before `stop`). */
function quoted(s: string, i: number, stop: number): [string, number] | undefined {
  if (s.charCodeAt(i) !== 39) return undefined;
  const close = s.lastIndexOf("'", stop - 1);
  return close > i ? [s.slice(i + 1, close), close + 1] : undefined;
}

/** The culprits of an `error msg:` line: `Culprit rank R; <MatchInfo>` joined by `, `. */
export function culprits(text: string): FrTextCulprit[] {
  const out: FrTextCulprit[] = [];
  let k = text.indexOf("Culprit rank ");
  while (k >= 0 && out.length < 64) {
    const next = text.indexOf(", Culprit rank ", k + 13);
    const stop = next < 0 ? text.length : next;
    const a = natAt(text, k + 13);
    if (a !== undefined) {
      let d = a[1];
      if (text.startsWith("; ", d)) d += 2;
      const c: FrTextCulprit = { rank: a[0], detail: text.slice(d, Math.min(stop, d + MAX_TEXT)) };
      for (const [name, cls] of ERROR_TYPES) {
        const t = text.indexOf(name, d);
        if (t >= 0 && t < stop) {
          c.mismatch = cls;
          break;
        }
      }
      // `Expected <what>: 'A' does not match found <what>: 'B'`
      const e = text.indexOf("Expected ", d);
      const dn = e >= 0 && e < stop ? text.indexOf(" does not match found ", e) : -1;
      if (dn > 0 && dn < stop) {
        const q1 = text.indexOf(": ", e);
        const x = q1 > 0 && q1 < dn ? quoted(text, q1 + 2, dn) : undefined;
        const q2 = text.indexOf(": ", dn + 22);
        const y = q2 > 0 && q2 < stop ? quoted(text, q2 + 2, stop) : undefined;
        if (x) c.expected = x[0].slice(0, MAX_TEXT);
        if (y) c.found = y[0].slice(0, MAX_TEXT);
      }
      out.push(c);
    }
    k = next < 0 ? -1 : next + 2;
  }
  return out;
}

/** `all_reduce at /path/distributed_c10d.py:2707` → the frame. */
function frame(s: string): FrFrame | undefined {
  const at = s.indexOf(" at ");
  if (at <= 0 || s.indexOf(" ") < at) return undefined;
  const colon = s.lastIndexOf(":");
  if (colon <= at + 4) return undefined;
  const n = natAt(s, colon + 1);
  if (n === undefined || n[1] !== s.length) return undefined;
  return { name: s.slice(0, at), file: s.slice(at + 4, colon), line: n[0] };
}

const FIELDS: readonly (readonly [string, (v: string) => FrTextFact | undefined])[] = [
  ["internal record id: ", (v) => num(v, (n) => ({ kind: "record", record: n }))],
  ["group info: ", (v) => ({ kind: "group", group: v.slice(0, MAX_TEXT) })],
  ["collective: ", (v) => ({ kind: "op", op: v.slice(0, MAX_TEXT) })],
  ["missing ranks: ", (v) => set(v, (ranks) => ({ kind: "missing", ranks }))],
  ["total input numel: ", (v) => num(v, (n) => ({ kind: "numel", side: "input", value: n }))],
  ["total output numel: ", (v) => num(v, (n) => ({ kind: "numel", side: "output", value: n }))],
  ["input sizes: ", (v) => ({ kind: "sizes", side: "input", value: v.slice(0, MAX_TEXT) })],
  ["output sizes: ", (v) => ({ kind: "sizes", side: "output", value: v.slice(0, MAX_TEXT) })],
  ["world size: ", (v) => num(v, (n) => ({ kind: "world", size: n }))],
  ["expected ranks: ", (v) => set(v, (ranks) => ({ kind: "expected", ranks })) ?? num(v, (n) => ({ kind: "expected", count: n }))],
  ["collective state: ", (v) => ({ kind: "state", state: v.slice(0, MAX_TEXT) })],
  ["error msg: ", (v) => ({ kind: "errors", text: v.slice(0, MAX_TEXT * 4), culprits: culprits(v) })],
  ["error message: ", (v) => ({ kind: "errors", text: v.slice(0, MAX_TEXT * 4), culprits: culprits(v) })],
];

function num(v: string, f: (n: number) => FrTextFact): FrTextFact | undefined {
  const a = natAt(v, 0);
  return a !== undefined && a[1] === v.length ? f(a[0]) : undefined;
}

function set(v: string, f: (ranks: number[]) => FrTextFact): FrTextFact | undefined {
  const r = rankSet(v, 0);
  return r !== undefined ? f(r) : undefined;
}

/** One line of torchfrtrace's output → its fact, or undefined for any other line. */
export function parseFrTextLine(line: string): FrTextFact | undefined {
  const s = line.trim();
  if (s.length === 0) return undefined;
  const o = opener(s);
  if (o !== undefined) return o;
  for (const [label, read] of FIELDS) if (s.startsWith(label)) return read(s.slice(label.length).trim());
  if (s.startsWith("collective stack trace:")) return { kind: "stack" };
  let k = s.indexOf("we missed FR dumps from ranks (");
  if (k >= 0) {
    const ranks = rankSet(s, k + 31);
    return ranks !== undefined ? { kind: "no_dumps", ranks } : undefined;
  }
  k = s.indexOf("Missing dump files from ranks ");
  if (k >= 0) {
    const ranks = rankSet(s, k + 30);
    return ranks !== undefined ? { kind: "no_dumps", ranks } : undefined;
  }
  const f = frame(s);
  return f ? { kind: "frame", frame: f } : undefined;
}

/** One collective the analyzer reports, its lines put together. */
export interface FrTextBlock {
  what: "not_joined" | "errors" | "numel";
  seq?: number;
  record?: number;
  /** `0:default_pg`, as printed. */
  group?: string;
  /** `nccl:all_reduce`, as printed. */
  op?: string;
  missing?: number[];
  expected?: number[];
  expectedCount?: number;
  worldSize?: number;
  state?: string;
  inputSizes?: string;
  outputSizes?: string;
  inputNumel?: number;
  outputNumel?: number;
  errors?: { text: string; culprits: FrTextCulprit[] };
  frames: FrFrame[];
  /** The block's lines, the opening one first. */
  lines: number[];
}

/** Blocks kept per log (torchfrtrace stops a group after 10 mismatches); frames and lines per block. */
const MAX_BLOCKS = 64;
const MAX_FRAMES = 32;
const MAX_LINES = 64;

/**
 * The blocks of one log, its lines given in order. An opening line starts a block; its fields and
 * stack frames follow it; any other line ends it. Lines without a dump stand alone.
 */
export class FrTextReader {
  readonly blocks: FrTextBlock[] = [];
  readonly noDumps: { ranks: number[]; line: number }[] = [];
  private cur: FrTextBlock | undefined;
  private inStack = false;

  line(text: string, lineNo: number): void {
    if (this.cur === undefined) {
      // Outside a block only an opening line (`Not all ...`, `Collective ...`, `Input/output ...`) or a line about dumps counts.
      let i = 0;
      while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
      const c = text.charCodeAt(i);
      if (c !== 78 && c !== 67 && c !== 73 && text.indexOf("dump") < 0) return;
    }
    const f = parseFrTextLine(text);
    if (f === undefined) {
      this.cur = undefined;
      return;
    }
    if (f.kind === "open") {
      this.inStack = false;
      if (this.blocks.length >= MAX_BLOCKS) {
        this.cur = undefined;
        return;
      }
      const b: FrTextBlock = { what: f.what, frames: [], lines: [lineNo] };
      if (f.seq !== undefined) b.seq = f.seq;
      if (f.record !== undefined) b.record = f.record;
      if (f.group !== undefined) b.group = f.group;
      if (f.op !== undefined) b.op = f.op;
      if (f.missing !== undefined) b.missing = f.missing;
      this.cur = b;
      this.blocks.push(this.cur);
      return;
    }
    if (f.kind === "no_dumps") {
      if (this.noDumps.length < MAX_BLOCKS) this.noDumps.push({ ranks: f.ranks, line: lineNo });
      return;
    }
    const b = this.cur;
    if (b === undefined) return;
    if (f.kind === "frame") {
      if (!this.inStack) {
        this.cur = undefined;
        return;
      }
      if (b.frames.length < MAX_FRAMES) b.frames.push(f.frame);
      return;
    }
    if (b.lines.length < MAX_LINES) b.lines.push(lineNo);
    switch (f.kind) {
      case "record":
        b.record = f.record;
        return;
      case "group":
        b.group = f.group;
        return;
      case "op":
        b.op = f.op;
        return;
      case "missing":
        b.missing = f.ranks;
        return;
      case "numel":
        if (f.side === "input") b.inputNumel = f.value;
        else b.outputNumel = f.value;
        return;
      case "sizes":
        if (f.side === "input") b.inputSizes = f.value;
        else b.outputSizes = f.value;
        return;
      case "world":
        b.worldSize = f.size;
        return;
      case "expected":
        if (f.ranks !== undefined) b.expected = f.ranks;
        if (f.count !== undefined) b.expectedCount = f.count;
        return;
      case "state":
        b.state = f.state;
        return;
      case "errors":
        b.errors = { text: f.text, culprits: f.culprits };
        return;
      case "stack":
        this.inStack = true;
        return;
    }
  }
}
