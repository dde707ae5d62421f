/**
 * The last `size` sequence numbers of one collective type of one communicator, with each local
 * rank's execution time (µs) at each: a ring indexed by coll_sn (the same on every rank for the
 * same collective), one row per sequence number, one column per local rank slot. Grows its
 * columns as ranks appear (up to the communicator's rank limit); no allocation per record.
 */
export class OpWindow {
  readonly seqs: Float64Array;
  /** Row i, slot k: vals[i * stride + k]; NaN = not reported. */
  vals: Float64Array;
  stride: number;

  constructor(
    readonly size: number,
    slots: number,
  ) {
    this.seqs = new Float64Array(size).fill(-1);
    this.stride = Math.max(1, slots);
    this.vals = new Float64Array(size * this.stride).fill(NaN);
  }

  /** Records slot's execution time at seq. A seq older than the one its row holds now is ignored. */
  set(seq: number, slot: number, execUs: number): void {
    if (slot >= this.stride) this.grow(slot + 1);
    const i = seq % this.size;
    const held = this.seqs[i] as number;
    if (held > seq) return;
    if (held !== seq) {
      this.seqs[i] = seq;
      this.vals.fill(NaN, i * this.stride, (i + 1) * this.stride);
    }
    this.vals[i * this.stride + slot] = execUs;
  }

  /** Forgets a slot's column (its rank left). */
  clearSlot(slot: number): void {
    if (slot >= this.stride) return;
    for (let i = 0; i < this.size; i++) this.vals[i * this.stride + slot] = NaN;
  }

  private grow(slots: number): void {
    const stride = Math.max(slots, this.stride * 2);
    const vals = new Float64Array(this.size * stride).fill(NaN);
    for (let i = 0; i < this.size; i++) vals.set(this.vals.subarray(i * this.stride, (i + 1) * this.stride), i * stride);
    this.vals = vals;
    this.stride = stride;
  }
}
