import { describe, expect, it } from "vitest";
import { blockForPort, parsePerfquery } from "../../../collectors/infiniband/parse-perfquery.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const CAPTURES = listFixtures("tools/perfquery");

describe("perfquery: every real capture, checked against the capture text", () => {
  it("covers the five captures (-x and -E)", () => {
    expect(CAPTURES).toHaveLength(5);
  });

  it.each(CAPTURES)("%s", (f) => {
    const text = readCapture(`tools/perfquery/${f}`);
    const r = parsePerfquery(text);
    const headers = [...text.matchAll(/^# (.+?): Lid (\d+) port (\d+)/gm)];
    expect(r.blocks.map((b) => [b.title, b.lid, b.port])).toEqual(headers.map((h) => [h[1], Number(h[2]), Number(h[3])]));
    // Every decimal `Name:....value` line lands in its block's counters (PortSelect aside), in order.
    const chunks = text.split(/^# /m).slice(1);
    chunks.forEach((chunk, i) => {
      const want = [...chunk.matchAll(/^(\w+):\.+(\d+)$/gm)].filter((m) => m[1] !== "PortSelect").map((m) => [m[1], Number(m[2])]);
      expect(Object.entries(r.blocks[i]?.counters ?? {})).toEqual(want);
      expect(r.blocks[i]?.portSelect).toBe(Number(/^PortSelect:\.+(\d+)$/m.exec(chunk)?.[1]));
      expect(r.blocks[i]?.fields.CounterSelect).toBe("0x0000");
    });
    expect(r.problem).toBeUndefined();
    expect(r.warnings).toEqual([]);
  });
});

describe("perfquery: what the captures show", () => {
  it("01: a busy switch port with 64-bit data counters and a few errors", () => {
    const r = parsePerfquery(readCapture("tools/perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt"));
    const b = blockForPort(r, 1);
    expect(b?.capMask).toBe("CapMask: 0x5300 CapMask2: 0x0000002");
    expect(b?.counters).toMatchObject({
      PortXmitData: 178791657177235,
      PortRcvData: 178762341961629,
      LinkDownedCounter: 1,
      PortRcvSwitchRelayErrors: 7,
      PortXmitDiscards: 20046,
      PortXmitWait: 41864608,
      QP1Dropped: 0,
    });
    expect(b?.fields.CounterSelect2).toBe("0x00000000");
  });

  it("03: two ports in one output; blockForPort picks by port, never another port's block", () => {
    const r = parsePerfquery(readCapture("tools/perfquery/03-infiniband_exporter-perfquery-lx-0x7cfe9003009ce5b0.txt"));
    expect(blockForPort(r, 1)?.counters.PortXmitWait).toBe(22730501);
    expect(blockForPort(r, 2)?.counters.PortXmitWait).toBe(36510964);
    expect(blockForPort(r, 3)).toBeUndefined();
    const one = parsePerfquery(readCapture("tools/perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt"));
    expect(blockForPort(one, 2)).toBeUndefined();
  });

  it("05: -E PortRcvErrorDetails parses with the same code", () => {
    const r = parsePerfquery(readCapture("tools/perfquery/05-infiniband_exporter-perfquery-E-0x7cfe9003009ce5b0-2.txt"));
    expect(r.blocks[0]?.title).toBe("PortRcvErrorDetails counters");
    expect(r.blocks[0]?.capMask).toBeUndefined();
    expect(Object.keys(r.blocks[0]?.counters ?? {})).toEqual([
      "PortLocalPhysicalErrors",
      "PortMalformedPktErrors",
      "PortBufferOverrunErrors",
      "PortDLIDMappingErrors",
      "PortVLMappingErrors",
      "PortLoopingErrors",
    ]);
  });

  it("errors/11: the perfquery run that could not open the MAD port is one clear line", () => {
    const capture = readCapture("tools/errors/11-perfquery-ibnetdiscover-mad-rpc-open-port-failed-infiniband_exporter-26.txt");
    const perfqueryPart = capture.slice(capture.indexOf("# perfquery\n") + "# perfquery\n".length);
    const r = parsePerfquery(perfqueryPart);
    expect(r.blocks).toEqual([]);
    expect(r.problem).toBe("iberror: failed: Failed to open '(null)' port '0' (ibwarn: mad_rpc_open_port: client_register for mgmt 1 failed)");
  });

  it("garbled or empty output is a problem, not a crash", () => {
    const text = readCapture("tools/perfquery/02-infiniband_exporter-perfquery-lx-0x7cfe9003003b4b96.txt");
    const garbled = parsePerfquery(`${text.slice(0, 300)}\u0000\u00ff%%garbled%%\n`);
    expect(garbled.blocks).toHaveLength(1);
    expect(garbled.problem).toMatch(/^unexpected line in perfquery output: /);
    expect(parsePerfquery("").problem).toBe("perfquery printed no counters");
  });
});
