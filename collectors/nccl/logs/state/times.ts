/** Turning the timestamps NCCL prints into epoch milliseconds (the writer's local time zone). */

function num(s: string, a: number, b: number): number {
  let v = 0;
  for (let i = a; i < b; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    v = v * 10 + c;
  }
  return v;
}

/**
 * `2026-03-18 11:13:09` (NCCL 2.26+ default `[%F %T] ` prefix, optionally with `.123456` fraction)
 * → epoch ms in this machine's local time (the writer's, when ringwatch runs on the same node).
 * Other forms (the year-less c10 `0816 01:45:40.18`) → undefined.
 */
export function ncclTimestampMs(ts: string | undefined): number | undefined {
  if (ts === undefined || ts.length < 19 || ts.charCodeAt(4) !== 45 || ts.charCodeAt(10) !== 32) return undefined;
  const y = num(ts, 0, 4);
  const mo = num(ts, 5, 7);
  const d = num(ts, 8, 10);
  const h = num(ts, 11, 13);
  const mi = num(ts, 14, 16);
  const s = num(ts, 17, 19);
  if ([y, mo, d, h, mi, s].some((v) => !Number.isFinite(v))) return undefined;
  let ms = 0;
  if (ts.charCodeAt(19) === 46) {
    const frac = ts.slice(20, 23);
    const f = num(frac, 0, frac.length);
    if (Number.isFinite(f)) ms = f * 10 ** (3 - frac.length);
  }
  const t = new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  return Number.isFinite(t) ? t : undefined;
}
