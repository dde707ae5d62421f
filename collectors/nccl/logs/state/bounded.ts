/** Appends item and drops the oldest beyond max: a window of the latest records. */
export function pushBounded<T>(arr: T[], item: T, max: number): void {
  arr.push(item);
  if (arr.length > max) arr.splice(0, arr.length - max);
}
