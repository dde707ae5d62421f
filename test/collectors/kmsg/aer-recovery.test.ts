/**
 * The kernel's AER recovery words to the GPU's driver (no AER callbacks): after its root port's
 * uncorrected error (kmsg/44) they are the GPU's only line, and count; after the GPU's own
 * uncorrected `PCIe Bus Error` they repeat that error, and do not count again. Lines in the
 * kernel's form (drivers/pci/pcie/err.c, aer.c), as in kmsg/16 and 44.
 */
import { describe, expect, it } from "vitest";
import { KernelEvents } from "../../../collectors/kmsg/parse/events.js";

const OWN = "nvidia 0000:03:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)";
const RECOVER = "nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)";

const summary = (k: KernelEvents, lines: readonly [string, number][]): string[] =>
  lines.flatMap(([l, t]) => k.read(l, t)).map((e) => (e.kind === "gpu_pcie" ? `${e.pcie.severity} ${e.pcie.pci}` : e.kind));

describe("AER recovery on a GPU", () => {
  it("after the GPU's own uncorrected error: one error, not two", () => {
    expect(
      summary(new KernelEvents(), [
        [OWN, 1_000],
        [RECOVER, 1_002],
      ]),
    ).toEqual(["uncorrected 0000:03:00.0"]);
  });

  it("alone (the root port's error), or long after the GPU's own: counted", () => {
    expect(summary(new KernelEvents(), [[RECOVER, 1_000]])).toEqual(["uncorrected 0000:03:00.0"]);
    expect(
      summary(new KernelEvents(), [
        [OWN, 1_000],
        [RECOVER, 60_000],
      ]),
    ).toEqual(["uncorrected 0000:03:00.0", "uncorrected 0000:03:00.0"]);
    // Another GPU's recovery is its own error.
    expect(
      summary(new KernelEvents(), [
        [OWN, 1_000],
        [RECOVER.replace("03:00.0", "04:00.0"), 1_001],
      ]),
    ).toEqual(["uncorrected 0000:03:00.0", "uncorrected 0000:04:00.0"]);
  });

  it("a corrected error's lines bring no recovery words; another driver's recovery is no GPU's", () => {
    expect(summary(new KernelEvents(), [["snd_hda_intel 0000:03:00.1: AER: can't recover (no error_detected callback)", 1]])).toEqual([]);
  });
});
