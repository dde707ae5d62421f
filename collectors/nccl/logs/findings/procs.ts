/** Naming processes in findings: their ranks, and `host:pid [dev]`. */
import type { TrackedState } from "../detect/verdict.js";
import type { ProcessState } from "../state/model.js";

/** The ranks of these processes in the communicators seen; else the global rank a launcher prefix gave them. */
export function ranksOf(state: TrackedState, procs: readonly ProcessState[]): number[] {
  const keys = new Set(procs.map((p) => p.key));
  const out = new Set<number>();
  for (const c of state.comms.values()) for (const r of c.ranks.values()) if (keys.has(r.processKey)) out.add(r.rank);
  for (const p of procs) {
    if (p.launcherRank === undefined) continue;
    let known = false;
    for (const key of p.comms.values()) if (state.comms.get(key)?.ranks.size) known = true;
    if (!known) out.add(p.launcherRank);
  }
  return [...out].sort((a, b) => a - b);
}

/** `host:pid [dev]` (the device of the line, when it had one). */
export function who(key: string, cudaDev: number | undefined): string {
  return cudaDev === undefined ? key : `${key} [${cudaDev}]`;
}
