/**
 * The last `size` sequence indexes of a communicator and what was seen at each: a ring indexed by
 * sequence number, used like a Map<number, T> (get / set / delete / clear) but with no hashing or
 * allocation per collective. Setting index n forgets n - size.
 */
export class SeqWindow<T> {
  private readonly seqs: Float64Array;
  private readonly values: (T | undefined)[];

  constructor(readonly size: number) {
    this.seqs = new Float64Array(size).fill(-1);
    this.values = new Array<T | undefined>(size).fill(undefined);
  }

  private slot(seq: number): number {
    const i = seq % this.size;
    return i < 0 ? i + this.size : i;
  }

  get(seq: number): T | undefined {
    const i = this.slot(seq);
    return this.seqs[i] === seq ? this.values[i] : undefined;
  }

  /** The value set(seq) would replace, whatever its index (to reuse its object), or undefined. */
  displaced(seq: number): T | undefined {
    return this.values[this.slot(seq)];
  }

  set(seq: number, value: T): void {
    const i = this.slot(seq);
    this.seqs[i] = seq;
    this.values[i] = value;
  }

  delete(seq: number): void {
    const i = this.slot(seq);
    if (this.seqs[i] !== seq) return;
    this.seqs[i] = -1;
    this.values[i] = undefined;
  }

  clear(): void {
    this.seqs.fill(-1);
    this.values.fill(undefined);
  }
}
