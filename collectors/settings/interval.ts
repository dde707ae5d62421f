/**
 * Turns a poll interval into a node-cron expression. node-cron fires on wall-clock boundaries, so
 * an interval must divide a minute (1-30 s, 60 s) or an hour (whole minutes dividing 60).
 */
export function intervalToCron(ms: number): string | undefined {
  if (ms <= 0 || ms % 1000 !== 0) return undefined;
  const s = ms / 1000;
  if (s < 60) return 60 % s === 0 ? (s === 1 ? "* * * * * *" : `*/${s} * * * * *`) : undefined;
  if (s % 60 !== 0) return undefined;
  const m = s / 60;
  if (m === 60) return "0 0 * * * *";
  if (m < 60 && 60 % m === 0) return m === 1 ? "0 * * * * *" : `0 */${m} * * * *`;
  return undefined;
}
