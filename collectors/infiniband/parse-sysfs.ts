/**
 * Pure parsers for the contents of /sys/class/infiniband files (no fs access here).
 * Each returns undefined for text it does not understand: absent, never 0.
 */

/** `4: ACTIVE` → 4, `5: LinkUp` → 5 (the kernel prints "%u: %s"). */
export function parseStateId(text: string): number | undefined {
  const m = /^\s*(\d{1,3})\s*:/.exec(text);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** Gb/s → bytes/s, node_exporter's convention (1 Gb/s = 125,000,000 bytes/s). */
export const BYTES_PER_GBIT = 125_000_000;

/**
 * `400 Gb/sec (4X NDR)` → 50e9, `2.5 Gb/sec (1X SDR)` → 312.5e6, `0 GB/sec` → 0
 * (the kernel prints "0 GB/sec" when the port has no active speed/width).
 */
export function parseRateBytesPerSecond(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)(?:\s+\S|\s*$)/.exec(text);
  if (m?.[1] === undefined) return undefined;
  const bytes = Math.round(Number(m[1]) * BYTES_PER_GBIT);
  return Number.isFinite(bytes) ? bytes : undefined;
}

export type CounterRead = { ok: true; value: number } | { ok: false; reason: "no-pma" | "garbled" };

const U64_MAX = "18446744073709551615";

/**
 * An unsigned 64-bit decimal (what the kernel and perfquery print for a counter), or undefined for
 * anything else, including digits beyond 2^64-1 (garbage, not a counter).
 */
export function parseU64(t: string): number | undefined {
  if (!/^\d{1,20}$/.test(t)) return undefined;
  if (t.length === 20 && t > U64_MAX) return undefined;
  return Number(t);
}

/** A counter file: a decimal number, or `N/A (no PMA)` when the port has no PMA (node_exporter #966). */
export function parseCounterValue(text: string): CounterRead {
  const t = text.trim();
  const v = parseU64(t);
  if (v !== undefined) return { ok: true, value: v };
  if (t.startsWith("N/A")) return { ok: false, reason: "no-pma" };
  return { ok: false, reason: "garbled" };
}

/** `lid` / `sm_lid`: the kernel prints `0x33bf`; plain decimal is accepted too. */
export function parseLid(text: string): number | undefined {
  const t = text.trim();
  if (/^0x[0-9a-f]{1,4}$/i.test(t)) return Number.parseInt(t.slice(2), 16);
  if (/^\d{1,5}$/.test(t)) return Number(t);
  return undefined;
}

/**
 * A node GUID in the form both sources agree on: `0x` + 16 lower-case hex digits.
 * sysfs prints `0a7f:bc12:45ef:d23b`, ibstat `0x58a2e10300a7820e`.
 */
export function normalizeGuid(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  if (/^[0-9a-f]{4}(?::[0-9a-f]{4}){3}$/.test(t)) return `0x${t.replaceAll(":", "")}`;
  if (/^0x[0-9a-f]{1,16}$/.test(t)) return `0x${t.slice(2).padStart(16, "0")}`;
  return undefined;
}

/**
 * A free-text attribute used as a label value (fw_ver, board_id, hca_type, link_layer):
 * trimmed, control characters removed, bounded in length; empty → undefined.
 */
export function cleanText(text: string): string | undefined {
  const t = text
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .trim()
    .slice(0, 128);
  return t.length > 0 ? t : undefined;
}
