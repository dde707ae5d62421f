/**
 * The reader shape of PyTorch's one-line failures that each rank logs and then raises (Gloo's connect
 * failure and its timeout): the first line of each launcher rank (`[rank4]:`) that `parse` reads is
 * kept, up to `max`; a rank's logged line and the error it raises are one fact. A line without `mark`
 * costs one indexOf.
 */
export class FirstPerRank<T extends { rank?: number }> {
  readonly items: T[] = [];

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(
    private readonly source: string,
    private readonly mark: string,
    private readonly parse: (text: string, where: string) => T | undefined,
    private readonly max = 4096,
  ) {}

  line(text: string, lineNo: number): void {
    if (text.indexOf(this.mark) < 0 || this.items.length >= this.max) return;
    const t = this.parse(text, `${this.source}:${lineNo}`);
    if (t !== undefined && !this.items.some((x) => x.rank === t.rank)) this.items.push(t);
  }
}
