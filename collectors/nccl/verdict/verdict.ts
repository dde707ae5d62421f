/**
 * The one shape of a verdict, live and offline: a kind of the table (finding-kinds.ts) with its
 * severity, what it is about (a communicator, or a PyTorch process group), the ranks it names and
 * what shows it. analyze prints each as a Finding (report.ts: the same fields with the words and
 * the numbers); live, each source states its verdicts per communicator it watches
 * (CommunicatorWatch), and merge.ts turns them into the node's series. A new source states
 * Verdicts of the table's kinds and needs nothing else of this folder.
 */
import { kindRow, type Severity, type VerdictKind } from "./finding-kinds.js";
import type { GpuObservation } from "./gpu-signature.js";

export interface Verdict<K extends VerdictKind = VerdictKind> {
  kind: K;
  severity: Severity;
  /** The communicator it is about (NCCL's commId), or null where the evidence names none. */
  comm_id: string | null;
  /** The PyTorch process group it is about, where the evidence names one (`name (desc)`). */
  process_group?: string;
  /** The ranks it names: the rank at fault or behind first where one is named. */
  ranks: number[];
  /** What shows it: `file:line` of the lines read (analyze), or the sources that see it live (ringwatch_nccl_hang_evidence's `source`). */
  evidence: string[];
}

/** The kinds a source concludes of a communicator live (merge.ts turns each into a series). */
export type LiveKind = Extract<VerdictKind, "hang_suspected" | "rank_behind" | "straggler" | "collective_mismatch">;

/** A live verdict: a hang carries the GPUs of its local ranks as read while silent (ringwatch_gpu_hang_signature). */
export interface LiveVerdict extends Verdict<LiveKind> {
  comm_id: string;
  gpus?: readonly GpuObservation[];
}

/**
 * What one source watches of one communicator with a rank on this node, and what it concludes:
 * a kind it judges is a series at 0 for the communicator (or each of `ranks`) until one of its
 * verdicts names it.
 */
export interface CommunicatorWatch {
  comm_id: string;
  /** The kinds this source judges of this communicator (another source may judge the rest). */
  judges: readonly LiveKind[];
  /** The communicator's local ranks this source speaks of. */
  ranks: readonly number[];
  /** The silence that counts as a hang for this communicator, by this source (ms); undefined: none stated. */
  thresholdMs?: number;
  /** Suspicion short of a verdict (a straggler candidate not yet held long enough): its ranks' series are shown (series.ts). */
  suspect?: boolean;
  /** Its verdicts, each of a kind it judges, about ranks among `ranks`. */
  verdicts: readonly LiveVerdict[];
}

/** A live verdict of a kind, with the kind's usual severity (finding-kinds.ts). */
export function liveVerdict(
  kind: LiveKind,
  commId: string,
  ranks: readonly number[],
  evidence: readonly string[],
  gpus?: readonly GpuObservation[],
): LiveVerdict {
  const severity = kindRow(kind).severity;
  if (severity === "event") throw new Error(`${kind}: a live kind has a usual severity`);
  return { kind, severity, comm_id: commId, ranks: [...ranks], evidence: [...evidence], ...(gpus !== undefined ? { gpus } : {}) };
}
