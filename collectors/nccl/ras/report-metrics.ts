/**
 * What NCCL RAS's reports say, as series: the last report's time, the ranks behind and mismatches of
 * hung communicators on any node of the job (the querier publishes them job-wide), the dead
 * processes, the monitor's events and the findings by kind. Recomputed at scrape time from the
 * watch's snapshot and the verdicts ras/verdict.ts draws from it. How RAS is asked is ras/metrics.ts.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Sample } from "../../publish.js";
import { MAX_RAS_SERIES, type RasSnapshot } from "./watch.js";
import type { RasCommVerdict } from "./verdict.js";

/** What RAS adds to a scrape: the last answer and the verdicts of this node's communicators. */
export interface RasPublish {
  snapshot: RasSnapshot;
  verdicts: readonly RasCommVerdict[];
}

export class RasReportMetrics {
  private readonly lastReport: Gauge;
  private readonly behind: Gauge<"comm_id" | "rank" | "process">;
  private readonly mismatch: Gauge<"comm_id">;
  private readonly dead: Gauge<"process">;
  private readonly findings: Gauge<"kind">;
  private readonly events: Counter<"event">;
  private readonly monitor: Gauge;

  constructor(registry: Registry) {
    this.lastReport = gauge(registry, "ringwatch_nccl_ras_last_report_timestamp_seconds", "Unix time of the last status report NCCL's RAS service gave.", []);
    this.behind = gauge(
      registry,
      "ringwatch_nccl_ras_rank_behind",
      "1 for a rank of a hung communicator, on any node of the job, that NCCL RAS shows at a lower count of some collective type and a higher count of none, or whose process it cannot reach; process is node:pid.",
      ["comm_id", "rank", "process"],
    );
    this.mismatch = gauge(
      registry,
      "ringwatch_nccl_ras_collective_mismatch",
      "1 for a hung communicator whose ranks NCCL RAS shows issued different collectives (more of one type, fewer of another), or where only the ranks ahead are listed.",
      ["comm_id"],
    );
    this.dead = gauge(
      registry,
      "ringwatch_nccl_ras_dead_process",
      "1 for a job process (node:pid) that NCCL RAS's last report calls dead, or that a PEER_DEAD monitor event named (at once, NCCL 2.29+): it died or its node is cut off.",
      ["process"],
    );
    this.events = counter(
      registry,
      "ringwatch_nccl_ras_monitor_events_total",
      "Events NCCL RAS's monitor mode pushed (NCCL 2.29+) by event: PEER_DEAD, PEER_NEW, other.",
      ["event"],
    );
    this.monitor = gauge(
      registry,
      "ringwatch_nccl_ras_monitor_subscribed",
      "1 while ringwatch follows NCCL RAS's monitor events (NCCL 2.29+; 0 with no job, or an older NCCL).",
      [],
    );
    this.findings = gauge(
      registry,
      "ringwatch_nccl_ras_findings",
      "Findings in NCCL RAS's last report about hung communicators and dead processes, by the kind `ringwatch analyze` gives them.",
      ["kind"],
    );
  }

  publish({ snapshot, verdicts }: RasPublish): void {
    publishGauge(this.lastReport, snapshot.lastReportMs !== undefined ? [{ labels: {}, value: snapshot.lastReportMs / 1000 }] : []);
    const behind: Sample[] = [];
    const mism: Sample[] = [];
    const hung = new Set<string>();
    for (const v of verdicts) {
      if (!v.hang) continue;
      hung.add(v.commId);
      if (v.crossed || (v.behind.length === 0 && v.waitingIn !== undefined)) mism.push({ labels: { comm_id: v.commId }, value: 1 });
      for (const r of v.behind) {
        if (behind.length >= MAX_RAS_SERIES) break;
        behind.push({
          labels: { comm_id: v.commId, rank: String(r.rank), process: r.pid !== undefined && r.node !== undefined ? `${r.node}:${r.pid}` : "" },
          value: 1,
        });
      }
    }
    publishGauge(this.behind, behind);
    publishGauge(this.mismatch, mism.slice(0, MAX_RAS_SERIES));
    publishGauge(
      this.dead,
      snapshot.dead.map((process) => ({ labels: { process }, value: 1 })),
    );
    publishCounter(
      this.events,
      [...snapshot.events].map(([event, n]) => ({ labels: { event }, value: n })),
    );
    publishGauge(this.monitor, [{ labels: {}, value: snapshot.monitor === "subscribed" ? 1 : 0 }]);
    const kinds = new Map<string, number>();
    for (const f of snapshot.findings) if (f.comm_id === null || hung.has(f.comm_id)) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
    publishGauge(
      this.findings,
      [...kinds].map(([kind, n]) => ({ labels: { kind }, value: n })),
    );
  }
}
