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

  it("older iproute2's `1/1: mlx5_0/1: ...`, a 2-port HCA, ACTIVE_DEFER (Active)", () => {
    expect(
      readings(
        [
          "1/1: mlx5_0/1: state DOWN physical_state POLLING netdev ib0",
          "2/2: mlx5_1/2: state ACTIVE_DEFER physical_state LINK_UP netdev ib1",
          "link mlx5_2/2 state DOWN physical_state DISABLED netdev ens2f1",
        ].join("\n"),
      ).map((r) => [r.hca, r.port, r.trouble]),
    ).toEqual([
      ["mlx5_0", 1, "no_link"],
      ["mlx5_1", 2, "active"],
      ["mlx5_2", 2, "disabled"],
    ]);
  });

  it("a port printed alone (`ibstat mlx5_3 1`) after another HCA's block is no reading of that HCA", () => {
    const full = ["CA 'mlx5_0'", "\tCA type: MT4123", "\tPort 1:", "\t\tState: Active", "\t\tPhysical state: LinkUp"];
    const alone = ["Port 1:", "State: Down", "Physical state: Polling"];
    expect(readings([...full, ...alone].join("\n")).map((r) => [r.hca, r.trouble])).toEqual([["mlx5_0", "active"]]);
    const ibstatus = ["Infiniband device 'mlx5_0' port 1 status:", "\tstate:\t\t 4: ACTIVE", "\tphys state:\t 5: LinkUp"];
    expect(readings([...ibstatus, ...alone].join("\n")).map((r) => [r.hca, r.trouble])).toEqual([["mlx5_0", "active"]]);
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

  it("two hosts' ibstat of one HCA pasted together: the Active one is no port that came back", () => {
    const block = (state: string, phys: string): string[] => ["CA 'mlx5_0'", "\tPort 1:", `\t\tState: ${state}`, `\t\tPhysical state: ${phys}`];
    const fs = analyzed("two.txt", ["node-a:", ...block("Down", "Polling"), "node-b:", ...block("Active", "LinkUp")].join("\n"));
    expect(fs.map((f) => [f.kind, f.severity])).toEqual([["hca_error", "warning"]]);
  });

  it("a port Active throughout is nothing", () => {
    expect(analyzed("ok.txt", readFixtureRaw("tools/ibstat/08-gpud-ibstatus-a100-8x-hdr200-spaces.txt"))).toEqual([]);
  });
});
