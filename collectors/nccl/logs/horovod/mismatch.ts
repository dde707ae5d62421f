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
    const dot = text.indexOf(".", but + BUT.length);
    const message = text.slice(k, Math.min(dot < 0 ? text.length : dot + 1, k + MAX_TEXT));
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
