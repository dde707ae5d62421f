/**
 * The one shape in which every source states its verdict about a communicator with a rank on this
 * node, and the merge of those verdicts into what the node says (ringwatch_nccl_hang_suspected,
 * _hang_evidence, _rank_behind, _straggler, _collective_mismatch, _hang_threshold_seconds,
 * ringwatch_gpu_hang_signature). Each source turns its own verdicts into CommunicatorVerdicts
 * (logs/detect/communicator.ts, ras/communicator.ts, inspector/communicator.ts); the merge knows
 * no source. Pure: the same verdicts give the same result.
 *
 * The rules: a communicator is hung, a rank behind or a straggler if any source says so; the
 * evidence is every source's; the threshold is that of the first source (in the order given) that
 * states one; a mismatch is stated by the sources that judge it; the GPUs of hung communicators
 * that read spin or idle carry that signature.
 */
import type { GpuObservation } from "./gpu-signature.js";

/** Where a hang verdict comes from, as the `source` label of ringwatch_nccl_hang_evidence names it. */
export type HangEvidence = "coll_log" | "ras" | "gpu";

export interface RankVerdict {
  rank: number;
  /** Never entered the collective the other ranks of its hung communicator wait in (undefined: this source does not judge it). */
  behind?: boolean;
  /** Persistently last to arrive (undefined: this source does not judge it). */
  straggler?: boolean;
}

/** One source's verdict about one communicator. */
export interface CommunicatorVerdict {
  commId: string;
  /** Whether it is hung (undefined: this source does not judge hangs). */
  hang?: boolean;
  /** What shows the hang (empty while not hung). */
  evidence: readonly HangEvidence[];
  /** The silence that counts as a hang for this communicator, by this source (ms); undefined: none stated. */
  thresholdMs?: number;
  /** The local ranks this source speaks of. */
  ranks: readonly RankVerdict[];
  /** Whether ranks issued different collectives (undefined: this source does not judge it). */
  mismatch?: boolean;
  /** The local ranks' GPUs as read while silent. */
  gpus: readonly GpuObservation[];
  /** Suspicion short of a verdict (a straggler candidate not yet held long enough): its ranks' series are shown (series.ts). */
  suspect?: boolean;
}

/** A value per label set. */
export type Series = ReadonlyMap<string, { labels: Record<string, string>; value: number }>;

export interface MergedVerdicts {
  hang: Series;
  evidence: Series;
  behind: Series;
  straggler: Series;
  mismatch: Series;
  threshold: Series;
  signature: Series;
  /** Communicators some source suspects without a verdict. */
  suspect: ReadonlySet<string>;
}

/** Samples keyed by their labels; a label set set twice keeps the larger value. */
class MaxSeries {
  readonly m = new Map<string, { labels: Record<string, string>; value: number }>();

  set(labels: Record<string, string>, value: number): void {
    const k = JSON.stringify(labels);
    const s = this.m.get(k);
    if (s === undefined || value > s.value) this.m.set(k, { labels, value });
  }

  /** Only where no value is set yet. */
  setFirst(labels: Record<string, string>, value: number): void {
    const k = JSON.stringify(labels);
    if (!this.m.has(k)) this.m.set(k, { labels, value });
  }
}

/** The verdicts of every source merged: 1 where any source says so. Sources in priority order (the threshold's). */
export function mergeVerdicts(verdicts: Iterable<CommunicatorVerdict>): MergedVerdicts {
  const hang = new MaxSeries();
  const evidence = new MaxSeries();
  const behind = new MaxSeries();
  const straggler = new MaxSeries();
  const mismatch = new MaxSeries();
  const threshold = new MaxSeries();
  const signature = new MaxSeries();
  const suspect = new Set<string>();
  for (const v of verdicts) {
    const comm = { comm_id: v.commId };
    if (v.suspect === true) suspect.add(v.commId);
    if (v.hang !== undefined) hang.set(comm, v.hang ? 1 : 0);
    if (v.mismatch !== undefined) mismatch.set(comm, v.mismatch ? 1 : 0);
    if (v.thresholdMs !== undefined) threshold.setFirst(comm, v.thresholdMs / 1000);
    for (const r of v.ranks) {
      const labels = { comm_id: v.commId, rank: String(r.rank) };
      if (r.behind !== undefined) behind.set(labels, r.behind ? 1 : 0);
      if (r.straggler !== undefined) straggler.set(labels, r.straggler ? 1 : 0);
    }
    if (v.hang !== true) continue;
    for (const source of v.evidence) evidence.set({ comm_id: v.commId, source }, 1);
    for (const g of v.gpus) if (g.signature !== "busy") signature.set({ gpu: g.gpu, signature: g.signature }, 1);
  }
  return {
    hang: hang.m,
    evidence: evidence.m,
    behind: behind.m,
    straggler: straggler.m,
    mismatch: mismatch.m,
    threshold: threshold.m,
    signature: signature.m,
    suspect,
  };
}
