/**
 * `ringwatch analyze` on kernel lines: the real captures of test/fixtures/kmsg read as a user
 * pastes them, and kernel lines beside the real NCCL log nccl/02 (4 nodes, 8 ranks), where an
 * event is tied to the rank on the GPU, process or HCA it names.
 */
import { describe, expect, it } from "vitest";
import { KernelLines } from "../../agent/analyze-kernel.js";
import { analyzeLogs } from "../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../collectors/nccl/verdict/report.js";
import { listFixtures, readFixtureRaw } from "../helpers/fixtures.js";

const kmsg = listFixtures("kmsg", ".txt");
const nccl02 = listFixtures("nccl", ".log").find((f) => f.startsWith("02-")) ?? "";

function analyzeCapture(prefix: string): Finding[] {
  const f = kmsg.find((x) => x.startsWith(prefix)) ?? "";
  return analyzeLogs([{ name: f, text: readFixtureRaw(`kmsg/${f}`) }], new KernelLines()).findings;
}

/** nccl/02 and a kernel log beside it. */
function withNccl(kernel: string[]): Finding[] {
  return analyzeLogs(
    [
      { name: "nccl.log", text: readFixtureRaw(`nccl/${nccl02}`) },
      { name: "dmesg.txt", text: kernel.join("\n") },
    ],
    new KernelLines(),
  ).findings;
}

/** An Xid 79 line in the driver's form (kmsg/01, 34) on 0000:07:00, where nccl/02 has ranks 0 (gpu34) and 6 (gpu41). */
const xid79 = (prefix: string, pid: number): string => `${prefix}NVRM: Xid (PCI:0000:07:00): 79, pid=${pid}, GPU has fallen off the bus.`;

const brief = (f: Finding): string =>
  `${f.severity} ${f.kind} ${f.device ?? ""} ${f.code ?? f.event ?? ""} x${f.count ?? 0}${f.host !== undefined ? ` @${f.host}` : ""}`;

describe("analyze: kernel log captures as pasted", () => {
  it("a GPU lost at probe (three dmesg rows, no Xid printed): reboot the node; and it no longer answers on PCIe", () => {
    const [f, off, ...rest] = analyzeCapture("01-");
    expect(rest).toEqual([]);
    expect(off).toMatchObject({ kind: "gpu_pcie_error", severity: "critical", event: "off_bus", device: "0000:b3:00.0", count: 1 });
    expect(off?.summary).toContain("Xid 79: the GPU no longer answers on PCIe");
    expect(f).toMatchObject({
      kind: "gpu_xid",
      severity: "critical",
      code: 79,
      action: "reboot_node",
      device: "0000:b3:00.0",
      count: 1,
      ranks: [],
      processes: [],
    });
    expect(f?.evidence).toEqual(["01-xid79-fallen-off-bus-multiline-nvsentinel-issue155.txt:4"]);
    expect(f?.summary).toMatch(/^GPU 0000:b3:00\.0 reported Xid 79 \(GPU has fallen off the bus; cause: hardware\).*Reboot the node/);
  });

  it("journalctl lines: the host, the pid and the repeat count; an application's Xid is a warning", () => {
    expect(analyzeCapture("13-").map(brief)).toEqual(["warning gpu_xid 0000:c1:00 31 x2 @zeus"]);
    expect(analyzeCapture("13-")[0]?.summary).toContain("The driver named pid 12890.");
  });

  it("GB200: the recovery action of Xid 154 is critical, NVLink5 Xid 149 a warning, one finding per GPU and code", () => {
    expect(analyzeCapture("18-").map(brief)).toEqual([
      "critical gpu_xid 0009:01:00 154 x1",
      "critical gpu_xid 0019:01:00 154 x1",
      "critical gpu_xid 0018:01:00 154 x1",
      "critical gpu_xid 0008:01:00 154 x1",
      "warning gpu_xid 0009:01:00 149 x3",
      "warning gpu_xid 0008:01:00 149 x2",
    ]);
  });

  it("an NVSwitch SXid, HCA driver events and GPU PCIe errors", () => {
    expect(analyzeCapture("05-").map(brief)).toEqual(["warning nvswitch_sxid 0000:04:00.0 22013 x3"]);
    expect(analyzeCapture("21-").map(brief)).toEqual(["warning hca_error 0000:d2:00.0 command_error x1 @node1"]);
    expect(analyzeCapture("24-").map(brief)).toEqual(["critical hca_error 0000:03:00.0 probe_failed x1"]);
    expect(analyzeCapture("16-").map(brief)).toEqual(["info gpu_pcie_error 0000:07:00.0 corrected x1 @bubz"]);
  });

  it("a fatal SXid on three NVSwitches after a GPU fell off the bus (kmsg/25): critical, one finding per switch", () => {
    expect(analyzeCapture("25-").map(brief)).toEqual([
      "critical gpu_xid 0000:91:00 79 x1",
      "critical nvswitch_sxid 0000:06:00.0 20034 x1",
      "critical nvswitch_sxid 0000:05:00.0 20034 x2",
      "critical nvswitch_sxid 0000:07:00.0 20034 x1",
      "critical gpu_pcie_error 0000:91:00 off_bus x1",
    ]);
    expect(analyzeCapture("25-")[2]?.summary).toMatch(/^NVSwitch 0 \(PCI 0000:05:00\.0\) reported fatal SXid 20034: "Link 63 LTSSM Fault Up", 2 times/);
  });

  it("talosctl dmesg (kmsg/36): the node's address is the host; an NVLink Xid 74 and the recovery the driver asks for are critical", () => {
    expect(analyzeCapture("36-").map(brief)).toEqual([
      "critical gpu_xid 0000:48:00 74 x1 @192.168.11.119",
      "critical gpu_xid 0000:48:00 154 x1 @192.168.11.119",
      "info gpu_xid 0000:48:00 45 x2 @192.168.11.119",
    ]);
  });

  it("an HCA's firmware fault, once per PCI function and not per row of its health dump (kmsg/27)", () => {
    expect(analyzeCapture("27-").map(brief)).toEqual(["0", "2", "3", "4", "1", "5"].map((fn) => `critical hca_error 0000:0d:00.${fn} firmware_error x1`));
  });

  it("news is no finding: a link coming up, a cable plugged in, lines without an event", () => {
    for (const p of ["02-", "22-", "23-", "09-"]) expect(analyzeCapture(p), p).toEqual([]);
  });
});

describe("analyze: EFA lines, a GPU its root port's error left unrecovered, ports of pasted ibstat", () => {
  it("EFA's refused commands (kmsg/42): one warning on the RDMA device, the verbs' echo not counted", () => {
    expect(analyzeCapture("42-").map(brief)).toEqual(["warning hca_error efa_0 command_error x7"]);
  });

  it("a root port's fatal AER error the GPU's driver cannot recover from (kmsg/44): critical on that GPU", () => {
    expect(analyzeCapture("44-").map(brief)).toEqual(["critical gpu_pcie_error 0000:03:00.0 uncorrected x2"]);
  });

  const ibstat = (ports: readonly [state: string, physical: string][]): string =>
    [
      "CA 'mlx5_0'",
      "\tCA type: MT4123",
      `\tNumber of ports: ${ports.length}`,
      ...ports.flatMap(([st, ph], i) => [`\tPort ${i + 1}:`, `\t\tState: ${st}`, `\t\tPhysical state: ${ph}`, "\t\tRate: 200"]),
    ].join("\n");
  const ports = (text: string): string[] => analyzeLogs([{ name: "ibstat.txt", text }], new KernelLines()).findings.map(brief);

  it("no link on a second port beside an Active one is the unused port of a dual-port card: a note; alone, or first, a warning", () => {
    expect(
      ports(
        ibstat([
          ["Active", "LinkUp"],
          ["Down", "Polling"],
        ]),
      ),
    ).toEqual(["info hca_error mlx5_0 port 2 port_no_link x1"]);
    expect(ports(ibstat([["Down", "Polling"]]))).toEqual(["warning hca_error mlx5_0 port 1 port_no_link x1"]);
    // Port 1 read before port 2 is known Active: a warning (the order NCCL_IB_HCA's first port comes in).
    expect(
      ports(
        ibstat([
          ["Down", "Polling"],
          ["Active", "LinkUp"],
        ]),
      ),
    ).toEqual(["warning hca_error mlx5_0 port 1 port_no_link x1"]);
    // Another state than no link (the subnet manager has not activated it) stays a warning beside an Active port.
    expect(
      ports(
        ibstat([
          ["Active", "LinkUp"],
          ["Initializing", "LinkUp"],
        ]),
      ),
    ).toEqual(["warning hca_error mlx5_0 port 2 port_not_activated x1"]);
  });

  it("ibstatus, a header per port: the second port with no link beside an Active first is a note too", () => {
    const port = (n: number, state: string, phys: string): string[] => [
      `Infiniband device 'mlx5_0' port ${n} status:`,
      `\tstate:\t\t ${state}`,
      `\tphys state:\t ${phys}`,
      "\trate:\t\t 100 Gb/sec (4X EDR)",
    ];
    expect(ports([...port(1, "4: ACTIVE", "5: LinkUp"), ...port(2, "1: DOWN", "2: Polling")].join("\n"))).toEqual([
      "info hca_error mlx5_0 port 2 port_no_link x1",
    ]);
  });

  it("a port that was Active and is down later in the log is no spare: a warning (rdma link, two listings)", () => {
    const text = [
      "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0",
      "link mlx5_0/2 state ACTIVE physical_state LINK_UP netdev ib1",
      "link mlx5_0/1 state DOWN physical_state POLLING netdev ib0",
    ].join("\n");
    expect(ports(text)).toEqual(["warning hca_error mlx5_0 port 1 port_no_link x1"]);
  });

  it("a second port NCCL's NET/IB uses is no spare: a warning that names the process; where it uses only port 1, a note", () => {
    const text = [
      "node1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_0:2/IB ; OOB ib0:10.0.0.1<0>",
      ibstat([
        ["Active", "LinkUp"],
        ["Down", "Polling"],
      ]),
    ].join("\n");
    const hca = (t: string): Finding[] => analyzeLogs([{ name: "node1.txt", text: t }], new KernelLines()).findings.filter((f) => f.kind === "hca_error");
    expect(hca(text).map((f) => [f.severity, f.processes])).toEqual([["warning", ["node1:100"]]]);
    expect(hca(text.replace(" [1]mlx5_0:2/IB", "")).map((f) => f.severity)).toEqual(["info"]);
  });

  it("EFA's words get EFA's advice, not Mellanox's (kmsg/42)", () => {
    const f = analyzeCapture("42-")[0];
    expect(f?.summary).toContain("The EFA device refused a command");
    expect(f?.summary).not.toContain("mlxfwreset");
  });

  it("gpud's words for an Xid the kernel's own line gave are not counted again, in either order", () => {
    const kernel = "NVRM: Xid (PCI:0000:ae:00): 79, pid=1122, name=python, GPU has fallen off the bus.";
    const agent = "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00";
    const of = (lines: string[]): string[] => analyzeLogs([{ name: "k.txt", text: lines.join("\n") }], new KernelLines()).findings.map(brief);
    const told = ["critical gpu_xid 0000:ae:00 79 x1", "critical gpu_pcie_error 0000:ae:00 off_bus x1"];
    expect(of([kernel, agent])).toEqual(told);
    expect(of([agent, kernel])).toEqual(told);
    expect(of([agent, agent])).toEqual(told);
  });
});

describe("analyze: a GPU off the bus is one PCIe finding", () => {
  const of = (lines: string[]): string[] => analyzeLogs([{ name: "k.txt", text: lines.join("\n") }], new KernelLines()).findings.map(brief);

  it("its AER errors before the Xid 79 (nccl-pasted 375) keep their finding; the fall is not told again", () => {
    const text = readFixtureRaw(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("375-")) ?? ""}`);
    const fs = analyzeLogs([{ name: "375.log", text }], new KernelLines()).findings;
    expect(fs.filter((f) => f.kind === "gpu_pcie_error").map(brief)).toEqual(["critical gpu_pcie_error 0000:02:00.0 uncorrected x1"]);
  });

  it("lspci's revision ff of the same GPU (nccl-pasted 718's row) and its Xid 79: one off_bus finding, the first", () => {
    const lspci = "1c:00.0 VGA compatible controller: NVIDIA Corporation TU102GL [Quadro RTX 6000/8000] (rev ff)";
    const xid = "NVRM: Xid (PCI:0000:1c:00): 79, pid=1122, name=python, GPU has fallen off the bus.";
    expect(of([lspci, xid])).toEqual(["critical gpu_xid 0000:1c:00 79 x1", "critical gpu_pcie_error 0000:1c:00.0 off_bus x1"]);
    expect(of([xid, lspci])).toEqual(["critical gpu_xid 0000:1c:00 79 x1", "critical gpu_pcie_error 0000:1c:00 off_bus x1"]);
    // Another GPU's row is its own finding.
    expect(of([xid, lspci.replace("1c:00.0", "1d:00.0")])).toEqual([
      "critical gpu_xid 0000:1c:00 79 x1",
      "critical gpu_pcie_error 0000:1c:00 off_bus x1",
      "critical gpu_pcie_error 0000:1d:00.0 off_bus x1",
    ]);
  });
});

describe("analyze: kernel lines beside NCCL logs", () => {
  // Rank 0 is gpu34:34088 on busId 7000 (0000:07:00.0); rank 6 is gpu41:3928 on the same address.

  it("names the rank on the GPU of an Xid on the host its prefix names", () => {
    const f = withNccl([xid79("Nov 24 02:47:01 gpu34 kernel: [171167.620236] ", 4242)]).find((x) => x.kind === "gpu_xid");
    expect(f).toMatchObject({ severity: "critical", ranks: [0], processes: ["gpu34:34088"], host: "gpu34", evidence: ["dmesg.txt:1"] });
    expect(f?.summary).toContain("Rank 0 (gpu34:34088) runs on this GPU");
  });

  it("names the process by the pid the driver printed, on that host", () => {
    // A pid on gpu41 that is rank 7 (0000:88:00.0), on a GPU address no rank of gpu41 uses.
    const f = withNccl(["Nov 24 02:47:01 gpu41 kernel: NVRM: Xid (PCI:0000:b3:00): 31, pid=3929, name=python, Ch 0000000a, intr 00000000. MMU Fault"]).find(
      (x) => x.kind === "gpu_xid",
    );
    // Xid 31 is the application's (restart the job): critical once it is a rank's of these logs.
    expect(f).toMatchObject({ severity: "critical", code: 31, action: "restart_job", ranks: [7], processes: ["gpu41:3929"] });
  });

  it("without a host, an address several nodes use names no rank, and says which could be", () => {
    const f = withNccl([xid79("[171167.620236] ", 4242)]).find((x) => x.kind === "gpu_xid");
    expect(f).toMatchObject({ severity: "critical", ranks: [], processes: [] });
    expect(f?.summary).toContain(
      "The kernel lines name no host, and the logs have 4: ranks 0,6 on gpu34, gpu41 run on a GPU at this address or have the pid the driver named.",
    );
  });

  it("an application's Xid on no rank of these logs stays a warning", () => {
    const f = withNccl(["Nov 24 02:47:01 gpu34 kernel: NVRM: Xid (PCI:0000:b3:00): 31, pid=1, name=other, Ch 0000000a"]).find((x) => x.kind === "gpu_xid");
    expect(f).toMatchObject({ severity: "warning", ranks: [], processes: [] });
  });

  it("an HCA link down names the ranks whose NET/IB uses it", () => {
    const f = withNccl(["Nov 24 02:47:01 gpu41 kernel: mlx5_core 0000:0c:00.0 mlx5_0: Port: 1 Link DOWN"]).find((x) => x.kind === "hca_error");
    expect(f).toMatchObject({ severity: "warning", event: "link_down", device: "mlx5_0", ranks: [6, 7], processes: ["gpu41:3928", "gpu41:3929"] });
    expect(f?.summary).toMatch(/^HCA mlx5_0 \(PCI 0000:0c:00\.0\) port 1 on gpu41 reported link down/);
    expect(withNccl(["Nov 24 02:47:01 gpu41 kernel: mlx5_core 0000:0c:00.0 mlx5_7: Port: 1 Link DOWN"]).find((x) => x.kind === "hca_error")?.ranks).toEqual([]);
  });

  it("the culprit comes first: rank_behind, then the hardware, then collective_mismatch and watchdog_timeout", () => {
    const nccl = (prefix: string): { name: string; text: string } => {
      const f = listFixtures("nccl", ".log").find((x) => x.startsWith(prefix)) ?? "";
      return { name: f, text: readFixtureRaw(`nccl/${f}`) };
    };
    const xid = { name: "dmesg.txt", text: xid79("[171167.620236] ", 4242) };
    const kinds = (logs: { name: string; text: string }[]): string[] => analyzeLogs(logs, new KernelLines()).findings.map((f) => `${f.severity} ${f.kind}`);
    expect(kinds([nccl("91-"), xid])).toEqual(["critical gpu_xid", "critical collective_mismatch", "critical gpu_pcie_error"]);
    expect(kinds([nccl("95-"), xid])).toEqual(["critical rank_behind", "critical gpu_xid", "critical watchdog_timeout", "critical gpu_pcie_error"]);
  });
});

describe("analyze: kernel lines of many hosts in one file", () => {
  const lost = readFixtureRaw(`kmsg/${kmsg.find((x) => x.startsWith("01-")) ?? ""}`)
    .split("\n")
    .filter((l) => l.includes("NVRM:"));

  it("pdsh interleaves two nodes' three-row reports of a GPU lost at probe: one finding per node and address", () => {
    const other = lost.map((l) => l.replace("0000:b3:00.0", "0000:3b:00.0"));
    // pdsh puts `host: ` before each row, dmesg's indentation of the continuation rows kept.
    const rows = lost.flatMap((l, i) => [`node1: ${l}`, `node2: ${other[i] ?? ""}`]);
    expect(analyzeLogs([{ name: "pdsh.txt", text: rows.join("\n") }], new KernelLines()).findings.map(brief)).toEqual([
      "critical gpu_xid 0000:b3:00.0 79 x1 @node1",
      "critical gpu_xid 0000:3b:00.0 79 x1 @node2",
      "critical gpu_pcie_error 0000:b3:00.0 off_bus x1 @node1",
      "critical gpu_pcie_error 0000:3b:00.0 off_bus x1 @node2",
    ]);
  });

  it("one node's Xid 79 does not hide another node's fall at the same address", () => {
    const text = [
      "Nov 24 02:47:01 gpu34 kernel: NVRM: Xid (PCI:0000:07:00): 79, pid=34088, GPU has fallen off the bus.",
      "Nov 24 02:47:01 gpu34 kernel: NVRM: GPU 0000:07:00.0: GPU has fallen off the bus.",
      "Nov 24 02:47:02 gpu41 kernel: NVRM: GPU 0000:07:00.0: GPU has fallen off the bus.",
    ].join("\n");
    expect(analyzeLogs([{ name: "syslog", text }], new KernelLines()).findings.map(brief)).toEqual([
      "critical gpu_xid 0000:07:00 79 x1 @gpu34",
      "critical gpu_xid 0000:07:00.0 79 x1 @gpu41",
      "critical gpu_pcie_error 0000:07:00 off_bus x1 @gpu34",
      "critical gpu_pcie_error 0000:07:00.0 off_bus x1 @gpu41",
    ]);
  });

  it("a fleet's flood of corrected PCIe errors does not crowd out an Xid 79: the least severe are given up, and counted", () => {
    const rows: string[] = [];
    for (let n = 0; n < 130; n++)
      for (let d = 0; d < 8; d++)
        rows.push(
          `node${n}: [68185.875237] nvidia 0000:${(0x10 + d).toString(16)}:00.0: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)`,
        );
    rows.push(xid79("node999: [171167.620236] ", 4242));
    const f = analyzeLogs([{ name: "fleet.txt", text: rows.join("\n") }], new KernelLines()).findings;
    expect(f).toHaveLength(1001);
    expect(f[0]).toMatchObject({ kind: "gpu_xid", severity: "critical", host: "node999" });
    // The Xid's fall as a PCIe error (critical) keeps its place too: 998 corrected groups of the 1,040 are kept.
    expect(f[1]).toMatchObject({ kind: "gpu_pcie_error", severity: "critical", event: "off_bus", host: "node999" });
    expect(f.filter((x) => x.kind === "gpu_pcie_error")).toHaveLength(999);
    expect(f.find((x) => x.kind === "kernel_log_truncated")).toMatchObject({ severity: "info", count: 42 });
  });
});

describe("analyze: naming", () => {
  it("an HCA health event without a device name takes the name an earlier line gave its address", () => {
    const f = withNccl([
      "Nov 24 02:40:00 gpu41 kernel: mlx5_core 0000:0c:00.0 mlx5_0: Port: 1 Link INIT",
      "Nov 24 02:47:01 gpu41 kernel: mlx5_core 0000:0c:00.0: poll_health:801:(pid 0): device's health compromised - reached miss count",
    ]).find((x) => x.kind === "hca_error");
    expect(f).toMatchObject({ severity: "critical", event: "firmware_error", device: "mlx5_0", ranks: [6, 7] });
  });

  it("Xid 154's action is the recovery the driver asks for", () => {
    const f = analyzeCapture("18-").filter((x) => x.code === 154);
    expect(f.map((x) => x.action)).toEqual(["reset_gpu", "reset_gpu", "reset_gpu", "reset_gpu"]);
  });

  it("an info-level Xid on a rank's GPU names the rank but not as a cause", () => {
    const f = withNccl(["Nov 24 02:47:01 gpu34 kernel: NVRM: Xid (PCI:0000:07:00): 45, pid=34088, name=python, Ch 00000010"]).find((x) => x.kind === "gpu_xid");
    expect(f).toMatchObject({ severity: "info", ranks: [0] });
    expect(f?.summary).not.toContain("may start here");
  });
});
