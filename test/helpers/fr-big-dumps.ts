/**
 * Large Flight Recorder dumps written by Python's pickle (test/fakes/fr-big-dump.py): the two hostile
 * ones (a rank list, an entry, each named thousands of times through the pickle's memo) and the
 * largest legitimate dump of a 131,072-rank job.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fakesDir } from "./agent-process.js";

export const FR_BIG_DUMP_PY = join(fakesDir, "fr-big-dump.py");

export type BigDumpKind = "shared-ranks" | "shared-entry" | "large-job";

/** Writes one dump of `kind` to `path` (flags as fr-big-dump.py takes them, e.g. { groups: 17 }); returns its size in bytes. */
export function writeBigDump(kind: BigDumpKind, path: string, flags: Record<string, number> = {}): number {
  const args = Object.entries(flags).flatMap(([k, v]) => [`--${k}`, String(v)]);
  const r = spawnSync("python3", [FR_BIG_DUMP_PY, kind, path, ...args], { encoding: "utf8", timeout: 120_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`fr-big-dump.py ${kind} failed (${r.status}): ${r.stderr}`);
  return Number(r.stdout.trim());
}
