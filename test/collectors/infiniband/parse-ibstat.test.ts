import { describe, expect, it } from "vitest";
import { ibstatPhysStateId, ibstatStateId, parseIbstat, type IbstatResult } from "../../../collectors/infiniband/parse-ibstat.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const IBSTATUS = ["08-gpud-ibstatus-a100-8x-hdr200-spaces.txt", "12-infiniband_exporter-26-ibstatus-roce-ndr400-ethernet.txt"];
const IBSTAT = listFixtures("tools/ibstat").filter((f) => !IBSTATUS.includes(f));

const parse = (f: string): IbstatResult => parseIbstat(readCapture(`tools/ibstat/${f}`));

/** Values of `Key:` lines in capture order, read with a plain regex (the oracle). */
function valuesOf(text: string, key: string): string[] {
  return [...text.matchAll(new RegExp(`^[ \\t]+${key}:[ \\t]*(.*?)[ \\t]*$`, "gm"))].map((m) => m[1] ?? "");
}

describe("ibstat: every real capture, checked field by field against the capture text", () => {
  it("covers the seven ibstat captures", () => {
    expect(IBSTAT).toHaveLength(7);
  });

  it.each(IBSTAT)("%s", (f) => {
    const text = readCapture(`tools/ibstat/${f}`);
    const r = parse(f);
    const cas = r.cas;
    const ports = cas.flatMap((c) => c.ports);
    expect(cas.map((c) => c.name)).toEqual([...text.matchAll(/^CA '([^']+)'$/gm)].map((m) => m[1]));
    expect(cas.map((c) => c.caType)).toEqual(valuesOf(text, "CA type"));
    expect(cas.map((c) => c.firmwareVersion)).toEqual(valuesOf(text, "Firmware version"));
    expect(cas.map((c) => c.hardwareVersion)).toEqual(valuesOf(text, "Hardware version"));
    expect(cas.map((c) => c.nodeGuid)).toEqual(valuesOf(text, "Node GUID"));
    expect(cas.map((c) => c.systemImageGuid)).toEqual(valuesOf(text, "System image GUID"));
    expect(cas.map((c) => c.numberOfPorts)).toEqual(valuesOf(text, "Number of ports").map(Number));
    expect(ports.map((p) => p.port)).toEqual([...text.matchAll(/^\s+Port (\d+):$/gm)].map((m) => Number(m[1])));
    expect(ports.map((p) => p.state)).toEqual(valuesOf(text, "State"));
    expect(ports.map((p) => p.physicalState)).toEqual(valuesOf(text, "Physical state"));
    expect(ports.map((p) => p.rateGbps)).toEqual(valuesOf(text, "Rate").map(Number));
    expect(ports.map((p) => p.baseLid)).toEqual(valuesOf(text, "Base lid").map(Number));
    expect(ports.map((p) => p.smLid)).toEqual(valuesOf(text, "SM lid").map(Number));
    expect(ports.map((p) => p.lmc)).toEqual(valuesOf(text, "LMC").map(Number));
    expect(ports.map((p) => p.capabilityMask)).toEqual(valuesOf(text, "Capability mask"));
    expect(ports.map((p) => p.portGuid)).toEqual(valuesOf(text, "Port GUID"));
    expect(ports.map((p) => p.linkLayer)).toEqual(valuesOf(text, "Link layer"));
    expect(ports.length).toBe(cas.length);
    expect(r.warnings).toEqual([]);
    expect(r.problem).toBe(text.includes("ibpanic") ? "ibpanic: main: stat of IB device 'mlx5_8' failed: No such file or directory" : undefined);
  });
});

describe("ibstat: what the captures show", () => {
  it("01: 8 CAs before the ibpanic are kept and the panic is reported without its pid", () => {
    const r = parse("01-gpud-a100-8x-ib200-ibpanic-spaces.txt");
    expect(r.cas.map((c) => c.name)).toEqual(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"]);
    expect(r.cas[7]?.ports[0]).toMatchObject({ port: 1, state: "Active", rateGbps: 200, baseLid: 13305, smLid: 1, linkLayer: "InfiniBand" });
    expect(r.problem).not.toMatch(/1400444/);
  });

  it("04: eight NDR400 IB ports and one RoCE bond (spaces, not TABs)", () => {
    const r = parse("04-gpud-h100-9ca-8ib400-1eth200-spaces.txt");
    expect(r.cas.filter((c) => c.ports[0]?.linkLayer === "InfiniBand" && c.ports[0].rateGbps === 400)).toHaveLength(8);
    expect(r.cas[8]).toMatchObject({ name: "mlx5_bond_0", caType: "MT41692", firmwareVersion: "32.38.3056", hardwareVersion: "1" });
    expect(r.cas[8]?.ports[0]).toMatchObject({ state: "Active", rateGbps: 200, baseLid: 0, linkLayer: "Ethernet" });
  });

  it("05/07: Down ports with Disabled or Polling physical state", () => {
    const downs = (f: string) =>
      parse(f)
        .cas.filter((c) => c.ports[0]?.state === "Down")
        .map((c) => `${c.name}:${c.ports[0]?.physicalState}:${c.ports[0]?.rateGbps}`);
    expect(downs("05-gpud-h100-12ca-some-down-ib-eth-mixed.txt")).toEqual(["mlx5_2:Disabled:40", "mlx5_7:Disabled:40", "mlx5_8:Disabled:40"]);
    expect(downs("07-gpud-h100-12ca-eth-2down-polling-EDITED.txt")).toEqual(["mlx5_11:Polling:40", "mlx5_5:Disabled:40"]);
  });

  it("tolerates CRLF and debug ibwarn lines before the output", () => {
    const text = readCapture("tools/ibstat/02-gpud-a100-cx6dx-8ib200-1eth200.txt");
    const noisy = `ibwarn: [4242] resolve_self: debug chatter\n${text.replace(/\n/g, "\r\n")}`;
    const r = parseIbstat(noisy);
    expect(r.cas).toEqual(parseIbstat(text).cas);
    expect(r.warnings).toEqual(["resolve_self: debug chatter"]);
    expect(r.problem).toBeUndefined();
  });

  it("errors/09: ibpanic with no CA at all", () => {
    const r = parseIbstat(readCapture("tools/errors/09-ibstat-ibpanic-mlx5_an0-azhpc-images-213.txt"));
    expect(r.cas).toEqual([]);
    expect(r.problem).toBe("ibpanic: main: stat of IB device 'mlx5_an0' failed: No such file or directory");
  });

  it("garbled output keeps what parsed and says what did not", () => {
    const text = readCapture("tools/ibstat/04-gpud-h100-9ca-8ib400-1eth200-spaces.txt");
    const r = parseIbstat(`${text.slice(0, 700)}\u0000\u00ff%%garbled%%\n`);
    expect(r.cas.length).toBeGreaterThanOrEqual(1);
    expect(r.cas[0]?.name).toBe("mlx5_0");
    expect(r.problem).toMatch(/^unexpected line in ibstat output: /);
  });
});

describe("ibstatus is another tool: not mistaken for ibstat", () => {
  it.each(IBSTATUS)("%s yields no CA and a problem", (f) => {
    const r = parse(f);
    expect(r.cas).toEqual([]);
    expect(r.problem).toBe(`unexpected line in ibstat output: "Infiniband device 'mlx5_0' port 1 status:"`);
  });
});

describe("state words", () => {
  it("maps ibstat's words to IBA ids", () => {
    expect(["Down", "Initializing", "Armed", "Active", "Active Defer", "???"].map(ibstatStateId)).toEqual([1, 2, 3, 4, 5, undefined]);
    expect(
      ["Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest", "Phy Test", "No state change"].map(
        ibstatPhysStateId,
      ),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 7, undefined]);
    expect(ibstatStateId(undefined)).toBeUndefined();
  });
});
