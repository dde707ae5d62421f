/**
 * The NCCL collector's series. Everything is recomputed at scrape time from the tracker and the
 * verdicts (cheap: bounded state), so retired ranks and ended hangs disappear at once. The hang,
 * behind, straggler, mismatch, threshold and GPU signature series are the sources' verdicts merged
 * by verdict/merge.ts; which of them a scrape shows is series.ts (the series budget). What RAS's
 * reports say is ras/report-metrics.ts.
 */
import { Gauge, type Counter, type Registry } from "prom-client";
import type { Logger } from "pino";
import type { CommVerdict } from "./logs/detect/types.js";
import { counter, gauge, publishCounter, publishGauge } from "../publish.js";
import type { FollowerStats } from "../follow/types.js";
import type { RasPublish } from "./ras/report-metrics.js";
import type { InspectorSnapshot } from "./inspector/types.js";
import { communicatorVerdicts as inspectorVerdicts } from "./inspector/communicator.js";
import { communicatorVerdicts as logsVerdicts } from "./logs/detect/communicator.js";
import { communicatorVerdicts as rasCommunicatorVerdicts } from "./ras/communicator.js";
import { mergeVerdicts } from "./verdict/merge.js";

import { DEFAULT_SERIES, ncclSeries, type NcclSeries, type NodePidOf, type SeriesOptions } from "./series.js";
import type { Tracker } from "./logs/state/tracker.js";

export class NcclMetrics {
  readonly hang: Gauge<"comm_id">;
  private readonly progress: Gauge<"comm_id" | "rank">;
  private readonly slowest: Gauge<"comm_id">;
  private readonly lastProgress: Gauge<"comm_id" | "rank">;
  private readonly info: Gauge<"comm_id" | "rank" | "nranks" | "pid" | "host_pid" | "cuda_dev" | "bus_id" | "nccl_version">;
  private readonly behind: Gauge<"comm_id" | "rank">;
  private readonly straggler: Gauge<"comm_id" | "rank">;
  private readonly mismatch: Gauge<"comm_id">;
  private readonly threshold: Gauge<"comm_id">;
  private readonly evidence: Gauge<"comm_id" | "source">;
  private readonly transport: Gauge<"pid" | "host_pid" | "net" | "gdr">;
  private readonly netDevice: Gauge<"pid" | "host_pid" | "device" | "port">;
  private readonly seriesDropped: Gauge;
  private readonly warnings: Counter<"kind">;
  private readonly watchdog: Counter<"rank" | "op_type">;
  private readonly hangSigns: Counter<"rank" | "sign">;
  private readonly signature: Gauge<"gpu" | "signature">;
  private readonly files: Gauge;
  private readonly lines: Counter;
  private readonly bytes: Counter;
  private readonly tooLong: Counter;
  private readonly truncations: Counter;
  private readonly readErrors: Counter;
  private readonly filesDropped: Counter;
  private readonly commsDropped: Counter;
  private readonly unresolved: Counter;

  /** Whether the last scrape left series out (logged once per stretch). */
  private dropping = false;

  constructor(
    registry: Registry,
    collect: () => void,
    private options: SeriesOptions = DEFAULT_SERIES,
    private readonly log?: Logger,
    /** Each process's pid on the node (the host_pid label); none known by default. */
    private readonly nodePid: NodePidOf = () => undefined,
  ) {
    // Registered first: prom-client reads metrics in registration order, so this collect hook
    // refreshes every NCCL series before any of them is read.
    this.hang = new Gauge({
      name: "ringwatch_nccl_hang_suspected",
      help: "1 while this communicator, with a live rank on this node, has made no progress for the hang threshold, by any evidence (ringwatch_nccl_hang_evidence; docs/nccl.md).",
      labelNames: ["comm_id"],
      registers: [registry],
      collect,
    });
    this.behind = gauge(
      registry,
      "ringwatch_nccl_rank_behind",
      "1 for a rank on this node that never entered the collective the other ranks of its hung communicator wait in No series for the others.",
      ["comm_id", "rank"],
    );
    this.evidence = gauge(
      registry,
      "ringwatch_nccl_hang_evidence",
      "1 for each source that holds a hang verdict: coll_log (COLL lines went silent), ras (NCCL RAS counts stood still), gpu (the local GPUs spin in NCCL).",
      ["comm_id", "source"],
    );
    this.straggler = gauge(
      registry,
      "ringwatch_nccl_straggler",
      "1 for a rank surely last, by a delay that matters against the interval between collectives, at >= 80 % of the communicator's recent collectives while the job still moves (from COLL lines, or from NCCL Inspector's GPU times: ringwatch_nccl_straggler_delay_seconds).",
      ["comm_id", "rank"],
    );
    this.mismatch = gauge(
      registry,
      "ringwatch_nccl_collective_mismatch",
      "1 when ranks of this communicator issued different collectives at the same sequence index, or NCCL warned of a mismatch. No series otherwise.",
      ["comm_id"],
    );
    this.threshold = gauge(
      registry,
      "ringwatch_nccl_hang_threshold_seconds",
      "Silence after which this communicator counts as hung: the configured threshold stretched by its recent gaps.",
      ["comm_id"],
    );
    this.slowest = gauge(
      registry,
      "ringwatch_nccl_comm_slowest_rank_progress",
      "Collectives the slowest rank of this communicator on this node has entered: NCCL's opCount + 1 where the communicator numbers its operations, else the COLL lines counted (single-node communicators from NCCL 2.27). Compared across nodes by ringwatch:nccl_node_lag:cross_node.",
      ["comm_id"],
    );
    this.progress = gauge(
      registry,
      "ringwatch_nccl_rank_progress",
      "Collectives this rank has entered, as ringwatch_nccl_comm_slowest_rank_progress counts them. Only while its communicator is suspect (docs/metrics.md, NCCL series budget).",
      ["comm_id", "rank"],
    );
    this.lastProgress = gauge(
      registry,
      "ringwatch_nccl_rank_last_progress_timestamp_seconds",
      "Unix time of this rank's last collective (COLL line). Only while its communicator is suspect.",
      ["comm_id", "rank"],
    );
    this.info = gauge(
      registry,
      "ringwatch_nccl_rank_info",
      "Always 1: identity of a rank of a communicator on this node; pid as its process logged it, host_pid its pid on the node (empty until found there). Only while its communicator is suspect.",
      ["comm_id", "rank", "nranks", "pid", "host_pid", "cuda_dev", "bus_id", "nccl_version"],
    );
    this.transport = gauge(
      registry,
      "ringwatch_nccl_process_transport_info",
      "Always 1: the network this NCCL rank process uses between nodes (IB, RoCE, Socket, none, unknown) and GPUDirect RDMA (enabled, disabled, n/a, unknown).",
      ["pid", "host_pid", "net", "gdr"],
    );
    this.netDevice = gauge(
      registry,
      "ringwatch_nccl_process_net_device_info",
      "Always 1: an HCA port (device, port as ringwatch_infiniband_* label them) this NCCL rank process sends over: those its channel lines go through (via NET/IB/<n>), else every one its NET/IB Using line lists.",
      ["pid", "host_pid", "device", "port"],
    );
    this.seriesDropped = gauge(
      registry,
      "ringwatch_nccl_series_dropped",
      "Series of communicators and ranks left out of the last scrape by --collector.nccl.max-series (logged once when it starts).",
      [],
    );
    this.warnings = counter(registry, "ringwatch_nccl_warnings_total", "NCCL WARN lines by class.", ["kind"]);
    this.watchdog = counter(
      registry,
      "ringwatch_pytorch_watchdog_timeouts_total",
      "PyTorch ProcessGroupNCCL watchdog collective timeouts by rank and op type.",
      ["rank", "op_type"],
    );
    this.hangSigns = counter(
      registry,
      "ringwatch_pytorch_hang_signs_total",
      "PyTorch ProcessGroupNCCL hang signs by rank and sign: heartbeat_timeout (Heartbeat monitor timed out), watchdog_stuck (watchdog got stuck for N seconds), dump_signal (a Flight Recorder dump signal received).",
      ["rank", "sign"],
    );
    this.signature = gauge(
      registry,
      "ringwatch_gpu_hang_signature",
      "1 for the GPU of a rank of a hung communicator, labelled with what it reads: spin (~100 % SM at low power) or idle (~0 %).",
      ["gpu", "signature"],
    );
    this.files = gauge(registry, "ringwatch_nccl_log_files", "Log files followed.", []);
    this.lines = counter(registry, "ringwatch_nccl_log_lines_total", "Log lines read.", []);
    this.bytes = counter(registry, "ringwatch_nccl_log_bytes_total", "Log bytes read.", []);
    this.tooLong = counter(registry, "ringwatch_nccl_log_lines_too_long_total", "Lines skipped for exceeding the line length cap.", []);
    this.truncations = counter(registry, "ringwatch_nccl_log_truncations_total", "Log files found truncated (copytruncate) and read again from the start.", []);
    this.readErrors = counter(
      registry,
      "ringwatch_nccl_log_read_errors_total",
      "Failed reads of log files and directories (e.g. EACCES); each is logged and retried.",
      [],
    );
    this.filesDropped = counter(registry, "ringwatch_nccl_log_files_dropped_total", "Log files not followed because of the file cap.", []);
    this.commsDropped = counter(
      registry,
      "ringwatch_nccl_communicators_dropped_total",
      "Communicators not tracked because of --collector.nccl.max-communicators.",
      [],
    );
    this.unresolved = counter(
      registry,
      "ringwatch_nccl_unresolved_collectives_total",
      "COLL lines whose communicator's Init line was never seen (not attributed to a comm_id).",
      [],
    );
  }

  /** Returns whether a communicator's per-rank series are shown (NCCL Inspector's follow it). */
  publish(
    t: Tracker,
    verdicts: readonly CommVerdict[],
    stats: FollowerStats | undefined,
    ras?: RasPublish,
    inspector?: InspectorSnapshot,
  ): (commId: string) => boolean {
    // Verdicts of the logs, RAS and Inspector, merged per communicator (and rank): 1 if any says so.
    const merged = mergeVerdicts([...logsVerdicts(verdicts, t), ...rasCommunicatorVerdicts(ras?.verdicts ?? []), ...inspectorVerdicts(inspector)]);
    const s = ncclSeries(
      t,
      merged,
      { verdicts: ras?.verdicts ?? [], ...(ras?.snapshot.report?.version !== undefined ? { version: ras.snapshot.report.version } : {}) },
      this.options,
      this.nodePid,
    );
    publishGauge(this.hang, s.hang);
    publishGauge(this.threshold, s.threshold);
    publishGauge(this.slowest, s.slowest);
    publishGauge(this.evidence, s.evidence);
    publishGauge(this.mismatch, s.mismatch);
    publishGauge(this.behind, s.behind);
    publishGauge(this.straggler, s.straggler);
    publishGauge(this.info, s.info);
    publishGauge(this.progress, s.progress);
    publishGauge(this.lastProgress, s.lastProgress);
    publishGauge(this.transport, s.transport);
    publishGauge(this.netDevice, s.netDevice);
    publishGauge(this.seriesDropped, [{ labels: {}, value: s.dropped }]);
    this.onDropped(s);
    publishGauge(this.signature, [...merged.signature.values()]);
    publishCounter(
      this.warnings,
      [...t.warningCounts].map(([kind, n]) => ({ labels: { kind }, value: n })),
    );
    publishCounter(
      this.watchdog,
      [...t.pt.watchdogCounts.values()].map((w) => ({ labels: { rank: w.rank, op_type: w.opType }, value: w.count })),
    );
    publishCounter(
      this.hangSigns,
      [...t.pt.hangSignCounts.values()].map((h) => ({ labels: { rank: h.rank, sign: h.sign }, value: h.count })),
    );
    publishCounter(this.commsDropped, [{ labels: {}, value: t.droppedComms }]);
    let unresolved = 0;
    for (const p of t.processes.values()) unresolved += p.unresolvedColl;
    publishCounter(this.unresolved, [{ labels: {}, value: unresolved }]);
    if (stats) {
      publishGauge(this.files, [{ labels: {}, value: stats.files }]);
      publishCounter(this.lines, [{ labels: {}, value: stats.linesRead }]);
      publishCounter(this.bytes, [{ labels: {}, value: stats.bytesRead }]);
      publishCounter(this.tooLong, [{ labels: {}, value: stats.linesTooLong }]);
      publishCounter(this.truncations, [{ labels: {}, value: stats.truncations }]);
      publishCounter(this.readErrors, [{ labels: {}, value: stats.readErrors }]);
      publishCounter(this.filesDropped, [{ labels: {}, value: stats.filesDropped }]);
    }
    const always = this.options.rankSeries === "always";
    return (commId) => always || s.shownComms.has(commId);
  }

  /** --collector.nccl.rank-series and --collector.nccl.max-series, changed on SIGHUP. */
  configure(options: SeriesOptions): void {
    this.options = options;
  }

  private onDropped(s: NcclSeries): void {
    if (s.dropped > 0 && !this.dropping) {
      this.log?.warn(
        { dropped: s.dropped, maxSeries: this.options.maxSeries, communicators: s.droppedComms.slice(0, 10), communicatorsCut: s.droppedComms.length },
        "NCCL series over --collector.nccl.max-series: the least urgent communicators' and ranks' series are left out (ringwatch_nccl_series_dropped)",
      );
    } else if (s.dropped === 0 && this.dropping) this.log?.info({ maxSeries: this.options.maxSeries }, "NCCL series within --collector.nccl.max-series again");
    this.dropping = s.dropped > 0;
  }
}
