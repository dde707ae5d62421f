/**
 * One kernel message in, the event it reports out (or nothing): an Xid, an SXid, an HCA driver
 * event, or a PCIe bus error on a GPU. Stateful only for the three-line "fallen off the bus" report,
 * so one KernelEvents follows one stream of messages.
 */
import { pciSlotKey } from "../../pci.js";
import { parseDevicePrefix } from "./device-prefix.js";
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

export class KernelEvents {
  private readonly lost = new LostAtProbe();
  /** When an Xid 79 was last read, per PCI slot (domain:bus:device). */
  private readonly fell = new Map<string, number>();

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
    // PCI error recovery after an uncorrected error above the GPU (its root port's AER): the kernel
    // tells the GPU's driver, which has no AER callbacks (drivers/pci/pcie/err.c).
    if (message.indexOf("can't recover (no error_detected callback)") >= 0 || message.indexOf("device has no AER-aware driver") >= 0) {
      const p = parseDevicePrefix(message, "nvidia");
      if (p !== undefined) return { kind: "gpu_pcie", pcie: { pci: p.pci, severity: "uncorrected", text: p.text } };
    }
    return undefined;
  }
}

/** `NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.` (no Xid in it). */
function isDriverLine(message: string): boolean {
  return message.indexOf("NVRM: GPU ") >= 0 && message.indexOf("Xid") < 0;
}
