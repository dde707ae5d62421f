/**
 * GPU events wait for the gpu collector's GPU list: held until the GPUs are known or 30 s have
 * passed, in order, at most 10,000; other events pass at once; once open the gate stays open.
 * The events are parsed from real kernel lines (test/fixtures/kmsg).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GPU_NAMES_WAIT_MS, GpuEventGate, MAX_HELD } from "../../../collectors/kmsg/gpu-event-gate.js";
import { KernelEvents, type KernelEvent } from "../../../collectors/kmsg/parse/events.js";

function event(message: string): KernelEvent {
  const ev = new KernelEvents().read(message)[0];
  if (ev === undefined) throw new Error(`no event in ${message}`);
  return ev;
}

const XID_149 = event(
  "NVRM: Xid (PCI:0009:01:00): 149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
);
const XID_154 = event("NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)");
const SXID = event("nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt");
const GPU_AER = event("nvidia 0000:07:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)");

/** What a gate published: the kind (and Xid code) with the time it was handed. */
function rig(now: () => number = () => 0): { gate: GpuEventGate; published: string[]; dropped: () => number; know: () => void } {
  let known = false;
  let dropped = 0;
  const published: string[] = [];
  const gate = new GpuEventGate(
    () => known,
    now,
    (ev, atMs) => published.push(`${ev.kind === "xid" ? `xid ${ev.xid.xid}` : ev.kind}@${atMs}`),
    () => dropped++,
  );
  return { gate, published, dropped: () => dropped, know: () => (known = true) };
}

afterEach(() => void vi.useRealTimers());

describe("GpuEventGate", () => {
  it("the real lines are the events this test means", () => {
    expect([XID_149.kind, XID_154.kind, SXID.kind, GPU_AER.kind]).toEqual(["xid", "xid", "sxid", "gpu_pcie"]);
  });

  it("holds GPU events while the GPUs are not known; any other event releases them first, in order, and opens the gate", () => {
    const { gate, published } = rig();
    gate.handle(XID_149, 1);
    gate.handle(GPU_AER, 2);
    gate.handle(XID_154, 3);
    expect(published).toEqual([]);
    gate.release(); // not known, not waited long: still held
    expect(published).toEqual([]);
    gate.handle(SXID, 4);
    gate.handle(XID_149, 5);
    expect(published).toEqual(["xid 149@1", "gpu_pcie@2", "xid 154@3", "sxid@4", "xid 149@5"]);
  });

  it("passes every event at once when the GPUs are known", () => {
    const { gate, published, know } = rig();
    know();
    gate.handle(XID_154, 1);
    gate.handle(SXID, 2);
    gate.handle(GPU_AER, 3);
    expect(published).toEqual(["xid 154@1", "sxid@2", "gpu_pcie@3"]);
  });

  it("releases on its own check: when the GPUs become known, or after 30 s without them", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const a = rig(() => Date.now());
    a.gate.handle(XID_149, 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(a.published).toEqual([]);
    a.know();
    await vi.advanceTimersByTimeAsync(250);
    expect(a.published).toEqual(["xid 149@1"]);

    const b = rig(() => Date.now());
    b.gate.handle(XID_149, 1);
    b.gate.handle(XID_154, 2);
    await vi.advanceTimersByTimeAsync(GPU_NAMES_WAIT_MS - 250);
    expect(b.published).toEqual([]);
    await vi.advanceTimersByTimeAsync(250);
    expect(b.published).toEqual(["xid 149@1", "xid 154@2"]);
  });

  it("stays open once released: later GPU events pass at once though the GPUs are still not known", () => {
    let now = 0;
    const { gate, published } = rig(() => now);
    gate.handle(XID_149, 1);
    now = GPU_NAMES_WAIT_MS;
    gate.release();
    gate.handle(XID_154, 2);
    expect(published).toEqual(["xid 149@1", "xid 154@2"]);
    gate.stop();
  });

  it("holds at most MAX_HELD events; the others are dropped and counted", () => {
    const { gate, published, dropped, know } = rig();
    for (let i = 0; i < MAX_HELD + 3; i++) gate.handle(XID_149, i);
    expect(dropped()).toBe(3);
    know();
    gate.release();
    expect(published).toHaveLength(MAX_HELD);
    expect(published.at(-1)).toBe(`xid 149@${MAX_HELD - 1}`);
    gate.stop();
  });

  it("publishes nothing held after stop()", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { gate, published } = rig(() => Date.now());
    gate.handle(XID_149, 1);
    gate.stop();
    await vi.advanceTimersByTimeAsync(2 * GPU_NAMES_WAIT_MS);
    expect(published).toEqual([]);
  });
});
