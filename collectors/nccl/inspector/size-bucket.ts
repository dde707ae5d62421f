/**
 * Message sizes into a few buckets (the exported bandwidth's `size_bucket` label: five values,
 * whatever the job's sizes) and into power-of-two classes (the bandwidth-drop detector's finer
 * series, so that a job moving from 16 MiB to 1 MiB messages is not a drop).
 */
import type { SizeBucket } from "./types.js";

const KIB = 1024;
const MIB = 1024 * KIB;

export const SIZE_BUCKETS: readonly SizeBucket[] = ["lt_64KiB", "64KiB_1MiB", "1MiB_16MiB", "16MiB_256MiB", "ge_256MiB"];

export function sizeBucket(bytes: number): SizeBucket {
  if (bytes < 64 * KIB) return "lt_64KiB";
  if (bytes < MIB) return "64KiB_1MiB";
  if (bytes < 16 * MIB) return "1MiB_16MiB";
  if (bytes < 256 * MIB) return "16MiB_256MiB";
  return "ge_256MiB";
}

/** Index of sizeBucket(bytes) in SIZE_BUCKETS. */
export function sizeBucketIndex(bytes: number): number {
  return SIZE_BUCKETS.indexOf(sizeBucket(bytes));
}

/** The largest power of two <= bytes (0 for 0): the lower bound of its size class. */
export function sizeClass(bytes: number): number {
  if (!(bytes >= 1)) return 0;
  if (bytes < 2 ** 32) return 2 ** (31 - Math.clz32(bytes));
  let c = 2 ** Math.floor(Math.log2(bytes));
  // log2 rounds: 2^53 - 1 gives 53.
  if (c > bytes) c /= 2;
  return c;
}
