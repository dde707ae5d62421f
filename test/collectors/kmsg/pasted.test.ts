/**
 * Kernel lines as pasted for `ringwatch analyze`: every real capture read through PastedKernelLog
 * gives exactly the events the collector's parser finds in it, and the host its prefix names.
 */
import { describe, expect, it } from "vitest";
import { KernelEvents, type KernelEvent } from "../../../collectors/kmsg/parse/events.js";
import { PastedKernelLog, pastedHost } from "../../../collectors/kmsg/pasted.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const files = listFixtures("kmsg", ".txt");
const capture = (prefix: string): string[] => readCapture(`kmsg/${files.find((f) => f.startsWith(prefix)) ?? ""}`).split("\n");

function direct(lines: readonly string[]): KernelEvent[] {
  const k = new KernelEvents();
  return lines.flatMap((l) => k.read(l));
}

function pasted(lines: readonly string[]): { event: KernelEvent; host?: string }[] {
  const p = new PastedKernelLog();
  return lines.flatMap((l) => p.line(l));
}

describe("PastedKernelLog", () => {
  it("finds in every capture the events the parser finds (its quick filter drops none)", () => {
    let total = 0;
    for (const f of files) {
      const lines = readCapture(`kmsg/${f}`).split("\n");
      const want = direct(lines);
      expect(
        pasted(lines).map((e) => e.event),
        f,
      ).toEqual(want);
      total += want.length;
    }
    expect(total).toBe(142); // the sum of what test/collectors/kmsg/captures.test.ts expects of each capture
  });

  it("takes the host from syslog and journalctl prefixes", () => {
    expect(uniqHosts(capture("13-"))).toEqual(["zeus"]); // Nov 29 11:28:11 zeus kernel: NVRM: Xid ...
    expect(uniqHosts(capture("16-"))).toEqual(["bubz"]); // ... bubz kernel: [68185.875052] pcieport ...
    expect(uniqHosts(capture("21-"))).toEqual(["node1"]);
    expect(uniqHosts(capture("02-"))).toEqual(["000-000-00000-1-gpu-1"]);
    expect(uniqHosts(capture("32-"))).toEqual(["ny2g1r12hh2"]); // > [Sun Dec  1 14:54:40 2024] ny2g1r12hh2 kernel: mlx5_core ...
    expect(uniqHosts(capture("33-"))).toEqual(["ip-26-0-146-100", "ip-26-0-147-135"]); // inside an alert's text
    expect(uniqHosts(capture("37-"))).toEqual(["fedora-box"]);
  });

  it("takes the node address talosctl dmesg puts first", () => {
    expect(uniqHosts(capture("36-"))).toEqual(["192.168.11.119"]);
    expect(pastedHost("999.1.1.1: kern: warning: [2026-04-22T21:26:20.599488292Z]: NVRM: Xid")).toBeUndefined();
  });

  it("names no host for dmesg's own forms (timestamps, --decode, a bare kernel: prefix)", () => {
    for (const p of ["01-", "03-", "06-", "10-", "18-", "20-"]) expect(uniqHosts(capture(p)), p).toEqual([undefined]);
  });

  it("takes the host of a pdsh/clush prefix, and of the line an indented dmesg row continues", () => {
    const gb200 = capture("18-")
      .filter((l) => l.startsWith("["))
      .map((l) => `gb200-tray3: ${l}`);
    const got = pasted(gb200);
    expect(got).toHaveLength(9);
    expect(new Set(got.map((e) => e.host))).toEqual(new Set(["gb200-tray3"]));
    // The three-line report of a GPU lost at probe: only its first row carries the prefix.
    const lost = capture("01-").filter((l) => !l.startsWith("#"));
    const first = lost[0] ?? "";
    const events = pasted([`node7: ${first}`, ...lost.slice(1)]);
    expect(events.map((e) => [e.event.kind, e.host])).toEqual([["xid", "node7"]]);
  });

  it("pastedHost: what is no host", () => {
    expect(pastedHost("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001")).toBeUndefined();
    expect(pastedHost("nvidia-nvswitch0: SXid (PCI:0000:88:00.0): 12028, Non-fatal, Link 44")).toBeUndefined();
    expect(pastedHost("NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.")).toBeUndefined();
    expect(pastedHost("kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {")).toBeUndefined();
    expect(pastedHost("INFO: NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.")).toBeUndefined();
    expect(pastedHost("[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>'")).toBeUndefined();
    expect(pastedHost("2026-11-24T02:47:01.123456+00:00 node7.cluster.local kernel: NVRM: Xid (PCI:0000:3b:00): 79,")).toBe("node7.cluster.local");
    // Words of alerting tools and loggers before a kernel line, and `kernel:` inside a message.
    for (const l of [
      "CRITICAL: NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.",
      "healthcheck: NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.",
      "WARNING found in kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.",
      "Nov 24 02:47:01 gpu34 python[4242]: torch kernel: NVRM: Xid (PCI:0000:3b:00): 79",
    ])
      expect(pastedHost(l), l).toBeUndefined();
    expect(pastedHost("node7: Nov 24 02:47:01 node7 kernel: NVRM: Xid (PCI:0000:3b:00): 79")).toBe("node7");
  });
});

function uniqHosts(lines: readonly string[]): (string | undefined)[] {
  return [...new Set(pasted(lines).map((e) => e.host))];
}
