/** /dev/kmsg and journal records: the real raw records of fixtures 09, 40 and 41, and each envelope's edge cases. */
import { describe, expect, it } from "vitest";
import { parseJournalLine } from "../../../collectors/kmsg/parse/journal-record.js";
import { parseKmsgHeader, RecordSplitter, type KmsgRecord } from "../../../collectors/kmsg/parse/kmsg-record.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const raw = readCapture(`kmsg/${listFixtures("kmsg", ".txt").find((f) => f.startsWith("09-")) ?? ""}`);

describe("kmsg records", () => {
  it("reads the real records of an NVSwitch node", () => {
    const lines = raw.split("\n").filter((l) => l !== "");
    const recs = lines.map(parseKmsgHeader);
    expect(recs.every((r) => r !== undefined)).toBe(true);
    expect(recs[0]).toEqual({ seq: 3964, usec: 206764307, level: 6, facility: 0, message: "nvidia-nvswitch2: open (major=510)" });
    const seqs = recs.map((r) => r?.seq ?? -1);
    expect(seqs).toEqual(seqs.map((_, i) => 3964 + i));
  });

  it("splits chunks cut anywhere, attaches DEVICE= dictionary lines, counts garbage", () => {
    const out: KmsgRecord[] = [];
    const s = new RecordSplitter((r) => out.push(r));
    const text =
      "3,10,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\nnot a record\n12,11,5000001,c;user text\n";
    for (let i = 0; i < text.length; i += 7) s.push(text.slice(i, i + 7));
    s.flush();
    expect(out.map((r) => [r.seq, r.level, r.facility, r.device])).toEqual([
      [10, 3, 0, "+pci:0000:3b:00.0"],
      [11, 4, 1, undefined],
    ]);
    expect(out[0]?.message).toBe("NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.");
    expect(s.garbage).toBe(1);
  });

  it("reads real records with dictionary rows and the caller= header field (kmsg/40, 41)", () => {
    const read = (prefix: string, unquote: (l: string) => string): KmsgRecord[] => {
      const out: KmsgRecord[] = [];
      const s = new RecordSplitter((r) => out.push(r));
      const text = readCapture(`kmsg/${listFixtures("kmsg", ".txt").find((f) => f.startsWith(prefix)) ?? ""}`);
      s.push(text.split("\n").map(unquote).join("\n"));
      s.flush();
      expect(s.garbage).toBe(0);
      return out;
    };
    const acpi = read("40-", (l) => l);
    expect(acpi.map((r) => [r.seq, r.usec, r.level, r.facility, r.device])).toEqual([
      [223, 93298, 6, 0, "+acpi:PNP0A08:00"],
      [224, 93413, 6, 0, "+acpi:PNP0A08:00"],
      [225, 93540, 6, 0, undefined],
      [226, 93541, 6, 0, "+pci_bus:0000:00"],
    ]);
    expect(acpi[2]?.message).toBe("PCI host bridge to bus 0000:00");
    // Quoted in a mail (`> `) after the reporter's own two-space indent.
    const pci = read("41-", (l) => l.replace(/^> {3}/, "").replace(/^> {2}/, ""));
    expect(pci.map((r) => [r.seq, r.level, r.device])).toEqual([[1266, 3, "+pci:0000:04:02.0"]]);
    expect(pci[0]?.message).toBe("pcieport 0000:04:02.0: Unable to change power state from D3hot to D0, device inaccessible");
  });

  it("rejects what is not a header", () => {
    for (const l of ["", ";x", "6,1;x", "6,a,1,-;x", "6,1,2;x", "-6,1,2,-;x", `6,${"9".repeat(21)},1,-;x`]) expect(parseKmsgHeader(l), l).toBeUndefined();
  });
});

describe("journal records", () => {
  const rec = {
    __CURSOR: "s=1;i=2",
    _BOOT_ID: "770920c0309d4dc49f2565cfd492b686",
    __REALTIME_TIMESTAMP: "1795517414059123",
    _SOURCE_MONOTONIC_TIMESTAMP: "5001000",
    _KERNEL_DEVICE: "+pci:0000:3b:00.0",
    MESSAGE: "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
  };

  it("reads cursor, boot, both clocks, device and message", () => {
    expect(parseJournalLine(JSON.stringify(rec))).toEqual({
      cursor: "s=1;i=2",
      bootId: rec._BOOT_ID,
      realtimeMs: 1795517414059,
      usec: 5001000,
      device: "+pci:0000:3b:00.0",
      message: rec.MESSAGE,
    });
  });

  it("decodes a MESSAGE that journald stored as bytes (not UTF-8)", () => {
    const bytes = [...Buffer.from("NVRM: Xid (PCI:0000:3b:00): 13, name=caf")].concat([0xe9]);
    expect(parseJournalLine(JSON.stringify({ ...rec, MESSAGE: bytes }))?.message).toBe("NVRM: Xid (PCI:0000:3b:00): 13, name=café");
  });

  it("skips lines without a cursor or a message, and non-JSON", () => {
    expect(parseJournalLine(JSON.stringify({ MESSAGE: "x" }))).toBeUndefined();
    expect(parseJournalLine(JSON.stringify({ __CURSOR: "c", MESSAGE: [300] }))).toBeUndefined();
    expect(parseJournalLine("{not json")).toBeUndefined();
    expect(parseJournalLine("-- No entries --")).toBeUndefined();
  });
});
