/**
 * A process of the job killed by a signal, as UCX's handler reports it (HPC-X and NGC containers
 * load UCX into every MPI or NCCL process): `[09677202c889:5283 :0:5704] Caught signal 7 (Bus
 * error: nonexistent physical address)`, then `==== backtrace (tid:   5704) ====`, one row per frame
 * (` 1 0x000000000008170d ncclGroupEnd()  ???:0`) and a row of `=`. The header is `[host:pid:thread
 * index:tid]`, the pid padded with blanks. The reader keeps each crash (bounded) with the first frames
 * of its backtrace; the findings name the process, whose ranks the NCCL lines give (nccl-pasted 383).
 * A UCX backtrace whose `Caught signal` line the paste cut (nccl-pasted 645: `ncclGroupEnd()` in it,
 * then `Fatal Python error: Segmentation fault`) is a crash of a process the lines do not name; UCX
 * prints one only from its error handler; it counts once its first frame row is read, and the line
 * must open with it (not quote it). Open MPI's handler's report is read by open-mpi-signal.ts into
 * the same shape. Cut at fixed words with indexOf; no regular expression.
 */
import { isDigit, readInt, pos, skipSpaces } from "../parse/scan.js";
import { ncclError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { ncclErrorWords } from "../../verdict/words.js";
import { parsePrefix } from "../parse/prefix.js";

const MARK = "] Caught signal ";
const BACKTRACE = "==== backtrace";
const MAX_CRASHES = 64;
const MAX_FRAMES = 8;

export interface CaughtSignal {
  /** `host:pid` as NCCL's own lines name the process; empty where the lines do not say (a backtrace whose header was cut). */
  process: string;
  /** The handler that reported it. */
  handler: "UCX" | "Open MPI";
  /** The thread that caught it (its backtrace names it: `==== backtrace (tid:   5704) ====`). */
  tid: number;
  /** 0 where the lines do not say. */
  signal: number;
  /** The words in parentheses: `Bus error: nonexistent physical address`. */
  what: string;
  /** Functions of the backtrace that followed, innermost first (`killpg`, `ncclGroupEnd`, ...). */
  frames: string[];
  where: string;
}

/**
 * `[host:pid :0:tid] Caught signal N (words)`, after blanks or a launcher's tag (`[1,3]<stderr>:`,
 * srun's `3: `) → the crash; undefined otherwise.
 */
export function caughtSignal(s: string): Omit<CaughtSignal, "frames" | "where" | "handler"> | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  const i = s.lastIndexOf("[", k);
  if (i < 0) return undefined;
  const c1 = s.indexOf(":", i + 1);
  if (c1 <= i + 1 || c1 > k) return undefined;
  const host = s.slice(i + 1, c1);
  if (host.indexOf(" ") >= 0) return undefined;
  const pid = readInt(s, c1 + 1, k);
  if (pid === undefined) return undefined;
  let j = pos;
  while (j < k && s.charCodeAt(j) === 32) j++;
  // `:thread index:tid` up to the bracket.
  let tid = 0;
  for (let n = 0; n < 2; n++) {
    const v = s.charCodeAt(j) === 58 /* : */ ? readInt(s, j + 1, k + 1) : undefined;
    if (v === undefined) return undefined;
    tid = v;
    j = pos;
  }
  if (j !== k) return undefined;
  const signal = readInt(s, k + MARK.length, s.length);
  if (signal === undefined) return undefined;
  const open = s.charCodeAt(pos) === 32 && s.charCodeAt(pos + 1) === 40 ? pos + 2 : -1;
  // The words' own parentheses (`at address (nil)`) stay: the last one closes them.
  const close = open > 0 ? s.lastIndexOf(")") : -1;
  const what = open > 0 ? s.slice(open, close >= open ? close : s.length) : "";
  return { process: `${host}:${pid}`, tid, signal, what };
}

/**
 * A backtrace row → its function: ` 1 0x000000000008170d ncclGroupEnd()  ???:0`, or older UCX's
 * ` 2  /usr/lib/x86_64-linux-gnu/libnccl.so.2(ncclGroupEnd+0x1d) [0x7f...]`; undefined for any other row.
 */
function frameFunction(s: string): string | undefined {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === 32) i++;
  if (!isDigit(s.charCodeAt(i))) return undefined;
  while (i < s.length && isDigit(s.charCodeAt(i))) i++;
  if (s.charCodeAt(i) !== 32) return undefined;
  if (s.startsWith(" 0x", i)) {
    const sp = s.indexOf(" ", i + 3);
    if (sp < 0) return undefined;
    const end = s.indexOf("  ", sp + 1);
    const fn = s.slice(sp + 1, end < 0 ? s.length : end).trim();
    const paren = fn.indexOf("(");
    return paren > 0 ? fn.slice(0, paren) : fn || undefined;
  }
  const open = s.indexOf("(", i);
  const plus = open < 0 ? -1 : s.indexOf("+0x", open);
  const close = plus < 0 ? -1 : s.indexOf(")", plus);
  return open > 0 && plus > open + 1 && close > plus ? s.slice(open + 1, plus) : undefined;
}

/** `==== backtrace (tid:   5704) ====` opening the line (after blanks or a launcher's tag) → the thread; undefined otherwise. */
function backtraceTid(s: string): number | undefined {
  const bt = s.indexOf(BACKTRACE);
  if (bt < 0) return undefined;
  const before = parsePrefix(s, 0, bt, true).end;
  if (skipSpaces(s, before, bt) !== bt) return undefined;
  const tk = s.indexOf("tid:", bt);
  return tk < 0 || tk - bt > 20 ? undefined : readInt(s, skipSpaces(s, tk + 4, s.length), s.length);
}

export class CaughtSignalReader {
  readonly crashes: CaughtSignal[] = [];
  private open: CaughtSignal | undefined;
  private inTrace = false;
  /** A backtrace whose `Caught signal` line was cut: a crash once its first frame row is read. */
  private headless = false;

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (text.indexOf(BACKTRACE) >= 0) {
      const tid = backtraceTid(text);
      if (tid === undefined) return;
      // The crash whose thread the backtrace names (two processes' crashes may come before their backtraces).
      const known = this.crashes.findLast((c) => c.tid === tid);
      this.inTrace = true;
      this.headless = known === undefined;
      this.open = known ?? { process: "", handler: "UCX", tid, signal: 0, what: "", frames: [], where: `${this.source}:${lineNo}` };
      return;
    }
    if (this.open !== undefined && this.inTrace) {
      const fn = frameFunction(text);
      if (fn !== undefined) {
        if (this.headless) {
          this.headless = false;
          if (this.crashes.length >= MAX_CRASHES) return void (this.open = undefined);
          this.crashes.push(this.open);
        }
        if (this.open.frames.length < MAX_FRAMES) this.open.frames.push(fn);
        return;
      }
      if (text.trimStart().startsWith("====")) {
        this.open = undefined;
        this.inTrace = false;
        return;
      }
    }
    if (text.indexOf(MARK) < 0) return;
    const c = caughtSignal(text);
    if (c === undefined || this.crashes.length >= MAX_CRASHES) return;
    this.open = { ...c, handler: "UCX", frames: [], where: `${this.source}:${lineNo}` };
    this.inTrace = false;
    this.headless = false;
    this.crashes.push(this.open);
  }
}

/** One critical nccl_error per crashed process, its first crash told (the frames of NCCL's functions named). */
export function caughtSignalFindings(all: readonly CaughtSignal[]): Finding[] {
  // A crash whose header was cut, of the main thread (tid = pid) of a crash another line names: that crash.
  const pids = new Set(all.flatMap((c) => (c.process !== "" ? [Number(c.process.slice(c.process.lastIndexOf(":") + 1))] : [])));
  const crashes = all.filter((c) => c.process !== "" || !pids.has(c.tid));
  const byProcess = new Map<string, CaughtSignal[]>();
  for (const c of crashes) byProcess.set(c.process, [...(byProcess.get(c.process) ?? []), c]);
  return [...byProcess.values()].map((cs) => {
    const c = cs[0] as CaughtSignal;
    return ncclError({
      summary: ncclErrorWords.caughtSignal({
        process: c.process,
        handler: c.handler,
        signal: c.signal,
        what: c.what,
        inNccl: c.frames.filter((f) => f.startsWith("nccl")),
      }),
      ranks: [],
      processes: c.process !== "" ? [c.process] : [],
      comm_id: null,
      evidence: cs.slice(0, 5).map((x) => x.where),
    });
  });
}
