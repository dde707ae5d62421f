/**
 * The reader shape of one-line facts: each line holding one of `marks` is read by `parse`, and what
 * it reads is kept, up to `max` (PyTorch's store client and server timeouts, XLA's rendezvous
 * waits; FirstPerRank keeps one per rank). A line without a mark costs one indexOf per mark; where
 * analyze gates the readers on their marks (analyze/evidence.ts), not even that.
 */
export class MarkedLines<T> {
  readonly items: T[] = [];

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(
    private readonly source: string,
    private readonly marks: string | readonly string[],
    private readonly parse: (text: string, where: string) => T | undefined,
    private readonly max = 1024,
  ) {}

  line(text: string, lineNo: number): void {
    if (this.items.length >= this.max || !hasMark(text, this.marks)) return;
    const t = this.parse(text, `${this.source}:${lineNo}`);
    if (t !== undefined && this.keep(t)) this.items.push(t);
  }

  /** Whether a fact read is kept: every one, here. */
  protected keep(_t: T): boolean {
    return true;
  }
}

function hasMark(text: string, marks: string | readonly string[]): boolean {
  if (typeof marks === "string") return text.indexOf(marks) >= 0;
  for (const m of marks) if (text.indexOf(m) >= 0) return true;
  return false;
}

/** The ranks the facts name, each once, in order (facts without a rank left out). */
export function knownRanks(facts: readonly { rank?: number }[]): number[] {
  return [...new Set(facts.map((f) => f.rank).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);
}
