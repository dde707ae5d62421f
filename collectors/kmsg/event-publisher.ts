/**
 * One kernel event in, its series out: an Xid (its count, its time, the catalogue's verdict and one
 * warning line), an SXid (a warning line when fatal), an HCA driver event or a GPU PCIe error,
 * each named by device-names.ts and admitted under the label-set bound (metrics.ts). An Xid that
 * changes the driver's recovery action sets its gauge and is handed on to be kept across restarts.
 */
import type { Logger } from "pino";
import type { DeviceNames } from "./device-names.js";
import type { KmsgMetrics } from "./metrics.js";
import type { KernelEvent } from "./parse/events.js";
import { recoveryActionOf } from "./parse/xid.js";
import { XID_CATALOGUE } from "./xid-catalogue.js";

export class EventPublisher {
  constructor(
    private readonly metrics: KmsgMetrics,
    private readonly names: DeviceNames,
    private readonly logger: Logger,
    /** The driver asked for a recovery action for the GPU at this PCI address (0: none). */
    private readonly onRecovery: (pci: string, action: number) => void,
  ) {}

  /** Publishes one event; `atMs` is the kernel's time of its message. */
  publish(ev: KernelEvent, atMs: number): void {
    const { metrics, names } = this;
    const t = atMs / 1000;
    switch (ev.kind) {
      case "xid": {
        const gpu = names.gpuName(ev.xid.pci);
        const xid = String(ev.xid.xid);
        if (!metrics.admit(`x|${gpu}|${xid}`)) return;
        const entry = XID_CATALOGUE.get(ev.xid.xid);
        metrics.xid.inc({ gpu, xid });
        metrics.xidLast.set({ gpu, xid }, t);
        metrics.xidInfo.set({ xid, meaning: entry?.meaning ?? "", cause: entry?.cause ?? "unknown", action: entry?.action ?? "unknown" }, 1);
        const what = entry !== undefined ? ` (${entry.meaning}; ${entry.cause}; action: ${entry.action})` : "";
        this.logger.warn(
          { gpu, xid: ev.xid.xid, pid: ev.xid.pid, name: ev.xid.name, pci: ev.xid.pci },
          `kmsg: Xid ${xid} on GPU ${gpu}${what}: ${ev.xid.detail}`,
        );
        const recovery = recoveryActionOf(ev.xid);
        if (recovery !== undefined) {
          metrics.recovery.set({ gpu }, recovery);
          this.onRecovery(ev.xid.pci, recovery);
        }
        return;
      }
      case "sxid": {
        const nvswitch = ev.sxid.nvswitch ?? ev.sxid.pci;
        const sxid = String(ev.sxid.sxid);
        const fatality = ev.sxid.fatal ? "fatal" : "non_fatal";
        if (!metrics.admit(`s|${nvswitch}|${sxid}|${fatality}`)) return;
        metrics.sxid.inc({ nvswitch, sxid, fatality });
        metrics.sxidLast.set({ nvswitch, sxid, fatality }, t);
        if (ev.sxid.fatal) this.logger.warn({ nvswitch, sxid: ev.sxid.sxid }, `kmsg: fatal SXid ${sxid} on NVSwitch ${nvswitch}: ${ev.sxid.detail}`);
        return;
      }
      case "nic": {
        const n = ev.nic;
        // EFA's RDMA-device lines name the device and no address.
        const dev = n.pci === undefined ? n.name : (names.hcaName(n.pci) ?? (n.name?.startsWith("mlx") === true ? n.name : n.pci));
        if (!metrics.admit(`n|${dev}|${ev.nic.kind}`)) return;
        metrics.nic.inc({ device: dev, event: ev.nic.kind });
        return;
      }
      case "gpu_pcie": {
        const gpu = names.gpuName(ev.pcie.pci);
        if (!metrics.admit(`p|${gpu}|${ev.pcie.severity}`)) return;
        metrics.gpuPcie.inc({ gpu, aer_severity: ev.pcie.severity });
        return;
      }
    }
  }

  /** The recovery actions of a saved position (per GPU PCI address), published again after a restart. */
  restoreRecovery(recovery: Readonly<Record<string, number>> | undefined): void {
    for (const [pci, action] of Object.entries(recovery ?? {})) this.metrics.recovery.set({ gpu: this.names.gpuName(pci) }, action);
  }
}
