/**
 * The merge of every source's live verdicts into what the node says (ringwatch_nccl_hang_suspected,
 * _hang_evidence, _rank_behind, _straggler, _collective_mismatch, _hang_threshold_seconds,
 * ringwatch_gpu_hang_signature). Each source states, per communicator it watches, the kinds it
 * judges and its Verdicts (verdict.ts: logs/detect/communicator.ts, ras/communicator.ts,
 * inspector/communicator.ts); the merge knows no source. Pure: the same watches give the same result.
 *
 * The rules: a communicator is hung, a rank behind or a straggler if any source's verdict says so,
 * and 0 where a source judges it and none does; the evidence is every source's; the threshold is
 * that of the first source (in the order given) that states one; a mismatch is stated by the
 * sources that judge it; the GPUs of hung communicators that read spin or idle carry that signature.
 */
import type { CommunicatorWatch, LiveKind, LiveVerdict } from "./verdict.js";

/** Where a hang verdict comes from, as the `source` label of ringwatch_nccl_hang_evidence names it. */
export type HangEvidence = "coll_log" | "ras" | "gpu";

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
export function mergeVerdicts(watches: Iterable<CommunicatorWatch>): MergedVerdicts {
  const hang = new MaxSeries();
  const evidence = new MaxSeries();
  const behind = new MaxSeries();
  const straggler = new MaxSeries();
  const mismatch = new MaxSeries();
  const threshold = new MaxSeries();
  const signature = new MaxSeries();
  const suspect = new Set<string>();
  for (const w of watches) {
    const comm = { comm_id: w.comm_id };
    const judges = (kind: LiveKind): boolean => w.judges.includes(kind);
    const of = (kind: LiveKind): LiveVerdict[] => w.verdicts.filter((v) => v.kind === kind);
    const hung = of("hang_suspected")[0];
    if (w.suspect === true) suspect.add(w.comm_id);
    if (judges("hang_suspected")) hang.set(comm, hung !== undefined ? 1 : 0);
    if (judges("collective_mismatch")) mismatch.set(comm, of("collective_mismatch").length > 0 ? 1 : 0);
    if (w.thresholdMs !== undefined) threshold.setFirst(comm, w.thresholdMs / 1000);
    const behindRanks = new Set(of("rank_behind").flatMap((v) => v.ranks));
    const stragglerRanks = new Set(of("straggler").flatMap((v) => v.ranks));
    for (const rank of w.ranks) {
      const labels = { comm_id: w.comm_id, rank: String(rank) };
      if (judges("rank_behind")) behind.set(labels, behindRanks.has(rank) ? 1 : 0);
      if (judges("straggler")) straggler.set(labels, stragglerRanks.has(rank) ? 1 : 0);
    }
    if (hung === undefined) continue;
    for (const source of hung.evidence) evidence.set({ comm_id: w.comm_id, source }, 1);
    for (const g of hung.gpus ?? []) if (g.signature !== "busy") signature.set({ gpu: g.gpu, signature: g.signature }, 1);
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
