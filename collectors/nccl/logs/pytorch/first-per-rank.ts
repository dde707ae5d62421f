/**
 * The reader shape of PyTorch's one-line failures that each rank logs and then raises (Gloo's connect
 * failure, size check and timeout, the ncclUniqueId fetch that timed out): the first line of each
 * launcher rank (`[rank4]:`) that `parse` reads is kept, up to `max`; a rank's logged line and the
 * error it raises are one fact.
 */
import { MarkedLines } from "../marked-lines.js";

export class FirstPerRank<T extends { rank?: number }> extends MarkedLines<T> {
  private readonly ranks = new Set<number | undefined>();

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(source: string, marks: string | readonly string[], parse: (text: string, where: string) => T | undefined, max = 4096) {
    super(source, marks, parse, max);
  }

  protected override keep(t: T): boolean {
    if (this.ranks.has(t.rank)) return false;
    this.ranks.add(t.rank);
    return true;
  }
}
