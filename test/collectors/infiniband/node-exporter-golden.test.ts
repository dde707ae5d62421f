/**
 * HARD REQUIREMENT: on node_exporter's own sysfs fixture tree, every node_infiniband_* series of
 * node_exporter's golden output has a ringwatch_infiniband_* twin with the same labels and value,
 * and ringwatch exposes no series node_exporter does not (for the families both have).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInfinibandCollector } from "../../../collectors/infiniband/collector.js";
import { readCapture } from "../../helpers/fixtures.js";
import { makeDeps } from "../../helpers/collector-deps.js";
import { exposed, fixedNow } from "./helpers.js";
import { parsePromText, seriesKey, type Series } from "../../helpers/exposition.js";
import { makeTree, NODE_EXPORTER_GOLDEN, NODE_EXPORTER_TTAR, type Tree } from "./trees.js";

/** Families ringwatch has and node_exporter does not. */
const RINGWATCH_ONLY = new Set(["counters_saturated", "counters_unreadable", "hw_counters_total"]);

const short = (name: string, prefix: string): string => name.slice(prefix.length);
const nonEmpty = (labels: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== ""));

let tree: Tree;
let ours: Series[];
let golden: Series[];
let goldenTypes: Map<string, string>;
let ourTypes: Map<string, string>;

beforeAll(async () => {
  tree = makeTree(NODE_EXPORTER_TTAR);
  const deps = makeDeps({ now: fixedNow });
  const collector = createInfinibandCollector(deps, { sysfsRoot: tree.root, source: "sysfs", ibstat: "ibstat", perfquery: "perfquery" });
  await collector.update?.();
  ours = await exposed(deps);
  ourTypes = parsePromText(await deps.registry.metrics()).types;
  const g = parsePromText(readCapture(NODE_EXPORTER_GOLDEN));
  golden = g.series.filter((s) => s.name.startsWith("node_infiniband_"));
  goldenTypes = g.types;
});
afterAll(() => tree.remove());

describe("node_exporter golden output vs ringwatch on the same tree", () => {
  it("the golden file has the families this test is about", () => {
    expect(new Set(golden.map((s) => s.name)).size).toBeGreaterThanOrEqual(25);
    expect(golden.length).toBeGreaterThanOrEqual(50);
  });

  it("every node_infiniband_* series (except info) has a twin with equal labels, value and type", () => {
    let compared = 0;
    for (const g of golden) {
      const name = short(g.name, "node_infiniband_");
      if (name === "info") continue;
      const twin = ours.find((o) => seriesKey(o) === seriesKey({ name: `ringwatch_infiniband_${name}`, labels: g.labels }));
      expect(twin, seriesKey(g)).toBeDefined();
      expect(twin?.value, seriesKey(g)).toBe(g.value);
      expect(ourTypes.get(`ringwatch_infiniband_${name}`), name).toBe(goldenTypes.get(g.name));
      compared++;
    }
    expect(compared).toBe(golden.filter((g) => g.name !== "node_infiniband_info").length);
  });

  it("ringwatch exposes no extra series in the families node_exporter has", () => {
    const families = new Set(ours.map((o) => short(o.name, "ringwatch_infiniband_")));
    for (const family of families) {
      if (RINGWATCH_ONLY.has(family) || family === "info") continue;
      const want = golden.filter((g) => g.name === `node_infiniband_${family}`).map((g) => seriesKey({ name: family, labels: g.labels }));
      const got = ours.filter((o) => o.name === `ringwatch_infiniband_${family}`).map((o) => seriesKey({ name: family, labels: o.labels }));
      expect(got.sort(), family).toEqual(want.sort());
    }
  });

  it("info: each device's labels reappear on every port's info series, plus port and link_layer only", () => {
    const nodeInfo = golden.filter((g) => g.name === "node_infiniband_info");
    const ourInfo = ours.filter((o) => o.name === "ringwatch_infiniband_info");
    expect(new Set(ourInfo.map((o) => o.labels.device))).toEqual(new Set(nodeInfo.map((g) => g.labels.device)));
    for (const g of nodeInfo) {
      const mine = ourInfo.filter((o) => o.labels.device === g.labels.device);
      expect(mine.length, g.labels.device).toBeGreaterThan(0);
      for (const o of mine) {
        expect(o.value).toBe(1);
        const { port, link_layer, ...rest } = o.labels;
        expect(rest, g.labels.device).toEqual(nonEmpty(g.labels));
        expect(port).toMatch(/^\d+$/);
        expect(link_layer).toBe("InfiniBand");
      }
    }
  });

  it("ringwatch-only families hold what the tree shows", () => {
    const sat = ours.filter((o) => o.name === "ringwatch_infiniband_counters_saturated" && o.value === 1).map(seriesKey);
    expect(sat).toEqual([seriesKey({ name: "ringwatch_infiniband_counters_saturated", labels: { device: "mlx4_0", port: "1", counter: "port_xmit_wait" } })]);
    const unreadable = ours.filter((o) => o.name === "ringwatch_infiniband_counters_unreadable" && o.value > 0).map((o) => [o.labels.device, o.value]);
    expect(unreadable).toEqual([["i40iw0", 17]]);
  });
});
