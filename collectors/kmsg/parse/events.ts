/**
 * One kernel message in, the event it reports out (or nothing): an Xid, an SXid, an HCA driver
 * event, or a PCIe bus error on a GPU. Stateful for reports that span lines (the three-line "fallen
 * off the bus" report, an Xid 79 and the driver's words after it, an AER error and its recovery,
 * mlx5_ib's lines of one failed completion), so one KernelEvents follows one stream of messages.
 */
import { pciSlotKey } from "../../pci.js";
import { parseDevicePrefix } from "./device-prefix.js";
import { CompletionLines } from "./completion.js";
import { parseNicEvent, type NicEvent } from "./nic.js";
import { parseSxid, type SxidReport } from "./sxid.js";
import { LostAtProbe, parseFallenOffBus, parseXid, type XidReport } from "./xid.js";

export interface GpuPcieError {
  pci: string;
  severity: "corrected" | "uncorrected";
  text: string;
}

export type KernelEvent =
  { kind: "xid"; xid: XidReport } | { kind: "sxid"; sxid: SxidReport } | { kind: "nic"; nic: NicEvent } | { kind: "gpu_pcie"; pcie: GpuPcieError };

/** An Xid 79 line and the driver's own "GPU has fallen off the bus" line about it come this close. */
const SAME_FALL_MS = 60_000;
/** A GPU's own uncorrected AER error and the recovery's words about it come this close. */
const SAME_AER_MS = 10_000;
export const RECOVERY_NO_CALLBACK = "can't recover (no error_detected callback)";
export const RECOVERY_NO_DRIVER = "device has no AER-aware driver";

export class KernelEvents {
  private readonly lost = new LostAtProbe();
  /** When an Xid 79 was last read, per PCI slot (domain:bus:device). */
  private readonly fell = new Map<string, number>();
  /** When the GPU's own uncorrected AER error was last read, per PCI address. */
  private readonly uncorrected = new Map<string, number>();
  private readonly completions = new CompletionLines();

  /**
   * The events a message reports (none for most). A record with embedded newlines (dmesg shows
   * them as indented lines; /dev/kmsg escapes them as \x0a) is read line by line.
   */
  read(message: string, atMs = 0): KernelEvent[] {
    const out: KernelEvent[] = [];
    if (message.indexOf("\\x0a") >= 0 || message.indexOf("\n") >= 0) {
      for (const line of message.split(message.indexOf("\n") >= 0 ? "\n" : "\\x0a")) this.line(line, atMs, out);
    } else {
      this.line(message, atMs, out);
    }
    return out;
  }

  private line(message: string, atMs: number, out: KernelEvent[]): void {
    const ev = this.event(message);
    if (ev === undefined) return;
    if (ev.kind === "nic" && ev.nic.completion !== undefined) {
      const c = this.completions.take(ev.nic.name ?? ev.nic.pci ?? "", ev.nic.completion, ev.nic.text, atMs);
      if (!c.count) return;
      if (c.flush) ev.nic.kind = "completion_flushed";
    }
    if (ev.kind === "xid" && ev.xid.xid === 79) {
      const slot = pciSlotKey(ev.xid.pci);
      const last = this.fell.get(slot);
      this.fell.set(slot, atMs);
      if (this.fell.size > 256) this.fell.delete(this.fell.keys().next().value as string);
      // The driver's own line after an Xid 79 reports the same fall.
      if (
        ev.xid.detail.startsWith("GPU has fallen off the bus") &&
        ev.xid.pid === undefined &&
        isDriverLine(message) &&
        last !== undefined &&
        atMs - last <= SAME_FALL_MS
      )
        return;
    }
    if (ev.kind === "gpu_pcie" && ev.pcie.severity === "uncorrected") {
      const last = this.uncorrected.get(ev.pcie.pci);
      // The recovery's words after the GPU's own uncorrected error report that error again.
      if (isRecoveryLine(ev.pcie.text) && last !== undefined && atMs - last <= SAME_AER_MS) return;
      if (!isRecoveryLine(ev.pcie.text)) {
        this.uncorrected.set(ev.pcie.pci, atMs);
        if (this.uncorrected.size > 256) this.uncorrected.delete(this.uncorrected.keys().next().value as string);
      }
    }
    out.push(ev);
  }

  private event(message: string): KernelEvent | undefined {
    const lost = this.lost.push(message);
    if (lost !== undefined) return { kind: "xid", xid: lost };
    if (message.indexOf("Xid (") >= 0) {
      const sxid = parseSxid(message);
      if (sxid !== undefined) return { kind: "sxid", sxid };
      const xid = parseXid(message);
      if (xid !== undefined) return { kind: "xid", xid };
      return undefined;
    }
    const fallen = parseFallenOffBus(message);
    if (fallen !== undefined) return { kind: "xid", xid: fallen };
    const nic = parseNicEvent(message);
    if (nic !== undefined) return { kind: "nic", nic };
    if (message.indexOf("PCIe Bus Error") >= 0) {
      const p = parseDevicePrefix(message, "nvidia");
      if (p !== undefined) {
        const severity = p.text.indexOf("severity=Correct") >= 0 ? "corrected" : "uncorrected";
        return { kind: "gpu_pcie", pcie: { pci: p.pci, severity, text: p.text } };
      }
    }
    // PCI error recovery after an uncorrected error (the GPU's own, or its root port's): the kernel
    // tells the GPU's driver, which has no AER callbacks (drivers/pci/pcie/err.c).
    if (message.indexOf("nvidia ") >= 0 && isRecoveryLine(message)) {
      const p = parseDevicePrefix(message, "nvidia");
      if (p !== undefined) return { kind: "gpu_pcie", pcie: { pci: p.pci, severity: "uncorrected", text: p.text } };
    }
    return undefined;
  }
}

/** The AER recovery's words to a driver without AER callbacks. */
function isRecoveryLine(text: string): boolean {
  return text.indexOf(RECOVERY_NO_CALLBACK) >= 0 || text.indexOf(RECOVERY_NO_DRIVER) >= 0;
}

/** `NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.` (no Xid in it). */
function isDriverLine(message: string): boolean {
  return message.indexOf("NVRM: GPU ") >= 0 && message.indexOf("Xid") < 0;
}
