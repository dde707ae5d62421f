/**
 * The port counters: sysfs file name → metric name (node_exporter's names under
 * ringwatch_infiniband_), scale, PortCounters width, and perfquery's name for the same field.
 */

export interface CounterDef {
  /** File name under ports/<n>/counters (or counters_ext). */
  file: string;
  /** Metric name without the ringwatch_infiniband_ prefix. */
  metric: string;
  help: string;
  /** port_xmit_data / port_rcv_data count 4-byte words. */
  scale: number;
}

function def(file: string, metric: string, help: string, scale = 1): CounterDef {
  return { file, metric, help, scale };
}

/** ports/<n>/counters/* */
export const PORT_COUNTERS: readonly CounterDef[] = [
  def("symbol_error", "symbol_error_total", "Minor link errors detected on one or more physical lanes (SymbolErrorCounter)."),
  def("link_downed", "link_downed_total", "Times the link error recovery failed and the link went down (LinkDownedCounter)."),
  def("link_error_recovery", "link_error_recovery_total", "Times the link error recovery process completed successfully (LinkErrorRecoveryCounter)."),
  def("port_rcv_errors", "port_errors_received_total", "Packets with an error received on the port (PortRcvErrors)."),
  def(
    "port_rcv_remote_physical_errors",
    "port_receive_remote_physical_errors_total",
    "Packets received marked with the EBP delimiter (PortRcvRemotePhysicalErrors).",
  ),
  def(
    "port_rcv_switch_relay_errors",
    "port_receive_switch_relay_errors_total",
    "Packets received that the switch could not forward (PortRcvSwitchRelayErrors).",
  ),
  def("port_xmit_discards", "port_discards_transmitted_total", "Outbound packets discarded because the port was down or congested (PortXmitDiscards)."),
  def("port_rcv_discards", "port_discards_received_total", "Inbound packets discarded because the port was down or congested."),
  def("port_xmit_constraint_errors", "port_constraint_errors_transmitted_total", "Packets not transmitted because of a constraint (PortXmitConstraintErrors)."),
  def("port_rcv_constraint_errors", "port_constraint_errors_received_total", "Received packets discarded because of a constraint (PortRcvConstraintErrors)."),
  def(
    "local_link_integrity_errors",
    "local_link_integrity_errors_total",
    "Times local physical errors exceeded the LocalPhyErrors threshold (LocalLinkIntegrityErrors).",
  ),
  def(
    "excessive_buffer_overrun_errors",
    "excessive_buffer_overrun_errors_total",
    "Times OverrunErrors consecutive flow-control periods each had a buffer overrun (ExcessiveBufferOverrunErrors).",
  ),
  def("VL15_dropped", "vl15_dropped_total", "Incoming VL15 (subnet management) packets dropped for lack of resources (VL15Dropped)."),
  def("port_xmit_wait", "port_transmit_wait_total", "Ticks during which the port had data to send but sent none (PortXmitWait)."),
  def("port_xmit_data", "port_data_transmitted_bytes_total", "Data octets transmitted on all VLs (PortXmitData × 4).", 4),
  def("port_rcv_data", "port_data_received_bytes_total", "Data octets received on all VLs (PortRcvData × 4).", 4),
  def("port_xmit_packets", "port_packets_transmitted_total", "Packets transmitted on all VLs, including errors (PortXmitPkts)."),
  def("port_rcv_packets", "port_packets_received_total", "Packets received on all VLs, including errors (PortRcvPkts)."),
  def("unicast_xmit_packets", "unicast_packets_transmitted_total", "Unicast packets transmitted, including errors (PortUnicastXmitPkts)."),
  def("unicast_rcv_packets", "unicast_packets_received_total", "Unicast packets received, including errors (PortUnicastRcvPkts)."),
  def("multicast_xmit_packets", "multicast_packets_transmitted_total", "Multicast packets transmitted, including errors (PortMulticastXmitPkts)."),
  def("multicast_rcv_packets", "multicast_packets_received_total", "Multicast packets received, including errors (PortMulticastRcvPkts)."),
];

/** ports/<n>/counters_ext/* (kernels before 4.5 kept the 64-bit counters here). */
export const LEGACY_COUNTERS: readonly CounterDef[] = [
  def("port_xmit_data_64", "legacy_data_transmitted_bytes_total", "Data octets transmitted (counters_ext/port_xmit_data_64 × 4).", 4),
  def("port_rcv_data_64", "legacy_data_received_bytes_total", "Data octets received (counters_ext/port_rcv_data_64 × 4).", 4),
  def("port_xmit_packets_64", "legacy_packets_transmitted_total", "Packets transmitted (counters_ext/port_xmit_packets_64)."),
  def("port_rcv_packets_64", "legacy_packets_received_total", "Packets received (counters_ext/port_rcv_packets_64)."),
  def("port_unicast_xmit_packets", "legacy_unicast_packets_transmitted_total", "Unicast packets transmitted (counters_ext)."),
  def("port_unicast_rcv_packets", "legacy_unicast_packets_received_total", "Unicast packets received (counters_ext)."),
  def("port_multicast_xmit_packets", "legacy_multicast_packets_transmitted_total", "Multicast packets transmitted (counters_ext)."),
  def("port_multicast_rcv_packets", "legacy_multicast_packets_received_total", "Multicast packets received (counters_ext)."),
];

/**
 * Width in bits of each field of the PortCounters attribute (IBA vol. 1, PerfMgt; the same table
 * the kernel's sysfs.c uses). These counters stop at 2^width - 1 instead of wrapping.
 */
export const PMA_WIDTH: Readonly<Record<string, number>> = {
  symbol_error: 16,
  link_error_recovery: 8,
  link_downed: 8,
  port_rcv_errors: 16,
  port_rcv_remote_physical_errors: 16,
  port_rcv_switch_relay_errors: 16,
  port_xmit_discards: 16,
  port_xmit_constraint_errors: 8,
  port_rcv_constraint_errors: 8,
  local_link_integrity_errors: 4,
  excessive_buffer_overrun_errors: 4,
  VL15_dropped: 16,
  port_xmit_data: 32,
  port_rcv_data: 32,
  port_xmit_packets: 32,
  port_rcv_packets: 32,
  port_xmit_wait: 32,
};

/** True when `value` sits at the maximum of the fixed-width PortCounters field `file`. */
export function isSaturated(file: string, value: number): boolean {
  const width = PMA_WIDTH[file];
  return width !== undefined && value === 2 ** width - 1;
}

/** perfquery field name → sysfs counter file name. Fields not listed (QP1Dropped...) are not exported. */
export const PERFQUERY_TO_SYSFS: Readonly<Record<string, string>> = {
  SymbolErrorCounter: "symbol_error",
  LinkErrorRecoveryCounter: "link_error_recovery",
  LinkDownedCounter: "link_downed",
  PortRcvErrors: "port_rcv_errors",
  PortRcvRemotePhysicalErrors: "port_rcv_remote_physical_errors",
  PortRcvSwitchRelayErrors: "port_rcv_switch_relay_errors",
  PortXmitDiscards: "port_xmit_discards",
  PortXmitConstraintErrors: "port_xmit_constraint_errors",
  PortRcvConstraintErrors: "port_rcv_constraint_errors",
  LocalLinkIntegrityErrors: "local_link_integrity_errors",
  ExcessiveBufferOverrunErrors: "excessive_buffer_overrun_errors",
  VL15Dropped: "VL15_dropped",
  PortXmitWait: "port_xmit_wait",
  PortXmitData: "port_xmit_data",
  PortRcvData: "port_rcv_data",
  PortXmitPkts: "port_xmit_packets",
  PortRcvPkts: "port_rcv_packets",
  PortUnicastXmitPkts: "unicast_xmit_packets",
  PortUnicastRcvPkts: "unicast_rcv_packets",
  PortMulticastXmitPkts: "multicast_xmit_packets",
  PortMulticastRcvPkts: "multicast_rcv_packets",
};

/** hw_counters entries that are settings, not counters (lifespan is the cache period in ms). */
export const HW_NOT_COUNTERS: ReadonlySet<string> = new Set(["lifespan"]);

/** Kernel counter names are plain identifiers; anything else is not exported as a label value. */
export const HW_COUNTER_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** At most this many hw_counters per port (the kernel's lists are well below it). */
export const HW_COUNTER_LIMIT = 256;
