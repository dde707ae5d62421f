/**
 * Records of `journalctl -k -o json`: one JSON object per line. MESSAGE is a string, or an array
 * of byte values when it is not valid UTF-8; numbers are strings of decimal digits.
 */

export interface JournalRecord {
  /** Where the next run resumes (`--after-cursor`). */
  cursor: string;
  bootId?: string;
  /** Wall clock of the record, Unix ms. */
  realtimeMs?: number;
  /** Microseconds since boot of the kernel's printk (_SOURCE_MONOTONIC_TIMESTAMP). */
  usec?: number;
  message: string;
  /** _KERNEL_DEVICE (`+pci:0000:3b:00.0`), when the kernel named one. */
  device?: string;
}

/** Parses one line; undefined when it is not a journal record with a cursor and a message. */
export function parseJournalLine(line: string): JournalRecord | undefined {
  if (line.length < 2 || line.charCodeAt(0) !== 123) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof o !== "object" || o === null) return undefined;
  const f = o as Record<string, unknown>;
  const cursor = f["__CURSOR"];
  const message = text(f["MESSAGE"]);
  if (typeof cursor !== "string" || message === undefined) return undefined;
  const r: JournalRecord = { cursor, message };
  if (typeof f["_BOOT_ID"] === "string") r.bootId = f["_BOOT_ID"];
  const rt = micros(f["__REALTIME_TIMESTAMP"]);
  if (rt !== undefined) r.realtimeMs = Math.floor(rt / 1000);
  const mono = micros(f["_SOURCE_MONOTONIC_TIMESTAMP"]);
  if (mono !== undefined) r.usec = mono;
  if (typeof f["_KERNEL_DEVICE"] === "string") r.device = f["_KERNEL_DEVICE"];
  return r;
}

function text(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((b) => typeof b === "number" && b >= 0 && b <= 255)) {
    return Buffer.from(v as number[]).toString("latin1");
  }
  return undefined;
}

function micros(v: unknown): number | undefined {
  if (typeof v !== "string" || v.length === 0 || v.length > 20) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
