/**
 * ibqueryerrors pasted beside the logs (collectors/infiniband/pasted-port-errors.ts), and what
 * `ringwatch analyze` makes of it (agent/analyze-kernel.ts portErrorsEvent): the real captures are
 * test/fixtures/tools/ibqueryerrors/01 (a small fabric's switch with link downs, its hosts with only
 * PortXmitWait) and nccl-pasted 837 (one `port ALL` row with the rates newer versions print).
 */
import { describe, expect, it } from "vitest";
import { KernelLines } from "../../../agent/analyze-kernel.js";
import { PastedPortErrors, type PortErrorsReading } from "../../../collectors/infiniband/pasted-port-errors.js";
import { analyzeLogs } from "../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const FABRIC = "tools/ibqueryerrors/01-linux-rdma-2021-sx6036-switch-all-and-ports-link-downed-mlx4-hosts-xmitwait.txt";
const readings = (text: string): PortErrorsReading[] => {
  const r = new PastedPortErrors();
  return [...text.split("\n").flatMap((l, i) => r.line(l, i + 1)), ...r.end()];
};
const pasted = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const analyzed = (text: string) => analyzeLogs([{ name: "x.log", text }], new KernelLines()).findings.filter((f) => f.kind === "hca_error");

describe("ibqueryerrors, line by line", () => {
  it("the fabric: each host's ports, the switch's ports rather than their sum, link errors apart from congestion", () => {
    const rs = readings(readCapture(FABRIC));
    expect(rs.map((r) => [r.node, r.guid, r.port, r.linkErrors.length])).toEqual([
      ["dl380g7 mlx4_0", "0x7cfe900300179b31", "1", 0],
      ["dl380g7 mlx4_0", "0x7cfe900300179b32", "2", 0],
      ["server mlx4_0", "0x2c9030042dff1", "1", 0],
      ...["0", "1", "2", "3", "4", "5", "6", "7", "8"].map((p) => [
        "MF0;ys23ib4:SX6036/U1",
        "0x2c903006e29b0",
        p,
        p === "0" ? 0 : p === "5" || p === "7" ? 3 : 1,
      ]),
      ["rd240 mlx4_0", "0xe41d2d0300e0bae1", "1", 0],
      ["rd240 mlx4_0", "0xe41d2d0300e0bae2", "2", 0],
    ]);
    expect(rs[8]?.linkErrors).toEqual(["SymbolErrorCounter 65535", "LinkErrorRecoveryCounter 8", "LinkDownedCounter 2"]);
    expect(rs[8]?.others).toEqual(["PortRcvSwitchRelayErrors 149", "PortXmitDiscards 649", "PortXmitWait 84704351"]);
  });

  it("837: a `port ALL` row with rates, the paste's last line, is read at its end", () => {
    expect(readings(pasted("837-")).map((r) => [r.guid, r.port, r.linkErrors, r.others, r.lineNo])).toEqual([
      ["0x1070fd0300370ea2", "ALL", ["LinkDownedCounter 25", "PortRcvErrors 26"], ["PortXmitDiscards 2846", "PortXmitWait 14681376621"], 1],
    ]);
  });

  it("a sum its ports follow is not read; one no port follows is; data counters, zeros and a stale header are none", () => {
    const r = readings(
      [
        'Errors for 0x0002c903 "SW1"',
        "   GUID 0x0002c903 port ALL: [SymbolErrorCounter == 400] [PortXmitWait == 5000]",
        "   GUID 0x0002c903 port 7: [SymbolErrorCounter == 400]",
        "   GUID 0x0002c903 port 9: [PortXmitWait == 5000]",
        'Errors for "node1 mlx5_0"',
        "   GUID 0x1 port 1: [SymbolErrorCounter == 0] [PortXmitData == 123456789]",
        "## Summary: 2 nodes checked",
        "   GUID 0x0002c904 port 17: [LinkDownedCounter == 40]",
        'Data Counters for "node2 mlx5_1"',
        "   GUID 0x2 port 1: [PortXmitData == 123456789] [PortRcvData == 5]",
        "   GUID 0x0002c905 port ALL: [LinkDownedCounter == 3]",
        "the end",
      ].join("\n"),
    );
    expect(r.map((x) => [x.guid, x.port, x.node, x.linkErrors, x.others])).toEqual([
      ["0x0002c903", "7", "SW1", ["SymbolErrorCounter 400"], []],
      ["0x0002c903", "9", "SW1", [], ["PortXmitWait 5000"]],
      ["0x0002c904", "17", undefined, ["LinkDownedCounter 40"], []],
    ]);
  });
});

describe("ibqueryerrors in analyze", () => {
  it("the fabric: the switch's ports with link errors are warnings; the hosts' congestion notes, tied to their HCA and host", () => {
    const fs = analyzed(readCapture(FABRIC));
    expect(fs.filter((f) => f.severity === "warning").map((f) => f.device)).toEqual(
      ["1", "2", "3", "4", "5", "6", "7", "8"].map((p) => `0x2c903006e29b0 port ${p}`),
    );
    expect(fs.filter((f) => f.severity === "warning").every((f) => f.event === "port_errors")).toBe(true);
    expect(fs.find((f) => f.device === "0x2c903006e29b0 port 5")?.summary).toContain("SymbolErrorCounter 65535");
    const notes = fs.filter((f) => f.severity === "info");
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.every((f) => f.event === "port_congestion")).toBe(true);
    expect(notes.map((f) => f.summary).join(" ")).toContain("HCA mlx4_0 port 1");
  });

  it("837: a warning naming the GUID, no rank", () => {
    const fs = analyzed(pasted("837-"));
    expect(fs.map((f) => [f.severity, f.device, f.ranks])).toEqual([["warning", "0x1070fd0300370ea2 port ALL", []]]);
  });
});
