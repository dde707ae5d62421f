/**
 * The kmsg collector's series. Counters count what ringwatch read since it started (a restart
 * starts them at 0 and reads no record twice); the last-seen gauges hold the kernel's time of the
 * newest event. Label sets are bounded: at most MAX_EVENT_SERIES across the event families, past
 * which events are counted in ringwatch_kmsg_events_dropped_total.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge } from "../publish.js";

export const MAX_EVENT_SERIES = 1024;

export type KmsgSource = "kmsg" | "journal";

export class KmsgMetrics {
  readonly xid: Counter<"gpu" | "xid">;
  readonly xidLast: Gauge<"gpu" | "xid">;
  readonly xidInfo: Gauge<"xid" | "meaning" | "cause" | "action">;
  readonly recovery: Gauge<"gpu">;
  readonly sxid: Counter<"nvswitch" | "sxid" | "fatality">;
  readonly sxidLast: Gauge<"nvswitch" | "sxid" | "fatality">;
  readonly nic: Counter<"device" | "event">;
  readonly gpuPcie: Counter<"gpu" | "aer_severity">;
  readonly records: Counter;
  readonly lost: Counter;
  readonly dropped: Counter;
  readonly positionFailures: Counter;
  private readonly source: Gauge<"source">;
  private readonly seen = new Set<string>();

  constructor(registry: Registry) {
    this.xid = counter(registry, "ringwatch_gpu_xid_errors_total", "NVIDIA driver Xid errors in the kernel log, by GPU (nvidia-smi index) and Xid code.", [
      "gpu",
      "xid",
    ]);
    this.xidLast = gauge(
      registry,
      "ringwatch_gpu_xid_last_timestamp_seconds",
      "Unix time of the newest Xid of this code on this GPU (the kernel's time of the message).",
      ["gpu", "xid"],
    );
    this.xidInfo = gauge(
      registry,
      "ringwatch_gpu_xid_info",
      "1 for each Xid code seen since ringwatch started: what NVIDIA's catalogue says it means, whose fault it usually is (cause) and what to do (action: none, restart_job, reset_gpu, reboot_node, drain_node; unknown for a code not in the catalogue).",
      ["xid", "meaning", "cause", "action"],
    );
    this.recovery = gauge(
      registry,
      "ringwatch_gpu_recovery_action",
      "The recovery action the NVIDIA driver last asked for (Xid 154, drivers 570+): 1 GPU reset required, 2 node reboot required, 3 drain P2P, 4 drain and reset; 0 once it says none again. Kept across restarts in --collector.kmsg.state-file.",
      ["gpu"],
    );
    this.sxid = counter(
      registry,
      "ringwatch_nvswitch_sxid_errors_total",
      "NVSwitch SXid errors in the kernel log, by switch (N of nvidia-nvswitchN), SXid code and fatality (fatal, non_fatal).",
      ["nvswitch", "sxid", "fatality"],
    );
    this.sxidLast = gauge(
      registry,
      "ringwatch_nvswitch_sxid_last_timestamp_seconds",
      "Unix time of the newest SXid of this code and fatality on this switch.",
      ["nvswitch", "sxid", "fatality"],
    );
    this.nic = counter(
      registry,
      "ringwatch_nic_driver_events_total",
      "HCA driver (mlx5_core, efa) events in the kernel log, by RDMA device (or PCI address) and event.",
      ["device", "event"],
    );
    this.gpuPcie = counter(
      registry,
      "ringwatch_gpu_pcie_bus_errors_total",
      "PCIe bus errors (AER) the kernel reported for a GPU, by AER severity (corrected, uncorrected).",
      ["gpu", "aer_severity"],
    );
    this.records = counter(registry, "ringwatch_kmsg_records_total", "Kernel log records read.", []);
    this.lost = counter(registry, "ringwatch_kmsg_records_lost_total", "Times the kernel overwrote /dev/kmsg records before ringwatch read them (EPIPE).", []);
    this.dropped = counter(
      registry,
      "ringwatch_kmsg_events_dropped_total",
      `Events not counted because their label set would exceed ${MAX_EVENT_SERIES} series.`,
      [],
    );
    this.positionFailures = counter(
      registry,
      "ringwatch_kmsg_position_save_failures_total",
      "Failed writes of the read position (--collector.kmsg.state-file); after a restart, records since the last good write are read again.",
      [],
    );
    this.source = gauge(registry, "ringwatch_kmsg_source", "1 for the kernel log source being read: kmsg (/dev/kmsg) or journal (journalctl -k).", ["source"]);
  }

  setSource(s: KmsgSource | undefined): void {
    this.source.reset();
    if (s !== undefined) this.source.set({ source: s }, 1);
  }

  /** True when this label set may be published (already is, or fits under the cap). */
  admit(key: string): boolean {
    if (this.seen.has(key)) return true;
    if (this.seen.size >= MAX_EVENT_SERIES) {
      this.dropped.inc();
      return false;
    }
    this.seen.add(key);
    return true;
  }
}
