/**
 * The reader shape of PyTorch's one-line failures that each rank logs and then raises (Gloo's connect
 * failure and its timeout): the first line of each launcher rank (`[rank4]:`) that `parse` reads is
 * kept, up to `max`; a rank's logged line and the error it raises are one fact. A line without a
 * mark costs one indexOf per mark.
 */
export class FirstPerRank<T extends { rank?: number }> {
  readonly items: T[] = [];
  private readonly ranks = new Set<number | undefined>();

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(
    private readonly source: string,
    private readonly marks: string | readonly string[],
    private readonly parse: (text: string, where: string) => T | undefined,
    private readonly max = 4096,
  ) {}

  line(text: string, lineNo: number): void {
    if (this.items.length >= this.max || !hasMark(text, this.marks)) return;
    const t = this.parse(text, `${this.source}:${lineNo}`);
    if (t !== undefined && !this.ranks.has(t.rank)) {
      this.ranks.add(t.rank);
      this.items.push(t);
    }
  }
}

function hasMark(text: string, marks: string | readonly string[]): boolean {
  if (typeof marks === "string") return text.indexOf(marks) >= 0;
  for (const m of marks) if (text.indexOf(m) >= 0) return true;
  return false;
}
