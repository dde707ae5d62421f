/**
 * The live PyTorch verdicts (logs/pytorch/verdict.ts) and the DETAIL mismatch counter, recomputed at
 * scrape time. Bounded: at most MAX_PT_SERIES series each.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Sample } from "../../../publish.js";
import type { PytorchVerdict } from "./verdict.js";
import type { PytorchLog } from "./log.js";

export const MAX_PT_SERIES = 512;

export class PytorchMetrics {
  private readonly hang: Gauge<"process_group">;
  private readonly behind: Gauge<"process_group" | "rank">;
  private readonly mismatch: Gauge<"process_group">;
  private readonly work: Gauge<"process_group">;
  private readonly mismatches: Counter<"rank">;

  constructor(registry: Registry) {
    this.hang = gauge(
      registry,
      "ringwatch_pytorch_hang_suspected",
      "1 for a process group that PyTorch's lines in the followed logs (last 15 minutes) say hangs: a watchdog timeout, every rank in one work none completes, a heartbeat timeout or stuck watchdog, a monitoredBarrier failure, ranks behind or in different collectives.",
      ["process_group"],
    );
    this.behind = gauge(
      registry,
      "ringwatch_pytorch_rank_behind",
      "1 for a rank that PyTorch's lines (last 15 minutes) show behind the others of its process group: it never enqueued the work they wait in, or did not complete it while they did.",
      ["process_group", "rank"],
    );
    this.mismatch = gauge(
      registry,
      "ringwatch_pytorch_collective_mismatch",
      "1 for a process group whose ranks PyTorch's lines (last 15 minutes) show in different collectives at one sequence number (watchdog OpTypes, or NumelIn where every rank passes as many, or TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints).",
      ["process_group"],
    );
    this.work = gauge(
      registry,
      "ringwatch_pytorch_hang_work_seq",
      "PyTorch's sequence number of the work a hung process group is stuck at (the oldest work some rank has not completed, or the one ranks behind never enqueued), where the lines give it.",
      ["process_group"],
    );
    this.mismatches = counter(
      registry,
      "ringwatch_pytorch_collective_mismatches_total",
      "TORCH_DISTRIBUTED_DEBUG=DETAIL 'Detected mismatch between collectives' errors in the followed logs, by the rank that reported them.",
      ["rank"],
    );
  }

  publish(verdicts: readonly PytorchVerdict[], pt: PytorchLog): void {
    const hang = new Map<string, number>();
    const behind = new Map<string, Sample>();
    const mismatch = new Set<string>();
    const work = new Map<string, number>();
    for (const v of verdicts) {
      const pg = v.processGroup;
      if (hang.size < MAX_PT_SERIES) hang.set(pg, 1);
      if (v.kind === "rank_behind")
        for (const rank of v.ranks)
          if (behind.size < MAX_PT_SERIES) behind.set(`${pg}|${rank}`, { labels: { process_group: pg, rank: String(rank) }, value: 1 });
      if (v.kind === "collective_mismatch" && mismatch.size < MAX_PT_SERIES) mismatch.add(pg);
      // The most specific number: that of ranks behind, else of the hang, else any.
      if (v.seq !== undefined && (v.kind === "rank_behind" || !work.has(pg)) && work.size < MAX_PT_SERIES) work.set(pg, v.seq);
    }
    publishGauge(
      this.hang,
      [...hang].map(([pg]) => ({ labels: { process_group: pg }, value: 1 })),
    );
    publishGauge(this.behind, behind.values());
    publishGauge(
      this.mismatch,
      [...mismatch].map((pg) => ({ labels: { process_group: pg }, value: 1 })),
    );
    publishGauge(
      this.work,
      [...work].map(([pg, seq]) => ({ labels: { process_group: pg }, value: seq })),
    );
    publishCounter(
      this.mismatches,
      [...pt.mismatchCounts].map(([rank, n]) => ({ labels: { rank }, value: n })),
    );
  }
}
