/**
 * A fixed-capacity ring of numbers (Float64Array, allocated on first push) and the median of a
 * few numbers. The per-rank windows of the Inspector feed are made of these: bounded memory, no
 * allocation per record.
 */
export class Ring {
  private buf: Float64Array | undefined;
  private head = 0;
  size = 0;

  constructor(readonly capacity: number) {}

  /** Adds v; returns the value it pushed out (NaN while not full). */
  push(v: number): number {
    this.buf ??= new Float64Array(this.capacity);
    if (this.size < this.capacity) {
      this.buf[(this.head + this.size) % this.capacity] = v;
      this.size++;
      return NaN;
    }
    const out = this.buf[this.head] as number;
    this.buf[this.head] = v;
    this.head = (this.head + 1) % this.capacity;
    return out;
  }

  get full(): boolean {
    return this.size === this.capacity;
  }

  /** Median of the values held; NaN when empty. */
  median(): number {
    if (this.buf === undefined || this.size === 0) return NaN;
    const s = scratch(this.size);
    // The values are contiguous from head, wrapping once.
    const first = Math.min(this.size, this.capacity - this.head);
    s.set(this.buf.subarray(this.head, this.head + first), 0);
    if (first < this.size) s.set(this.buf.subarray(0, this.size - first), first);
    return sortedMedian(s.sort());
  }

  clear(): void {
    this.head = 0;
    this.size = 0;
  }
}

let shared = new Float64Array(256);

/** A scratch view of n numbers, reused (the detectors run synchronously, one at a time). */
export function scratch(n: number): Float64Array {
  if (shared.length < n) shared = new Float64Array(Math.max(n, shared.length * 2));
  return shared.subarray(0, n);
}

/** Median of sorted numbers: the middle one, or the mean of the two middle ones. NaN when empty. */
export function sortedMedian(sorted: Float64Array | readonly number[]): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const m = n >> 1;
  return n % 2 === 1 ? (sorted[m] as number) : ((sorted[m - 1] as number) + (sorted[m] as number)) / 2;
}

/** Median of the first n numbers of a (which it sorts in place). */
export function medianInPlace(a: Float64Array, n: number): number {
  return sortedMedian(a.subarray(0, n).sort());
}
