/**
 * The NCCL Inspector series (inspector/watch.ts), recomputed at scrape time from the feed's
 * snapshot: counters while a communicator is known, gauges only while it is active (a record in
 * the last 2 minutes), so an ended job's last values do not linger. ringwatch_nccl_straggler is
 * set in metrics.ts, from this and the COLL lines.
 *
 * The series budget (docs/metrics.md): per active communicator one bus bandwidth series (its
 * largest message size), and the bandwidth drop only where it fires; per rank only for the
 * communicators whose ranks the nccl collector shows (suspect, or --collector.nccl.rank-series=always).
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Sample } from "../../publish.js";
import type { InspectorCommSnapshot, InspectorSnapshot, SizeBucket } from "./types.js";
import { SIZE_BUCKETS } from "./size-bucket.js";

export class InspectorMetrics {
  private readonly collectives: Counter<"comm_id" | "rank">;
  private readonly p2p: Counter<"comm_id" | "rank">;
  private readonly lastSeq: Gauge<"comm_id" | "rank">;
  private readonly exec: Gauge<"comm_id" | "rank">;
  private readonly busbw: Gauge<"comm_id" | "rank" | "size_bucket">;
  private readonly delay: Gauge<"comm_id" | "rank">;
  private readonly drop: Gauge<"comm_id">;
  private readonly commBusbw: Gauge<"comm_id" | "size_bucket">;
  private readonly records: Counter;
  private readonly skipped: Counter<"reason">;

  constructor(registry: Registry) {
    this.collectives = counter(
      registry,
      "ringwatch_nccl_inspector_collectives_total",
      "Collectives NCCL Inspector recorded as completed for this rank, since ringwatch began reading (before NCCL 2.30 a sample of them).",
      ["comm_id", "rank"],
    );
    this.p2p = counter(registry, "ringwatch_nccl_inspector_p2p_total", "Point-to-point operations NCCL Inspector recorded for this rank (NCCL 2.30+).", [
      "comm_id",
      "rank",
    ]);
    this.lastSeq = gauge(
      registry,
      "ringwatch_nccl_inspector_last_seq",
      "The sequence number (coll_sn, per collective type) of the rank's last Inspector record.",
      ["comm_id", "rank"],
    );
    this.exec = gauge(
      registry,
      "ringwatch_nccl_inspector_exec_seconds",
      "Median GPU-timed execution time of the rank's recent collectives (any size); a rank that arrives last waits least.",
      ["comm_id", "rank"],
    );
    this.busbw = gauge(
      registry,
      "ringwatch_nccl_inspector_busbw_bytes_per_second",
      "Median bus bandwidth of the rank's recent GPU-timed collectives, by message size bucket.",
      ["comm_id", "rank", "size_bucket"],
    );
    this.delay = gauge(
      registry,
      "ringwatch_nccl_straggler_delay_seconds",
      "How much later than the other ranks of its communicator on this node the rank arrives (median over common collectives, from NCCL Inspector's GPU times; negative: earlier).",
      ["comm_id", "rank"],
    );
    this.drop = gauge(
      registry,
      "ringwatch_nccl_bandwidth_drop",
      "1 while the communicator's bus bandwidth (NCCL Inspector) stays under half its own recent level for the same collective and message size.",
      ["comm_id"],
    );
    this.commBusbw = gauge(
      registry,
      "ringwatch_nccl_comm_busbw_bytes_per_second",
      "Median over this node's ranks of their median bus bandwidth (NCCL Inspector's GPU timings) in the largest message-size bucket the communicator's recent collectives reached.",
      ["comm_id", "size_bucket"],
    );
    this.records = counter(registry, "ringwatch_nccl_inspector_records_total", "NCCL Inspector records read.", []);
    this.skipped = counter(
      registry,
      "ringwatch_nccl_inspector_records_skipped_total",
      "NCCL Inspector lines not counted, by reason: garbage, duplicate, comm_limit, rank_limit.",
      ["reason"],
    );
  }

  /** showsRanks: whether a communicator's per-rank series are shown (NcclMetrics.publish). */
  publish(s: InspectorSnapshot, showsRanks: (commId: string) => boolean): void {
    const coll: Sample[] = [];
    const p2p: Sample[] = [];
    const seq: Sample[] = [];
    const exec: Sample[] = [];
    const bw: Sample[] = [];
    const delay: Sample[] = [];
    const drop: Sample[] = [];
    const commBw: Sample[] = [];
    for (const c of s.comms) {
      if (c.active) {
        const bw = commBusbw(c);
        if (bw !== undefined) commBw.push({ labels: { comm_id: c.commId, size_bucket: bw.bucket }, value: bw.bytesPerSecond });
        if (c.bandwidthDrop) drop.push({ labels: { comm_id: c.commId }, value: 1 });
      }
      if (!showsRanks(c.commId)) continue;
      for (const r of c.ranks) {
        const labels = { comm_id: c.commId, rank: String(r.rank) };
        coll.push({ labels, value: r.collectives });
        if (r.p2p > 0) p2p.push({ labels, value: r.p2p });
        if (!c.active) continue;
        if (r.lastSeq !== undefined) seq.push({ labels, value: r.lastSeq });
        if (r.execSeconds !== undefined) exec.push({ labels, value: r.execSeconds });
        for (const b of r.busBw) bw.push({ labels: { ...labels, size_bucket: b.bucket }, value: b.bytesPerSecond });
        if (r.delaySeconds !== undefined) delay.push({ labels, value: r.delaySeconds });
      }
    }
    publishCounter(this.collectives, coll);
    publishCounter(this.p2p, p2p);
    publishGauge(this.lastSeq, seq);
    publishGauge(this.exec, exec);
    publishGauge(this.busbw, bw);
    publishGauge(this.delay, delay);
    publishGauge(this.drop, drop);
    publishGauge(this.commBusbw, commBw);
    publishCounter(this.records, [{ labels: {}, value: s.stats.records }]);
    publishCounter(
      this.skipped,
      (Object.entries(s.stats.skipped) as [string, number][]).map(([reason, n]) => ({ labels: { reason }, value: n })),
    );
  }
}

/** The median over the ranks of their medians, in the largest size bucket any rank has. */
export function commBusbw(c: InspectorCommSnapshot): { bucket: SizeBucket; bytesPerSecond: number } | undefined {
  let top = -1;
  for (const r of c.ranks) for (const b of r.busBw) top = Math.max(top, SIZE_BUCKETS.indexOf(b.bucket));
  const bucket = SIZE_BUCKETS[top];
  if (bucket === undefined) return undefined;
  const values = c.ranks.flatMap((r) => r.busBw.filter((b) => b.bucket === bucket).map((b) => b.bytesPerSecond)).sort((a, b) => a - b);
  const mid = values.length >> 1;
  const v = values.length % 2 === 1 ? values[mid] : ((values[mid - 1] ?? 0) + (values[mid] ?? 0)) / 2;
  return v === undefined ? undefined : { bucket, bytesPerSecond: v };
}
