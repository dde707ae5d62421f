/**
 * Horovod's coordinator refuses a tensor the ranks submitted differently (horovod/common/controller.cc,
 * before 0.17 operations.cc ConstructResponse) and every rank's op then fails with its words:
 * `Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device GPU, but another rank
 * specified device CPU.`, `Mismatched ALLREDUCE tensor shapes: One rank sent a tensor with dimension 0
 * equal to 3, but another rank sent a tensor with dimension 0 equal to 4.`, `Mismatched data types:
 * One rank had type float32, but another rank had type int64.`, `Mismatched BROADCAST root ranks: One
 * rank specified root rank 0, but another rank specified root rank 1.`, `Mismatched MPI operations: One
 * rank did an allreduce, but another rank did an allgather.` The words name no rank. The reader keeps
 * each distinct message with the lines and the launcher ranks that printed it (a framework's exception
 * in front: `FailedPreconditionError: Mismatched ...`); cut at fixed words, no regular expression.
 */
import { parsePrefix } from "../parse/prefix.js";

const OPEN = "Mismatched ";
/** A line without these is none of the coordinator's (evidence.ts gates the readers on them). */
export const HOROVOD_MISMATCH_MARKS: readonly string[] = [OPEN];
const ONE_RANK = ": One rank ";
const BUT = ", but another rank ";
/** Messages, lines and reporting ranks kept per log. */
const MAX_MESSAGES = 8;
const MAX_LINES = 16;
const MAX_REPORTERS = 4096;
/** The longest message kept (Horovod's are one sentence). */
const MAX_TEXT = 400;

export interface HorovodMismatch {
  /** From `Mismatched` to the end of the sentence. */
  message: string;
  lines: number[];
  /** The launcher ranks of the lines that printed it (`[1,2]<stderr>:` gives 2): who reported it, not who is at fault. */
  reporters: Set<number>;
}

export class HorovodMismatchReader {
  readonly mismatches: HorovodMismatch[] = [];

  line(text: string, lineNo: number): void {
    const k = text.indexOf(OPEN);
    if (k < 0) return;
    const one = text.indexOf(ONE_RANK, k + OPEN.length);
    if (one < 0 || one - k > 120) return;
    const but = text.indexOf(BUT, one);
    if (but < 0) return;
    // The sentence ends at a dot before a blank or the line's end (`factors (0.5, ...)` goes on).
    const dot = sentenceEnd(text, but + BUT.length);
    const message = text.slice(k, Math.min(dot, k + MAX_TEXT)).trimEnd();
    let m = this.mismatches.find((x) => x.message === message);
    if (m === undefined) {
      if (this.mismatches.length >= MAX_MESSAGES) return;
      m = { message, lines: [], reporters: new Set() };
      this.mismatches.push(m);
    }
    if (m.lines.length < MAX_LINES) m.lines.push(lineNo);
    const rank = parsePrefix(text, 0, k, true).launcher?.rank;
    if (rank !== undefined && m.reporters.size < MAX_REPORTERS) m.reporters.add(rank);
  }
}

/**
 * Where the sentence from i ends: after a dot followed by a blank, a quote or a parenthesis (a Python
 * repr: `HorovodInternalError('Mismatched ... equal to 4.')`) or the line's end; else the line's end.
 */
function sentenceEnd(s: string, i: number): number {
  for (let d = s.indexOf(".", i); d >= 0; d = s.indexOf(".", d + 1)) {
    const n = s.charCodeAt(d + 1);
    if (d + 1 >= s.length || n === 32 || n === 9 || n === 39 || n === 34 || n === 41) return d + 1;
  }
  return s.length;
}
