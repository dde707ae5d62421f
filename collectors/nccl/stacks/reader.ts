/**
 * The Python stack dumps among one log's lines: py-spy dumps and faulthandler dumps, alone in a
 * file or pasted among NCCL and PyTorch lines, behind launcher prefixes, interleaved across ranks.
 *
 * One line at a time, in order, never looking back more than LOOKBACK lines: linear in the input.
 * Lines are told apart by stream, the writer a prefix names (`[rank3]:`, srun's `3: `, torchrun's
 * `[default3]:`, none), so that ranks' dumps printed at once stay apart. A dump starts at a thread
 * header; the lines just before it on its stream say whose it is (`Process P:`, `=== Rank N: ...`,
 * `Fatal Python error: ...`). It goes on through its threads' frames, and blank lines before a
 * thread header, and ends at the first other line of its stream, at `</pre>`, when its stream prints nothing for
 * STACK_LIMITS.staleLines lines, or at the end. Everything held is bounded (types.ts); a line
 * that is no stack line is dropped, never an error.
 *
 * While no dump is open, a line is looked at only when it holds `hread ` (`Thread `, `Current
 * thread `) or `Stack (`: two indexOf calls on the lines of a NCCL log.
 */
import { faultLine, faultThreadHeader, fatalError, timeoutLine } from "./faulthandler.js";
import { rankInName } from "./file-name.js";
import { pyspyFrame, pyspyProcess, pyspyThreadHeader } from "./pyspy.js";
import {
  FrameBudget,
  STACK_LIMITS,
  noPrefix,
  type LinePrefix,
  type PrefixDecoder,
  type StackDump,
  type StackLimits,
  type StackFrame,
  type StackThread,
  type StackTool,
} from "./types.js";
import { PRE_CLOSE, PRE_OPEN, rankSection } from "./worker-server.js";

/** Lines before a thread header looked at for whose dump it is. */
const LOOKBACK = 8;

interface Open {
  dump: StackDump;
  /** The thread frames go to (none: over the thread cap). */
  thread?: StackThread;
  ids: Set<string>;
  /** Number of the last line of its stream. */
  last: number;
  /** A py-spy frame line cut in two by a paste's wrapping, waiting for its rest. */
  partial?: string;
  /** A blank line came last: only a thread header goes on (both tools print blank lines between threads, never inside one). */
  blank: boolean;
}

/** A line's text after its prefix. */
interface Body {
  s: string;
  i: number;
  end: number;
  /** Blanks before the text, the prefix's separator included. */
  indent: number;
  prefix: LinePrefix;
  key: string;
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9;
}

/** The stream a prefix names: one writer's lines. */
function keyOf(p: LinePrefix): string {
  if (p.rank === undefined && p.localRank === undefined && p.pid === undefined && p.host === undefined) return "";
  return `${p.rank ?? ""}/${p.localRank ?? ""}/${p.pid ?? ""}/${p.host ?? ""}`;
}

/** ESC [ ... letter: terminal colours (py-spy colours a terminal's output). */
function withoutAnsi(s: string): string {
  let out = "";
  let i = 0;
  while (i < s.length) {
    const e = s.indexOf("\u001b[", i);
    if (e < 0) break;
    out += s.slice(i, e);
    let j = e + 2;
    while (j < s.length && j - e < 16 && !((s.charCodeAt(j) >= 64 && s.charCodeAt(j) <= 126) || s.charCodeAt(j) === 10)) j++;
    i = j + 1;
  }
  return out + s.slice(i);
}

export class StackReader {
  readonly dumps: StackDump[] = [];
  /** Thread headers not read: over STACK_LIMITS.dumpsPerLog dumps. */
  headersLeftOut = 0;
  private readonly open = new Map<string, Open>();
  private readonly recent: string[] = [];
  private head = 0;
  private ended = false;

  /** `source`: the log's name in evidence; `decode`: how its lines' prefixes are read. */
  constructor(
    private readonly source: string,
    private readonly decode: PrefixDecoder = noPrefix,
    private readonly budget = new FrameBudget(),
    private readonly limits: Readonly<StackLimits> = STACK_LIMITS,
  ) {}

  line(text: string, lineNo: number): void {
    if ((this.open.size > 0 || text.indexOf("hread ") >= 0 || text.indexOf("Stack (") >= 0) && text.length <= this.limits.maxLine) {
      this.read(text.indexOf("\u001b") >= 0 ? withoutAnsi(text) : text, lineNo);
    }
    this.recent[this.head] = text;
    this.head = (this.head + 1) % LOOKBACK;
  }

  /** The dumps read, once the log has ended; a rank named by the file name goes to those that have none. */
  end(): StackDump[] {
    if (this.ended) return this.dumps;
    this.ended = true;
    this.open.clear();
    const kept = this.dumps.filter((d) => d.threads.some((t) => t.frames.length > 0));
    this.dumps.length = 0;
    this.dumps.push(...kept);
    const rank = rankInName(this.source);
    const rankless = kept.filter((d) => d.rank === undefined && d.localRank === undefined);
    // One process's dumps only: a file of several processes' dumps names none of them.
    if (rank !== undefined && new Set(rankless.flatMap((d) => (d.pid !== undefined ? [d.pid] : []))).size <= 1) {
      for (const d of rankless) {
        d.rank = rank;
        d.rankFrom = "file_name";
      }
    }
    return this.dumps;
  }

  private body(text: string): Body {
    const prefix = this.decode(text);
    let i = Math.min(prefix.end, text.length);
    let k = i;
    while (k > 0 && isBlank(text.charCodeAt(k - 1))) k--;
    const indent = i - k;
    let end = text.length;
    while (end > i && (isBlank(text.charCodeAt(end - 1)) || text.charCodeAt(end - 1) === 13)) end--;
    if (text.startsWith(PRE_OPEN, i)) i += PRE_OPEN.length;
    return { s: text, i, end, indent, prefix, key: keyOf(prefix) };
  }

  private read(text: string, lineNo: number): void {
    if (this.open.size > 0 && (lineNo & 63) === 0) this.expire(lineNo);
    const b = this.body(text);
    const { s, i, end } = b;
    const fh = faultThreadHeader(s, i, end);
    if (fh !== undefined) {
      this.thread("faulthandler", b, lineNo, { id: fh.id, ...(fh.name !== undefined ? { name: fh.name } : {}), ...(fh.current ? { current: true } : {}) });
      return;
    }
    const ph = pyspyThreadHeader(s, i, end);
    if (ph !== undefined) {
      this.thread("py-spy", b, lineNo, {
        id: ph.id,
        ...(ph.name !== undefined ? { name: ph.name } : {}),
        ...(ph.status !== undefined ? { status: ph.status } : {}),
      });
      return;
    }
    const cur = this.open.get(b.key);
    if (cur === undefined) return;
    cur.last = lineNo;
    if (i === end && cur.partial === undefined) {
      cur.blank = true;
      return;
    }
    if (cur.blank || s.startsWith(PRE_CLOSE, i)) {
      this.open.delete(b.key);
      return;
    }
    if (cur.dump.tool === "faulthandler" ? this.faultFrame(cur, b) : this.pyspyLine(cur, b)) return;
    this.open.delete(b.key);
  }

  /** A line inside a faulthandler dump: whether it belongs to it. */
  private faultFrame(cur: Open, b: Body): boolean {
    const f = faultLine(b.s, b.i, b.end, this.limits.maxName);
    if (f === undefined) return false;
    if (typeof f === "object") this.frame(cur, f.frame);
    else if (f === "truncated" && cur.thread !== undefined) cur.thread.truncated = true;
    return true;
  }

  /** A line inside a py-spy dump: a frame, a `--locals` line, or the rest of a wrapped frame. */
  private pyspyLine(cur: Open, b: Body): boolean {
    const { s, i, end, indent } = b;
    const partial = cur.partial;
    if (partial !== undefined) {
      cur.partial = undefined;
      if (indent === 0) {
        const joined = partial + s.slice(i, end);
        const f = pyspyFrame(joined, 0, joined.length, this.limits.maxName);
        if (f === undefined) return false;
        this.frame(cur, f);
        return true;
      }
    }
    if (indent >= 7) return true; // --locals: `Arguments:`, `Locals:`, `name: value`
    // Four blanks (a tab and a blank before 2019); one is a prefix's separator (`[date] text (x)`).
    if (indent < 2) return false;
    const f = pyspyFrame(s, i, end, this.limits.maxName);
    if (f !== undefined) {
      this.frame(cur, f);
      return true;
    }
    // A frame cut by a paste's wrapping: its rest comes on the next line, unindented.
    if (end - i > 0 && end - i < 16 * 1024 && s.charCodeAt(end - 1) !== 41) {
      cur.partial = s.slice(i, end);
      return true;
    }
    return false;
  }

  private frame(cur: Open, f: StackFrame): void {
    const t = cur.thread;
    if (t === undefined) return;
    if (t.frames.length >= this.limits.framesPerThread || this.budget.left <= 0) {
      t.truncated = true;
      return;
    }
    this.budget.left--;
    t.frames.push(f);
  }

  /** A thread header: the next thread of the dump open on its stream, or the first of a new one. */
  private thread(tool: StackTool, b: Body, lineNo: number, t: Omit<StackThread, "frames" | "truncated">): void {
    let cur = this.open.get(b.key);
    // A thread seen already, or the other tool: the next dump.
    if (cur !== undefined && (cur.dump.tool !== tool || cur.ids.has(t.id))) {
      this.open.delete(b.key);
      cur = undefined;
    }
    if (cur === undefined) {
      if (this.dumps.length >= this.limits.dumpsPerLog) {
        this.headersLeftOut++;
        return;
      }
      if (this.open.size >= this.limits.openStreams) this.closeOldest();
      cur = { dump: this.newDump(tool, b, lineNo), ids: new Set(), last: lineNo, blank: false };
      this.dumps.push(cur.dump);
      this.open.set(b.key, cur);
    }
    cur.last = lineNo;
    cur.partial = undefined;
    cur.blank = false;
    cur.ids.add(t.id);
    if (cur.dump.threads.length >= this.limits.threadsPerDump) {
      cur.dump.threadsLeftOut++;
      delete cur.thread;
      return;
    }
    const thread: StackThread = { ...t, frames: [], truncated: false };
    cur.dump.threads.push(thread);
    cur.thread = thread;
  }

  private newDump(tool: StackTool, b: Body, lineNo: number): StackDump {
    const p = b.prefix;
    const d: StackDump = { tool, source: this.source, where: `${this.source}:${lineNo}`, threads: [], threadsLeftOut: 0 };
    if (p.rank !== undefined) {
      d.rank = p.rank;
      d.rankFrom = "prefix";
    }
    if (p.localRank !== undefined) d.localRank = p.localRank;
    if (p.pid !== undefined) d.pid = p.pid;
    if (p.host !== undefined) d.host = p.host;
    this.preamble(d, b.key);
    return d;
  }

  /** The lines just before a dump's first thread, on its stream: whose dump it is, and why it was written. */
  private preamble(d: StackDump, key: string): void {
    // Past a line that says nothing of the dump (a progress bar, a log line), only a fatal error is looked for: why it was written.
    let reasonOnly = false;
    for (let n = 1; n <= LOOKBACK; n++) {
      const raw = this.recent[(this.head - n + LOOKBACK) % LOOKBACK];
      if (raw === undefined || raw.length > this.limits.maxLine) return;
      const t = raw.indexOf("\u001b") >= 0 ? withoutAnsi(raw) : raw;
      const p = this.decode(t);
      if (keyOf(p) !== key) continue;
      const i = Math.min(p.end, t.length);
      let end = t.length;
      while (end > i && (isBlank(t.charCodeAt(end - 1)) || t.charCodeAt(end - 1) === 13)) end--;
      if (i === end) continue;
      if (reasonOnly || t.startsWith("Python runtime state: ", i)) {
        const fatal = fatalError(t, i, end);
        if (fatal !== undefined) d.reason ??= fatal;
        continue;
      }
      const section = rankSection(t, i, end);
      if (section !== undefined) {
        d.rank = section.rank;
        d.rankFrom = "worker_server";
        if (section.host !== undefined) d.host = section.host;
        return;
      }
      const proc = pyspyProcess(t, i, end);
      if (proc !== undefined) {
        d.pid ??= proc.pid;
        d.command ??= proc.command;
        continue;
      }
      if (t.startsWith("Python v", i) || t.startsWith("Parent Process ", i) || t.startsWith("{%", i) || t.startsWith("<p>", i)) continue;
      const why = fatalError(t, i, end) ?? timeoutLine(t, i, end);
      if (why === undefined) reasonOnly = true;
      else d.reason ??= why;
    }
  }

  private expire(lineNo: number): void {
    for (const [key, o] of this.open) if (lineNo - o.last > this.limits.staleLines) this.open.delete(key);
  }

  private closeOldest(): void {
    let oldest: string | undefined;
    let at = Infinity;
    for (const [key, o] of this.open) {
      if (o.last < at) {
        at = o.last;
        oldest = key;
      }
    }
    if (oldest !== undefined) this.open.delete(oldest);
  }
}
