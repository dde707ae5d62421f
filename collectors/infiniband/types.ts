/**
 * One snapshot of the InfiniBand ports, whichever source produced it (sysfs or ibstat + perfquery).
 * Every value is optional: absent means "could not be read", never 0.
 */

export interface IbPort {
  port: number;
  /** Logical port state id (1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER). */
  state?: number;
  /** Physical port state id (1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest). */
  physState?: number;
  /** Signalling rate in bytes per second (Gb/s × 125,000,000, node_exporter's convention). */
  rateBytesPerSecond?: number;
  /** `InfiniBand` or `Ethernet` (RoCE). */
  linkLayer?: string;
  lid?: number;
  smLid?: number;
  /**
   * Raw values keyed by the sysfs file name under ports/<n>/counters (port_xmit_data and
   * port_rcv_data still in 4-byte words). Tools mode maps perfquery's names onto these keys.
   */
  counters: Record<string, number>;
  /** Raw values of ports/<n>/counters_ext (pre-4.5 kernels' 64-bit counters). */
  countersExt: Record<string, number>;
  /** Raw values of ports/<n>/hw_counters. */
  hwCounters: Record<string, number>;
  /**
   * Names in `counters` read from the fixed-width PortCounters attribute, where a counter stops at
   * its maximum instead of wrapping (the saturation hint looks at these only).
   */
  fixedWidth: string[];
  /** sysfs only: counter files that could not be read or parsed this time (N/A (no PMA), EINVAL, EACCES...). */
  unreadable?: number;
}

export interface IbDevice {
  name: string;
  firmwareVersion?: string;
  hcaType?: string;
  boardId?: string;
  /** `0x` + 16 hex digits, whichever form the source printed. */
  nodeGuid?: string;
  ports: IbPort[];
}

export function emptyPort(port: number): IbPort {
  return { port, counters: {}, countersExt: {}, hwCounters: {}, fixedWidth: [] };
}
