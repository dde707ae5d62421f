/**
 * Deterministic randomness for the simulator. Two flavours:
 * - `unit(seed, ...keys)`: stateless, a pure hash of its arguments. Used for everything that must
 *   not depend on the order in which it is asked (step jitter, per-rank skew), so that advancing
 *   a scenario by 1 s ten times gives exactly the lines of advancing it by 10 s once.
 * - `Rng`: a sequential generator (mulberry32) for building a job's fixed identity (pids, pointers).
 * Nothing here reads the clock.
 */

/** 32-bit mix of an integer into a running hash (murmur3 finaliser style). */
function mix(h: number, k: number): number {
  let x = Math.imul(k | 0, 0xcc9e2d51);
  x = (x << 15) | (x >>> 17);
  x = Math.imul(x, 0x1b873593);
  let y = h ^ x;
  y = (y << 13) | (y >>> 19);
  return (Math.imul(y, 5) + 0xe6546b64) | 0;
}

function finish(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Unsigned 32-bit hash of the seed and keys. */
export function hash32(seed: number, ...keys: number[]): number {
  let h = seed | 0;
  for (const k of keys) h = mix(h, k);
  return finish(mix(h, keys.length));
}

/** Stateless uniform number in [0, 1) for (seed, keys). */
export function unit(seed: number, ...keys: number[]): number {
  return hash32(seed, ...keys) / 4294967296;
}

/** Sequential deterministic generator (mulberry32). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = hash32(seed, 0x5eed) | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** `n` random lowercase hex digits. */
  hexDigits(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += Math.floor(this.next() * 16).toString(16);
    return s;
  }

  /**
   * A user-space heap pointer as glibc's %p prints it for a Python/PIE process,
   * e.g. 0x55e290bd32d0 (fixture 56). 16-byte aligned.
   */
  heapPtr(): string {
    const top = this.next() < 0.5 ? "55" : "56";
    return `0x${top}${this.hexDigits(8)}${(this.int(0, 7) * 2).toString(16)}0`;
  }

  /** A CUDA device allocation base, e.g. 0x7fa921200000 (fixture 56); aligned to 2 MiB. */
  devicePtr(): bigint {
    const hi = BigInt(0x7f00 + this.int(0x10, 0xfe));
    const mid = BigInt(this.int(0, 0x7f));
    return (hi << 32n) | (mid << 25n);
  }

  /** A 64-bit commId hash as NCCL prints it with %llx (no zero padding). */
  commId(): string {
    const v = (BigInt(this.int(1, 0x7fffffff)) << 33n) | (BigInt(this.int(0, 0x7fffffff)) << 2n) | BigInt(this.int(0, 3));
    return `0x${v.toString(16)}`;
  }
}
