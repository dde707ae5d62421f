/**
 * How this node asks NCCL RAS (ras/schedule.ts, ras/peers.ts): its queries by result and reason, its
 * role for the job, the backoff, the decision for the job's NCCL version, whether a service listens,
 * and the checks of other nodes' agents. Recomputed at scrape time from the watch's snapshot. What
 * the reports say (ranks behind, dead processes) is ras/report-metrics.ts.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Sample } from "../../publish.js";
import type { RasSnapshot } from "./watch.js";
import { diagProblems } from "./parse-diag.js";

/** At most this many series of diagnostics problems. */
export const MAX_DIAG_SERIES = 64;

export class RasAskMetrics {
  private readonly queries: Counter<"result" | "reason">;
  private readonly role: Gauge<"comm_id" | "role">;
  private readonly backoff: Gauge;
  private readonly gate: Gauge<"nccl_version" | "decision" | "defect">;
  private readonly listening: Gauge;
  private readonly peerChecks: Counter<"result">;
  private readonly diagnostic: Gauge<"check" | "comm_id" | "detail" | "host">;
  private readonly diagTime: Gauge;
  private readonly switches: Counter<"to" | "result">;
  private readonly inspectorOn: Gauge;

  constructor(registry: Registry) {
    this.queries = counter(
      registry,
      "ringwatch_nccl_ras_queries_total",
      "Status queries to NCCL's RAS service, each a job-wide collection, by result (ok, unreachable: nothing listening; timeout; error; untrusted: a socket of no known rank or GPU process, nor root's, ignored) and reason (periodic: the job's querier on its timer, or a node's first query of a job; suspicion: local evidence of a hang or a PEER_DEAD event; takeover: this node became the querier; diagnostics).",
      ["result", "reason"],
    );
    this.role = gauge(
      registry,
      "ringwatch_nccl_ras_role",
      "1 for this node's role in asking NCCL RAS for the job whose largest communicator is comm_id: querier (asks on its timer), listener (asks on local suspicion only), undetermined (no report names the querier yet, or a text report and no log naming rank 0 here).",
      ["comm_id", "role"],
    );
    this.backoff = gauge(
      registry,
      "ringwatch_nccl_ras_backoff_seconds",
      "How long RAS is not asked after the last failures in a row (a timeout, a reset or an answer with no report): one interval, doubling, at most 600; 0 when none.",
      [],
    );
    this.gate = gauge(
      registry,
      "ringwatch_nccl_ras_version_gate",
      "1 for the decision on timed RAS queries for the job's NCCL version: periodic, or suspicion_only (a known RAS defect, named by defect, or unknown_version with nccl_version empty while no report or log names it; and no --collector.nccl.ras-poll-known-defective).",
      ["nccl_version", "decision", "defect"],
    );
    this.listening = gauge(
      registry,
      "ringwatch_nccl_ras_service_listening",
      "1 while a NCCL RAS service listens at --collector.nccl.ras-addr (seen in the kernel's socket tables, or by a bare connection where they do not show it), else 0.",
      [],
    );
    this.peerChecks = counter(
      registry,
      "ringwatch_nccl_ras_peer_checks_total",
      "Reads of the RAS querier's agent (/nccl/ras-role on the node ahead in the succession) by result: serving (it asks, with a fresh report), stale (it answers without serving), alive (an answer that cannot be read: auth, TLS), gone (refused, or no answer in 2 s).",
      ["result"],
    );
    this.diagnostic = gauge(
      registry,
      "ringwatch_nccl_ras_diagnostic",
      "1 for each problem NCCL RAS diagnostics (NCCL 2.31.2+) reported for the hang now suspected, asked once by the job's querier: check (gpu_inventory, cuda_driver, nvidia_driver, ecc, nvlink, nccl_env, rdma_topo, iommu, ats, xid, sxid, paths, other), the communicator, detail (the Xid or SXid number, the NCCL_* variable that differs, or incomplete: ranks that did not answer) and host (Xid, SXid).",
      ["check", "comm_id", "detail", "host"],
    );
    this.switches = counter(
      registry,
      "ringwatch_nccl_ras_inspector_switches_total",
      "NCCL Inspector switched job-wide through RAS (--collector.nccl.ras-inspector-switch, NCCL 2.31.2+): to on (a hang began) or off (the window ended, the hang ended, the agent stopped), by result: ok (NCCL answered OK), refused (another answer), failed (no answer). Off is sent again each interval until ok.",
      ["to", "result"],
    );
    this.inspectorOn = gauge(
      registry,
      "ringwatch_nccl_ras_inspector_on",
      "1 while this agent has switched NCCL Inspector on job-wide and not yet had it switched off (absent without --collector.nccl.ras-inspector-switch).",
      [],
    );
    this.diagTime = gauge(
      registry,
      "ringwatch_nccl_ras_diagnostics_timestamp_seconds",
      "Unix time of the RAS diagnostics answer behind ringwatch_nccl_ras_diagnostic (while the hang lasts).",
      [],
    );
  }

  publish(s: RasSnapshot): void {
    const problems = s.diagnostics === undefined ? [] : diagProblems(s.diagnostics.report).slice(0, MAX_DIAG_SERIES);
    publishGauge(
      this.diagnostic,
      problems.map((p) => ({ labels: { check: p.check, comm_id: p.commId ?? "", detail: p.detail ?? "", host: p.host ?? "" }, value: 1 })),
    );
    publishCounter(
      this.switches,
      [...s.inspectorSwitches].map(([key, n]) => {
        const [to = "", result = ""] = key.split("|");
        return { labels: { to, result }, value: n };
      }),
    );
    publishGauge(this.inspectorOn, s.inspectorOn === undefined ? [] : [{ labels: {}, value: s.inspectorOn ? 1 : 0 }]);
    publishGauge(this.diagTime, s.diagnostics === undefined ? [] : [{ labels: {}, value: s.diagnostics.atMs / 1000 }]);
    const queries: Sample[] = [];
    for (const [result, byReason] of s.queriesBy) for (const [reason, n] of byReason) queries.push({ labels: { result, reason }, value: n });
    publishCounter(this.queries, queries);
    publishGauge(this.role, [{ labels: { comm_id: s.job?.jobId ?? "", role: s.role }, value: 1 }]);
    publishGauge(this.backoff, [{ labels: {}, value: s.backoffMs / 1000 }]);
    publishGauge(
      this.gate,
      s.gate === undefined ? [] : [{ labels: { nccl_version: s.gate.version, decision: s.gate.decision, defect: s.gate.defect ?? "" }, value: 1 }],
    );
    publishGauge(this.listening, [{ labels: {}, value: s.listener === "listening" || s.listenerAccepts ? 1 : 0 }]);
    publishCounter(
      this.peerChecks,
      [...s.peerChecks].map(([result, n]) => ({ labels: { result }, value: n })),
    );
  }
}
