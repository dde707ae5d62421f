/** A dump cut down to what the analysis uses, for jobs of thousands of ranks. */
import { groupNameOf } from "./convert.js";
import type { FrDump, FrEntry } from "./types.js";

/**
 * The dump with, per process group, only the entries of its last `perGroup` collectives (and the
 * point-to-point operations among them): what the analysis compares across ranks. The groups'
 * last-* numbers are kept, so nothing it concludes changes unless a rank ran more than `perGroup`
 * collectives past the one the others wait in. Bounds the memory of a job of thousands of ranks.
 */
export function trimEntries<T extends Pick<FrDump, "entries" | "entriesDropped">>(dump: T, perGroup: number): T {
  const seqs = new Map<string, Set<number>>();
  const keep: boolean[] = new Array<boolean>(dump.entries.length).fill(false);
  for (let i = dump.entries.length - 1; i >= 0; i--) {
    const e = dump.entries[i] as FrEntry;
    const name = groupNameOf(e) ?? "";
    const set = seqs.get(name) ?? new Set<number>();
    seqs.set(name, set);
    const seq = e.seq ?? -1;
    if (set.size < perGroup || set.has(seq)) {
      set.add(seq);
      keep[i] = true;
    }
  }
  const entries = dump.entries.filter((_, i) => keep[i]);
  return { ...dump, entries, entriesDropped: dump.entriesDropped + dump.entries.length - entries.length };
}
