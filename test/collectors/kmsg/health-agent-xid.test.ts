/**
 * gpud's words for an Xid it read from the kernel (its health state's reason), as users paste them
 * where the kernel's line is not (nccl-pasted 460, leptonai/gpud #604; the JSON form from gpud's
 * own docs). Read offline only (PastedKernelLog), never from the live kernel log.
 */
import { describe, expect, it } from "vitest";
import { PastedKernelLog } from "../../../collectors/kmsg/pasted.js";
import { parseHealthAgentXid } from "../../../collectors/kmsg/parse/xid.js";
import { KernelEvents } from "../../../collectors/kmsg/parse/events.js";

describe("a health agent's Xid words", () => {
  it("gpud's reason, glued or spaced, in plain text or a JSON state", () => {
    expect(parseHealthAgentXid("XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00")).toEqual({
      xid: 79,
      pci: "0000:ae:00",
      detail: "GPU has fallen off the bus",
    });
    expect(parseHealthAgentXid('        "reason": "XID 74 (NVLINK Error) detected on PCI:0000:04:00",')).toEqual({
      xid: 74,
      pci: "0000:04:00",
      detail: "NVLINK Error",
    });
  });

  it("is nothing without the agent's whole form", () => {
    for (const line of [
      "XID 79 detected on PCI:0000:ae:00",
      "XID 79(GPU has fallen off the bus) detected on GPU 0",
      "GPUXID 79(x) detected on PCI:0000:ae:00",
      "XID (x) detected on PCI:0000:ae:00",
    ])
      expect(parseHealthAgentXid(line), line).toBeUndefined();
  });

  it("offline only: a pasted log reads it, the live kernel parser does not", () => {
    const line = "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00";
    expect(new PastedKernelLog().line(line).map((e) => (e.event.kind === "xid" ? [e.event.xid.xid, e.event.xid.pci] : []))).toEqual([[79, "0000:ae:00"]]);
    expect(new KernelEvents().read(line)).toEqual([]);
  });
});
