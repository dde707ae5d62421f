/**
 * Port states pasted beside the logs (collectors/infiniband/pasted-port-state.ts), and what
 * `ringwatch analyze` makes of them (agent/analyze-kernel.ts portEvent): the real captures are
 * test/fixtures/tools/ibstat (gpud's ibstat of an H100 host with a port Polling and one Disabled,
 * ibstatus of healthy hosts) and nccl-pasted 445 (ibstatus, ports Disabled) and 459 (`rdma link`).
 */
import { describe, expect, it } from "vitest";
import { KernelLines } from "../../../agent/analyze-kernel.js";
import { PastedPortStates, type PortReading } from "../../../collectors/infiniband/pasted-port-state.js";
import { analyzeLogs } from "../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture, readFixtureRaw } from "../../helpers/fixtures.js";

const readings = (text: string): PortReading[] => {
  const r = new PastedPortStates();
  return text.split("\n").flatMap((l) => r.line(l) ?? []);
};
const pasted = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const analyzed = (name: string, text: string) => analyzeLogs([{ name, text }], new KernelLines()).findings;

describe("ibstat, ibstatus and rdma link, line by line", () => {
  it("gpud's ibstat of 12 HCAs: mlx5_11 Down/Polling and mlx5_5 Down/Disabled, the other ten Active", () => {
    const rs = readings(readFixtureRaw("tools/ibstat/07-gpud-h100-12ca-eth-2down-polling-EDITED.txt"));
    expect(rs.filter((r) => r.trouble !== "active").map((r) => [r.hca, r.port, r.state, r.physical, r.trouble, r.tool])).toEqual([
      ["mlx5_11", 1, "DOWN", "POLLING", "no_link", "ibstat"],
      ["mlx5_5", 1, "DOWN", "DISABLED", "disabled", "ibstat"],
    ]);
    expect(rs.filter((r) => r.trouble === "active")).toHaveLength(10);
  });

  it("ibstatus of healthy hosts: every port Active", () => {
    for (const f of ["08-gpud-ibstatus-a100-8x-hdr200-spaces.txt", "12-infiniband_exporter-26-ibstatus-roce-ndr400-ethernet.txt"]) {
      const rs = readings(readFixtureRaw(`tools/ibstat/${f}`));
      expect(rs.length).toBeGreaterThan(0);
      expect(rs.every((r) => r.trouble === "active" && r.tool === "ibstatus")).toBe(true);
    }
  });

  it("445's ibstatus: ports DOWN and Disabled; 459's rdma link: POLLING, LINK_UP, then ACTIVE", () => {
    expect(readings(pasted("445-")).map((r) => [r.hca, r.trouble])[0]).toEqual(["mlx5_11", "disabled"]);
    expect(readings(pasted("459-")).map((r) => [r.hca, r.port, r.physical, r.trouble])).toEqual([
      ["mlx5_7", 1, "POLLING", "no_link"],
      ["mlx5_7", 1, "LINKUP", "not_activated"],
      ["mlx5_7", 1, "LINKUP", "active"],
    ]);
  });

  it("lines that only look alike are no reading", () => {
    expect(readings(["state: running", "phys state: fine", "link up on eth0", "link eth0 state UP", "State: Down"].join("\n"))).toEqual([]);
  });
});

describe("what analyze says of them", () => {
  it("a port with no link is a warning, one switched off a note, and its coming back Active a note", () => {
    const fs = analyzed("ibstat.txt", readFixtureRaw("tools/ibstat/07-gpud-h100-12ca-eth-2down-polling-EDITED.txt"));
    expect(fs.map((f) => [f.kind, f.severity])).toEqual([
      ["hca_error", "warning"],
      ["hca_error", "info"],
    ]);
    expect(fs[0]?.summary).toContain("HCA mlx5_11 port 1 reported no link (ibstat: state DOWN, physical state POLLING)");
    const link = analyzed("rdma.txt", pasted("459-"));
    expect(link.map((f) => f.severity)).toEqual(["warning", "warning", "info"]);
    expect(link[0]?.summary).toContain("HCA mlx5_7 port 1 reported no link (rdma link: state DOWN, physical state POLLING)");
    expect(link[1]?.summary).toContain("a link the subnet manager has not activated");
    expect(link[2]?.summary).toContain("the port Active again");
  });

  it("a port Active throughout is nothing", () => {
    expect(analyzed("ok.txt", readFixtureRaw("tools/ibstat/08-gpud-ibstatus-a100-8x-hdr200-spaces.txt"))).toEqual([]);
  });
});
