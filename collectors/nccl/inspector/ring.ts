/**
 * A fixed-capacity ring of numbers (Float64Array, allocated on first push) and medians of a few
 * numbers without sorting them all (quickselect) or allocating: the per-rank windows of the
 * Inspector feed are made of these, so a record costs no allocation.
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

  /** How many of the values held are below x. */
  countBelow(x: number): number {
    let n = 0;
    if (this.buf === undefined) return 0;
    for (let i = 0; i < this.size; i++) if ((this.buf[i] as number) < x) n++;
    return n;
  }

  /** Median of the values held (their order does not matter); NaN when empty. */
  median(): number {
    if (this.buf === undefined || this.size === 0) return NaN;
    const s = scratch(this.size);
    // Every held value, wherever the ring starts (when not full, they are buf[0, size)).
    s.set(this.size === this.capacity ? this.buf : this.buf.subarray(0, this.size));
    return medianInPlace(s, this.size);
  }
}

let shared = new Float64Array(256);

/** A scratch array of at least n numbers, reused (the detectors run synchronously, one at a time). */
export function scratch(n: number): Float64Array {
  if (shared.length < n) shared = new Float64Array(Math.max(n, shared.length * 2));
  return shared;
}

/** Median of a[0, n) (reordered in place): the middle value, or the mean of the two middle ones. NaN for n = 0. */
export function medianInPlace(a: Float64Array, n: number): number {
  if (n === 0) return NaN;
  const m = n >> 1;
  const hi = select(a, n, m);
  if (n % 2 === 1) return hi;
  // select left a[0, m) <= a[m]: the lower middle is their maximum.
  let lo = a[0] as number;
  for (let i = 1; i < m; i++) if ((a[i] as number) > lo) lo = a[i] as number;
  return (lo + hi) / 2;
}

/** The k-th smallest of a[0, n) (0-based), leaving smaller values before index k (Hoare's quickselect). */
function select(a: Float64Array, n: number, k: number): number {
  let left = 0;
  let right = n - 1;
  while (right > left) {
    if (right - left < 16) {
      // Insertion sort for short ranges.
      for (let i = left + 1; i <= right; i++) {
        const x = a[i] as number;
        let j = i - 1;
        while (j >= left && (a[j] as number) > x) {
          a[j + 1] = a[j] as number;
          j--;
        }
        a[j + 1] = x;
      }
      break;
    }
    // Median of three as pivot.
    const mid = (left + right) >> 1;
    const p = med3(a[left] as number, a[mid] as number, a[right] as number);
    let i = left;
    let j = right;
    while (i <= j) {
      while ((a[i] as number) < p) i++;
      while ((a[j] as number) > p) j--;
      if (i <= j) {
        const t = a[i] as number;
        a[i] = a[j] as number;
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break;
  }
  return a[k] as number;
}

function med3(x: number, y: number, z: number): number {
  if (x < y) return y < z ? y : x < z ? z : x;
  return x < z ? x : y < z ? z : y;
}
