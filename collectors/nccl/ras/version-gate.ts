/**
 * Which NCCL version the RAS watch's timed queries are decided for, and the decision
 * (ringwatch_nccl_ras_version_gate): `periodic` for a version with no known RAS defect, else
 * `suspicion_only` (ras/defects.ts). Where known defects gate queries, a version not known yet (no
 * report, no log names it) is gated too: every NCCL whose RAS answers STATUS has one, and asking to
 * learn it would be the very query that hurts.
 */
import type { RasDefect } from "./defects.js";

/** RasGate.defect while no version is known. */
export const UNKNOWN_VERSION = "unknown_version";

export interface RasGate {
  /** Empty while no version is known. */
  version: string;
  decision: "periodic" | "suspicion_only";
  /** The first known defect of that version (its id), when there is one. */
  defect: string | undefined;
}

/**
 * The gate of the job's NCCL version (undefined: not known). Undefined: no gate
 * (`knownDefects` undefined: --collector.nccl.ras-poll-known-defective, and no version known).
 */
export function versionGate(version: string | undefined, knownDefects: ((version: string) => readonly RasDefect[]) | undefined): RasGate | undefined {
  if (version === undefined) return knownDefects === undefined ? undefined : { version: "", decision: "suspicion_only", defect: UNKNOWN_VERSION };
  const defects = knownDefects?.(version) ?? [];
  return { version, decision: defects.length > 0 ? "suspicion_only" : "periodic", defect: defects[0]?.id };
}
