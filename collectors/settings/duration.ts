/**
 * Prometheus-style durations: `500ms`, `15s`, `1m30s`, `2h`, `1d`. A bare number is seconds.
 * Returns milliseconds, or undefined when the text is not a duration or its milliseconds are not a
 * safe integer (`9999…9s` would otherwise read as Infinity, which `> 0` checks let through).
 */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return safe(Math.round(Number(s) * 1000));
  let total = 0;
  let i = 0;
  let matched = false;
  while (i < s.length) {
    let j = i;
    while (j < s.length && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
    if (j === i) return undefined;
    const value = Number(s.slice(i, j));
    let k = j;
    while (k < s.length && /[a-z]/.test(s.charAt(k))) k++;
    const unit = s.slice(j, k);
    // Own keys only: `1constructor` must not find Object.prototype.constructor (NaN ms).
    const factor = Object.hasOwn(UNIT_MS, unit) ? UNIT_MS[unit] : undefined;
    if (factor === undefined) return undefined;
    total += value * factor;
    matched = true;
    i = k;
  }
  return matched ? safe(total) : undefined;
}

function safe(ms: number): number | undefined {
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/** `15000` → `15s`, for help text and logs. */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0 && ms >= 60_000) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
