/**
 * The Flight Recorder series (flight-recorder/watch.ts): what the latest episode's dumps say, per
 * process group and rank, recomputed at scrape time. Bounded: at most MAX_FR_SERIES series each.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Sample } from "../../publish.js";
import type { FlightRecorderSnapshot } from "./watch.js";

export const MAX_FR_SERIES = 512;

export class FlightRecorderMetrics {
  private readonly last: Gauge<"process_group" | "rank" | "state">;
  private readonly behind: Gauge<"process_group" | "rank">;
  private readonly missing: Gauge<"process_group">;
  private readonly mismatch: Gauge<"process_group" | "kind">;
  private readonly dumpTime: Gauge;
  private readonly dumps: Counter<"result">;
  private readonly pokes: Counter<"result">;

  constructor(registry: Registry) {
    this.last = gauge(
      registry,
      "ringwatch_nccl_fr_last_collective",
      "The last collective (PyTorch's per-process-group sequence number) each rank enqueued, started and completed, by state, from the latest Flight Recorder dumps on this node.",
      ["process_group", "rank", "state"],
    );
    this.behind = gauge(
      registry,
      "ringwatch_nccl_fr_rank_behind",
      "1 for a rank whose Flight Recorder dump shows it never enqueued (or never completed) the collective the other ranks of its process group wait in.",
      ["process_group", "rank"],
    );
    this.missing = gauge(
      registry,
      "ringwatch_nccl_fr_missing_ranks",
      "Ranks of a process group with no readable Flight Recorder dump on this node (on another node, or they did not dump).",
      ["process_group"],
    );
    this.mismatch = gauge(
      registry,
      "ringwatch_nccl_fr_mismatch",
      "Collectives the ranks of a process group recorded differently at one sequence number, by torchfrtrace's class: op, size, dtype, state.",
      ["process_group", "kind"],
    );
    this.dumpTime = gauge(registry, "ringwatch_nccl_fr_last_dump_timestamp_seconds", "Unix time of the newest Flight Recorder dump read.", []);
    this.dumps = counter(
      registry,
      "ringwatch_nccl_fr_dumps_total",
      "Flight Recorder dump files read, by result: ok, unreadable (corrupt, truncated, not a dump), too_large (over 16 MiB), over_budget (over its reading budget, or the reader's heap or time).",
      ["result"],
    );
    this.pokes = counter(
      registry,
      "ringwatch_nccl_fr_pokes_total",
      "Writes to the ranks' debug-info pipes when a hang began, by result: ok, no_reader (the rank is gone), error.",
      ["result"],
    );
  }

  publish(s: FlightRecorderSnapshot): void {
    publishCounter(
      this.dumps,
      [...s.dumps].map(([result, n]) => ({ labels: { result }, value: n })),
    );
    publishCounter(
      this.pokes,
      [...s.pokes].map(([result, n]) => ({ labels: { result }, value: n })),
    );
    publishGauge(this.dumpTime, s.episodeMs !== undefined ? [{ labels: {}, value: s.episodeMs / 1000 }] : []);
    const last: Sample[] = [];
    const behind: Sample[] = [];
    const missing: Sample[] = [];
    const mismatch: Sample[] = [];
    for (const g of s.analysis?.groups ?? []) {
      const pg = g.name;
      for (const r of g.status) {
        const rank = String(r.rank);
        for (const [state, v] of [
          ["enqueued", r.lastEnqueued],
          ["started", r.lastStarted],
          ["completed", r.lastCompleted],
        ] as const) {
          if (v !== undefined && last.length < MAX_FR_SERIES) last.push({ labels: { process_group: pg, rank, state }, value: v });
        }
      }
      for (const r of g.behind?.ranks ?? []) if (behind.length < MAX_FR_SERIES) behind.push({ labels: { process_group: pg, rank: String(r) }, value: 1 });
      if (missing.length < MAX_FR_SERIES) missing.push({ labels: { process_group: pg }, value: g.missing.length });
      const kinds = new Map<string, number>();
      for (const m of g.mismatches) kinds.set(m.kind, (kinds.get(m.kind) ?? 0) + 1);
      for (const [kind, n] of kinds) if (mismatch.length < MAX_FR_SERIES) mismatch.push({ labels: { process_group: pg, kind }, value: n });
    }
    publishGauge(this.last, last);
    publishGauge(this.behind, behind);
    publishGauge(this.missing, missing);
    publishGauge(this.mismatch, mismatch);
  }
}
