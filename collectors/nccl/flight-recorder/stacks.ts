/** Call stacks of one collective across ranks, grouped: the ranks that called it from each. */
import type { FrFrame } from "./types.js";

/** Distinct stacks kept per collective. */
const MAX_STACKS = 4;

/** A call stack and the ranks that called the collective from it. */
export interface FrStack {
  ranks: number[];
  frames: FrFrame[];
}

/** Distinct stacks of `ranks`' entries, most shared first. */
export function stacksOf(entries: readonly { rank: number; frames: readonly FrFrame[] }[]): FrStack[] {
  const by = new Map<string, FrStack>();
  for (const { rank, frames } of entries) {
    const key = frames.map((f) => `${f.file}:${f.line}:${f.name}`).join("\n");
    const s = by.get(key);
    if (s) s.ranks.push(rank);
    else if (by.size < MAX_STACKS) by.set(key, { ranks: [rank], frames: [...frames] });
  }
  return [...by.values()].sort((a, b) => b.ranks.length - a.ranks.length);
}
