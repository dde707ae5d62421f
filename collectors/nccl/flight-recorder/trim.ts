/** A dump cut down to what the analysis uses, for jobs of thousands of ranks. */
import type { FrEntry } from "./types.js";

/** The group an entry belongs to: its process_group name, else (1.x) its pg_id. */
export const groupNameOf = (e: Pick<FrEntry, "pgName" | "pgId">): string | undefined => e.pgName ?? (e.pgId !== undefined ? String(e.pgId) : undefined);

/**
 * Which of a dump's entries (oldest first) to keep: per process group, those of its last
 * `perGroup` collectives (and the point-to-point operations among them), what the analysis
 * compares across ranks. The groups' last-* numbers come from all entries, so nothing it concludes
 * changes unless a rank ran more than `perGroup` collectives past the one the others wait in.
 * Bounds the memory of a job of thousands of ranks: convert.ts reads only these whole.
 */
export function keptEntries(entries: readonly Pick<FrEntry, "pgName" | "pgId" | "seq">[], perGroup: number): boolean[] {
  const seqs = new Map<string, Set<number>>();
  const keep: boolean[] = new Array<boolean>(entries.length).fill(false);
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as Pick<FrEntry, "pgName" | "pgId" | "seq">;
    const name = groupNameOf(e) ?? "";
    const set = seqs.get(name) ?? new Set<number>();
    seqs.set(name, set);
    const seq = e.seq ?? -1;
    if (set.size < perGroup || set.has(seq)) {
      set.add(seq);
      keep[i] = true;
    }
  }
  return keep;
}
