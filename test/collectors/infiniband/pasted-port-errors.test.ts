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
  return text.split("\n").flatMap((l) => r.line(l) ?? []);
};
const pasted = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const analyzed = (text: string) => analyzeLogs([{ name: "x.log", text }], new KernelLines()).findings.filter((f) => f.kind === "hca_error");

describe("ibqueryerrors, line by line", () => {
  it("the fabric: each host's ports, the switch's sum but not its ports again, link errors apart from congestion", () => {
    const rs = readings(readCapture(FABRIC));
    expect(rs.map((r) => [r.node, r.guid, r.port, r.linkErrors.length])).toEqual([
      ["dl380g7 mlx4_0", "0x7cfe900300179b31", "1", 0],
      ["dl380g7 mlx4_0", "0x7cfe900300179b32", "2", 0],
      ["server mlx4_0", "0x2c9030042dff1", "1", 0],
      ["MF0;ys23ib4:SX6036/U1", "0x2c903006e29b0", "ALL", 2],
      ["rd240 mlx4_0", "0xe41d2d0300e0bae1", "1", 0],
      ["rd240 mlx4_0", "0xe41d2d0300e0bae2", "2", 0],
    ]);
    expect(rs[3]?.linkErrors).toEqual(["LinkErrorRecoveryCounter 15", "LinkDownedCounter 48"]);
    expect(rs[3]?.others).toEqual(["PortRcvSwitchRelayErrors 2461", "PortXmitDiscards 15854", "VL15Dropped 5", "PortXmitWait 4294967295"]);
  });

  it("837: a `port ALL` row with rates; a port row with no sum before it is read", () => {
    expect(readings(pasted("837-")).map((r) => [r.guid, r.port, r.linkErrors, r.others])).toEqual([
      ["0x1070fd0300370ea2", "ALL", ["LinkDownedCounter 25", "PortRcvErrors 26"], ["PortXmitDiscards 2846", "PortXmitWait 14681376621"]],
    ]);
    const r = new PastedPortErrors();
    expect(r.line("   GUID 0x506b4b0300a1c210 port 4: [XmtWait == 2109] [SymbolErrorCounter == 41] [LinkDownedCounter == 2]")?.linkErrors).toEqual([
      "SymbolErrorCounter 41",
      "LinkDownedCounter 2",
    ]);
    expect(r.line("GUID 0x1 in prose: [x]")).toBeUndefined();
    expect(r.line("## Summary: 4 nodes checked, 4 bad nodes found")).toBeUndefined();
  });
});

describe("ibqueryerrors in analyze", () => {
  it("the fabric: the switch's link errors a warning; the hosts' congestion notes, tied to their HCA and host", () => {
    const fs = analyzed(readCapture(FABRIC));
    expect(fs.filter((f) => f.severity === "warning").map((f) => [f.device, f.event])).toEqual([["0x2c903006e29b0 port ALL", "port_errors"]]);
    expect(fs.find((f) => f.severity === "warning")?.summary).toContain("LinkDownedCounter 48");
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
