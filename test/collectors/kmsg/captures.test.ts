/**
 * Every real kernel-log capture in test/fixtures/kmsg, read line by line as pasted (dmesg, syslog,
 * journalctl prefixes and all) and record by record as the kernel hands them out: the events each
 * holds, and nothing from the lines around them.
 */
import { describe, expect, it } from "vitest";
import { KernelEvents, type KernelEvent } from "../../../collectors/kmsg/parse/events.js";
import { recoveryActionOf } from "../../../collectors/kmsg/parse/xid.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";
import { captureMessages } from "../../helpers/kernel-log.js";

function summary(e: KernelEvent): string {
  switch (e.kind) {
    case "xid":
      return `xid ${e.xid.xid} ${e.xid.pci}`;
    case "sxid":
      return `sxid ${e.sxid.sxid} ${e.sxid.fatal ? "fatal" : "non_fatal"} nvswitch${e.sxid.nvswitch ?? "?"} link${e.sxid.link ?? "?"}`;
    case "nic":
      return `nic ${e.nic.driver} ${e.nic.kind} ${e.nic.pci ?? "-"}${e.nic.name !== undefined ? ` ${e.nic.name}` : ""}${e.nic.port !== undefined ? ` port${e.nic.port}` : ""}`;
    case "gpu_pcie":
      return `pcie ${e.pcie.severity} ${e.pcie.pci}`;
  }
}

const times = (n: number, s: string): string[] => Array.from({ length: n }, () => s);

/** What a careful reader finds in each capture, in order. */
const EXPECTED: Record<string, string[]> = {
  "01-": ["xid 79 0000:b3:00.0"],
  "02-": ["nic mlx5_core link_up 0000:ab:00.0 mlx5_5 port1"],
  "03-": [...times(3, "xid 13 0000:cb:00"), "xid 109 0000:cb:00"],
  "04-": [], // only SXid 12028's Data line was kept: the error line that counts is not in the excerpt
  "05-": ["sxid 22013 non_fatal nvswitch3 link44", "sxid 22013 non_fatal nvswitch3 link45", "sxid 22013 non_fatal nvswitch3 link46"],
  "06-": ["xid 45 0000:dc:00", "xid 45 0000:ed:00", "xid 45 0000:ba:00", "xid 45 0000:97:00", "xid 45 0000:dc:00", "xid 45 0000:ba:00", "xid 45 0000:ed:00"],
  "07-": [], // the reporter replaced the PCI address with '...'
  "08-": times(5, "xid 119 0000:9b:00"),
  "09-": [],
  "10-": ["xid 31 0000:01:00", ...times(4, "xid 13 0000:01:00"), "xid 32 0000:01:00"],
  "11-": ["xid 31 0000:01:00"],
  "12-": times(2, "xid 31 0000:08:00"),
  "13-": times(2, "xid 31 0000:c1:00"),
  "14-": ["xid 31 0000:0c:00"],
  "15-": ["xid 32 0000:01:00", "xid 32 0000:01:00", "xid 31 0000:01:00"],
  "16-": ["pcie corrected 0000:07:00.0"],
  "17-": times(7, "xid 119 0000:61:00"),
  "18-": [
    "xid 149 0009:01:00",
    "xid 154 0009:01:00",
    "xid 149 0008:01:00",
    "xid 154 0019:01:00",
    "xid 149 0009:01:00",
    "xid 149 0009:01:00",
    "xid 149 0008:01:00",
    "xid 154 0018:01:00",
    "xid 154 0008:01:00",
  ],
  "19-": [
    "xid 145 0008:01:00",
    "xid 145 0008:01:00",
    "xid 145 0008:01:00",
    "xid 149 0008:01:00",
    "xid 149 0008:01:00",
    "xid 149 0008:01:00",
    "xid 145 0018:01:00",
    "xid 145 0018:01:00",
    "xid 149 0018:01:00",
    "xid 149 0018:01:00",
    "xid 149 0018:01:00",
    "xid 145 0019:01:00",
    "xid 145 0019:01:00",
    "xid 149 0019:01:00",
  ],
  "20-": ["xid 144 0000:01:00", "xid 149 0000:00:00", "xid 149 0000:00:00"],
  "21-": ["nic mlx5_core command_error 0000:d2:00.0"],
  "22-": [], // a cable plugged in and sufficient slot power: news, not events
  "23-": [], // GSP heartbeat lines without an Xid
  "24-": ["nic mlx5_core probe_failed 0000:03:00.0"],
  // The Xid 79 and the driver's own line about the same fall count once; only SXid lines that say Fatal count.
  "25-": [
    "xid 79 0000:91:00",
    "sxid 20034 fatal nvswitch1 link48",
    "sxid 20034 fatal nvswitch0 link63",
    "sxid 20034 fatal nvswitch2 link37",
    "sxid 20034 fatal nvswitch0 link62",
  ],
  "26-": [...times(16, "xid 13 0000:38:00"), "xid 43 0000:38:00"],
  // One per `health compromised`, not per row of the health dump that follows it.
  "27-": [
    "nic mlx5_core firmware_error 0000:0d:00.0",
    "nic mlx5_core firmware_error 0000:0d:00.2",
    "nic mlx5_core firmware_error 0000:0d:00.3",
    "nic mlx5_core firmware_error 0000:0d:00.4",
    "nic mlx5_core firmware_error 0000:0d:00.1",
    "nic mlx5_core firmware_error 0000:0d:00.5",
  ],
  // The AER callback's Enter, not its Exit; the root port's own AER rows are not the HCA's.
  "28-": [
    "nic mlx5_core pcie_error_uncorrected 0004:01:00.0",
    "nic mlx5_core firmware_error 0004:01:00.1",
    "nic mlx5_core pcie_error_uncorrected 0004:01:00.1",
  ],
  "29-": ["nic mlx5_core firmware_error 0000:bb:00.0"],
  "30-": ["nic mlx5_core tx_timeout 0000:13:00.1 eth1"], // not again for `TX timeout on queue: 19, ...`
  "31-": ["nic mlx5_core module_event 0000:08:00.0"],
  "32-": ["nic mlx5_core insufficient_power 0000:5c:00.0"],
  "33-": ["xid 63 0000:10:1c", "xid 64 0000:90:1c"],
  "34-": ["xid 79 0000:06:00"],
  "35-": ["xid 120 0000:01:00"],
  "36-": ["xid 45 0000:48:00", "xid 45 0000:48:00", "xid 74 0000:48:00", "xid 154 0000:48:00"],
  "37-": ["xid 69 0000:01:00", "xid 62 0000:01:00"],
  "38-": ["nic mlx5_core firmware_error 0000:01:00.0", "nic mlx5_core pcie_error_corrected 0000:01:00.0", "nic mlx5_core pcie_error_corrected 0000:01:00.1"],
  "39-": times(3, "nic mlx5_core command_error 0000:01:00.2"),
  "40-": [], // raw /dev/kmsg records of acpi and pci_bus
  "41-": [], // a pcieport record, no event of a GPU or HCA
  // EFA names the RDMA device, not its address; `Failed to register mr [-12]` after each refusal is the same failure.
  "42-": times(7, "nic efa command_error - efa_0"),
  "43-": ["nic efa command_error - efa_0"],
  // The root port's fatal AER error reaches the GPU's driver, which cannot recover: the GPU's, twice (two errors).
  "44-": ["pcie uncorrected 0000:03:00.0", "pcie uncorrected 0000:03:00.0"],
  // Failed work completions: 5.17+'s `WC error` and its `dump error cqe` are one (45); before 5.17 the dump alone (46);
  // the Ethernet driver's one line, not again for `ERR CQE on SQ` (47); with dynamic debug, each `error cqe on cqn`
  // told by its `syndrome` row, here 0x5, flushed requests (48: seven lines, the seventh's row cut from the paste).
  "45-": ["nic mlx5_ib completion_error - mlx5_0"],
  "46-": ["nic mlx5_ib completion_error - mlx5_1"],
  "47-": ["nic mlx5_core completion_error 0000:3b:00.1 eth1"],
  "48-": times(6, "nic mlx5_ib completion_flushed - rocep33s0f0"),
};

const files = listFixtures("kmsg", ".txt");

function eventsOf(lines: readonly string[]): KernelEvent[] {
  const k = new KernelEvents();
  return lines.flatMap((l, i) => k.read(l, i * 10));
}

describe("kernel log captures", () => {
  it("every capture has an expectation", () => {
    expect(files.length).toBe(48);
    for (const f of files)
      expect(
        Object.keys(EXPECTED).some((p) => f.startsWith(p)),
        f,
      ).toBe(true);
  });

  for (const f of files) {
    const want = EXPECTED[Object.keys(EXPECTED).find((p) => f.startsWith(p)) ?? ""] ?? ["(no expectation)"];
    it(`${f}: as pasted, line by line`, () => {
      expect(eventsOf(readCapture(`kmsg/${f}`).split("\n")).map(summary)).toEqual(want);
    });
    it(`${f}: as kernel records`, () => {
      expect(eventsOf(captureMessages(`kmsg/${f}`)).map(summary)).toEqual(want);
    });
  }

  it("reads pid and process name in each driver's form", () => {
    const byFile = (p: string) =>
      eventsOf(readCapture(`kmsg/${files.find((f) => f.startsWith(p)) ?? ""}`).split("\n")).flatMap((e) => (e.kind === "xid" ? [e.xid] : []));
    // 525+: pid='<unknown>', name=<unknown> is no pid and no name; pid=N, name=comm both.
    expect(byFile("03-").map((x) => [x.pid, x.name])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
      [undefined, undefined],
      [1797828, "pt_main_thread"],
    ]);
    expect(byFile("03-")[3]?.detail).toBe("Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005");
    // 450/510: pid without name; 418: neither; names with '::'.
    expect(byFile("13-").map((x) => [x.pid, x.name])).toEqual([
      [12890, undefined],
      [12890, undefined],
    ]);
    const old = byFile("10-")[0];
    expect([old?.pid, old?.name, old?.detail.slice(0, 41)]).toEqual([undefined, undefined, "Ch 0000003a, intr 10000000. MMU Fault: EN"]);
    expect(
      byFile("19-")
        .filter((x) => x.name === "ray::WorkerDict")
        .map((x) => x.pid),
    ).toEqual([876767, 876766]);
    expect(byFile("11-")[0]).toMatchObject({ pid: 13705, name: "UnrealEditor" });
  });

  it("reads the recovery action Xid 154 moves to (GB200)", () => {
    const xids = eventsOf(readCapture(`kmsg/${files.find((f) => f.startsWith("18-")) ?? ""}`).split("\n")).flatMap((e) =>
      e.kind === "xid" && e.xid.xid === 154 ? [e.xid] : [],
    );
    expect(xids.map((x) => [x.pci, recoveryActionOf(x)])).toEqual([
      ["0009:01:00", 4],
      ["0019:01:00", 1],
      ["0018:01:00", 1],
      ["0008:01:00", 1],
    ]);
  });
});
