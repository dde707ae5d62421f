/**
 * The NCCL series budget (collectors/nccl/series.ts) on simulated jobs in the real line formats:
 * per communicator always, per rank only while suspect, verdicts only where they fire, the slowest
 * rank's progress comparable across nodes, and --collector.nccl.max-series.
 */
import { describe, expect, it } from "vitest";
import { Scenario, rankStopsBeforeCollective } from "../../sim/index.js";
import { parsePromText, type Series } from "../../helpers/exposition.js";
import { createHarness, type Harness } from "./logs/detect/harness.js";

/** Two 8-GPU nodes, NCCL 2.21: tensor parallel within each node, data parallel across (opCount numbered). */
const TWO_NODES = {
  nodes: ["gpu-node-001", "gpu-node-002"],
  ranksPerNode: 8,
  ncclVersion: "2.21.5",
  comms: [
    { name: "tp", groupSize: 8, layout: "contiguous" as const },
    { name: "dp", groupSize: 2, layout: "strided" as const },
  ],
};

const PER_RANK = ["ringwatch_nccl_rank_info", "ringwatch_nccl_rank_progress", "ringwatch_nccl_rank_last_progress_timestamp_seconds"];
const FIRING_ONLY = ["ringwatch_nccl_rank_behind", "ringwatch_nccl_straggler", "ringwatch_nccl_collective_mismatch", "ringwatch_nccl_hang_evidence"];

async function ncclSeries(h: Harness): Promise<Series[]> {
  return parsePromText(await h.scrape()).series.filter((s) => s.name.startsWith("ringwatch_nccl_"));
}

/** A series shown only for a suspect communicator: its ranks', and its threshold. */
function isDetail(s: Series): boolean {
  return s.labels.rank !== undefined || s.name === "ringwatch_nccl_hang_threshold_seconds";
}

function named(series: Series[], name: string): Series[] {
  return series.filter((s) => s.name === name);
}

/** Ranks of the tracker's communicators, and the COLL lines each rank logged (counted by the tracker, not from opCount). */
function trackedRanks(h: Harness): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const c of h.tracker.comms.values())
    out.set(
      c.key,
      [...c.ranks.values()].map((r) => r.countedBefore + r.collectives),
    );
  return out;
}

describe("NCCL series budget", () => {
  it("a healthy job: two series per communicator, none per rank, no verdict gauge", async () => {
    const h = createHarness(new Scenario({ ...TWO_NODES, seed: 3 }));
    h.run(60_000, 1000);
    const series = await ncclSeries(h);
    const comms = trackedRanks(h);
    expect(comms.size).toBeGreaterThanOrEqual(3); // world, tp, and this node's dp pairs
    for (const name of [...PER_RANK, ...FIRING_ONLY]) expect(named(series, name), name).toEqual([]);
    expect(series.filter((s) => s.labels.rank !== undefined)).toEqual([]);
    const perComm = series.filter((s) => s.labels.comm_id !== undefined);
    expect(perComm.length).toBe(2 * comms.size);
    expect(named(series, "ringwatch_nccl_hang_threshold_seconds")).toEqual([]);
    for (const [commId, counts] of comms) {
      expect(named(series, "ringwatch_nccl_hang_suspected").find((s) => s.labels.comm_id === commId)?.value).toBe(0);
      // opCount + 1 of the slowest rank is the number of COLL lines it logged: every rank was read from its Init line.
      expect(named(series, "ringwatch_nccl_comm_slowest_rank_progress").find((s) => s.labels.comm_id === commId)?.value, commId).toBe(Math.min(...counts));
    }
    // One per rank process, however many communicators it is in.
    const transport = named(series, "ringwatch_nccl_process_transport_info");
    expect(new Set(transport.map((s) => s.labels.pid)).size).toBe(8);
    expect(transport).toHaveLength(8);
  });

  it("--collector.nccl.rank-series=always: every rank of every communicator, as before the budget", async () => {
    const h = createHarness(new Scenario({ ...TWO_NODES, seed: 3 }), { series: { rankSeries: "always", maxSeries: 100_000 } });
    h.run(60_000, 1000);
    const series = await ncclSeries(h);
    const pairs = [...trackedRanks(h).values()].reduce((n, ranks) => n + ranks.length, 0);
    expect(pairs).toBeGreaterThan(8);
    expect(named(series, "ringwatch_nccl_rank_info")).toHaveLength(pairs);
    expect(named(series, "ringwatch_nccl_rank_progress")).toHaveLength(pairs);
    for (const name of FIRING_ONLY) expect(named(series, name), name).toEqual([]);
  });

  it("a rank stops before a collective: its communicators' ranks appear with the hang, the rank behind alone at 1", async () => {
    const sim = new Scenario({ ...TWO_NODES, seed: 5 }, { faults: [rankStopsBeforeCollective({ rank: 5, atStep: 3, beforeCollIndex: 2 })] });
    const h = createHarness(sim);
    h.run(20_000, 1000);
    expect(named(await ncclSeries(h), "ringwatch_nccl_rank_info")).toEqual([]);
    h.run(200_000, 1000);
    const series = await ncclSeries(h);
    const hung = named(series, "ringwatch_nccl_hang_suspected").filter((s) => s.value === 1);
    expect(hung.length).toBeGreaterThanOrEqual(1);
    const hungIds = new Set(hung.map((s) => s.labels.comm_id));
    const info = named(series, "ringwatch_nccl_rank_info");
    // Only hung communicators show their ranks, each rank with its pid, and their threshold.
    expect(new Set(info.map((s) => s.labels.comm_id))).toEqual(hungIds);
    const thresholds = named(series, "ringwatch_nccl_hang_threshold_seconds");
    expect(new Set(thresholds.map((s) => s.labels.comm_id))).toEqual(hungIds);
    expect(thresholds.every((s) => s.value >= 120)).toBe(true);
    expect(info.every((s) => /^\d+$/.test(s.labels.pid ?? ""))).toBe(true);
    const behind = named(series, "ringwatch_nccl_rank_behind");
    expect(behind.length).toBeGreaterThanOrEqual(1);
    expect(behind.every((s) => s.labels.rank === "5" && s.value === 1)).toBe(true);
    // Rank 5 trails the other ranks of the communicator it is behind in by one collective.
    for (const b of behind) {
      const progress = named(series, "ringwatch_nccl_rank_progress").filter((s) => s.labels.comm_id === b.labels.comm_id);
      const own = progress.find((s) => s.labels.rank === "5")?.value ?? NaN;
      const others = progress.filter((s) => s.labels.rank !== "5").map((s) => s.value);
      expect(Math.max(...others) - own).toBe(1);
      const slowest = named(series, "ringwatch_nccl_comm_slowest_rank_progress").find((s) => s.labels.comm_id === b.labels.comm_id);
      expect(slowest?.value).toBe(own);
    }
  });

  it("a rank behind on another node: that node's slowest rank trails this node's, with no per-rank series", async () => {
    // Collective #4 of a step is the first data-parallel AllReduce: rank 13 (node 2) never enters it, its peer rank 5 (node 1) does.
    const fault = { faults: [rankStopsBeforeCollective({ rank: 13, atStep: 3, beforeCollIndex: 4 })] };
    const here = createHarness(new Scenario({ ...TWO_NODES, seed: 9 }, fault), { host: "gpu-node-001" });
    const there = createHarness(new Scenario({ ...TWO_NODES, seed: 9 }, fault), { host: "gpu-node-002" });
    // Before the hang threshold: the job stopped, nobody suspects yet.
    here.run(90_000, 1000);
    there.run(90_000, 1000);
    const a = await ncclSeries(here);
    const b = await ncclSeries(there);
    expect(named(a, "ringwatch_nccl_rank_info")).toEqual([]);
    expect(named(b, "ringwatch_nccl_rank_info")).toEqual([]);
    const slowest = (s: Series[]): Map<string, number> =>
      new Map(named(s, "ringwatch_nccl_comm_slowest_rank_progress").map((x) => [x.labels.comm_id ?? "", x.value]));
    const sa = slowest(a);
    const sb = slowest(b);
    // The communicators both nodes hold: ringwatch:nccl_node_lag:cross_node is max - each node's.
    const shared = [...sa.keys()].filter((k) => sb.has(k));
    expect(shared.length).toBeGreaterThanOrEqual(1);
    const lags = shared.map((k) => (sa.get(k) ?? 0) - (sb.get(k) ?? 0));
    expect(Math.max(...lags)).toBe(1);
    expect(Math.min(...lags)).toBeGreaterThanOrEqual(0);
  });

  it("--collector.nccl.max-series: the rank behind's communicator is kept, the rest counted as dropped", async () => {
    // Every rank shown (rank-series=always), so that the healthy communicators' ranks compete with the behind one's.
    const make = (maxSeries: number): Harness =>
      createHarness(new Scenario({ ...TWO_NODES, seed: 5 }, { faults: [rankStopsBeforeCollective({ rank: 5, atStep: 3, beforeCollIndex: 2 })] }), {
        series: { rankSeries: "always", maxSeries },
      });
    const free = make(100_000);
    free.run(220_000, 1000);
    const all = (await ncclSeries(free)).filter((s) => s.labels.comm_id !== undefined || s.labels.pid !== undefined);
    expect(named(await ncclSeries(free), "ringwatch_nccl_series_dropped")[0]?.value).toBe(0);
    const behindComm = named(all, "ringwatch_nccl_rank_behind")[0]?.labels.comm_id;
    expect(behindComm).toBeDefined();
    // Room for the firing verdicts, the communicators' own series, the processes, and the behind communicator's ranks.
    const behindDetail = all.filter((s) => s.labels.comm_id === behindComm && isDetail(s)).length;
    const base = all.filter((s) => !isDetail(s)).length;
    const cap = base + behindDetail;
    expect(cap).toBeLessThan(all.length); // something must be left out

    const tight = make(cap);
    tight.run(220_000, 1000);
    const series = await ncclSeries(tight);
    const kept = series.filter((s) => s.labels.comm_id !== undefined || s.labels.pid !== undefined);
    expect(kept).toHaveLength(cap);
    expect(named(series, "ringwatch_nccl_series_dropped")[0]?.value).toBe(all.length - cap);
    const keptDetail = kept.filter(isDetail);
    expect(keptDetail.every((s) => s.labels.comm_id === behindComm)).toBe(true);
    expect(named(kept, "ringwatch_nccl_rank_behind").map((s) => s.labels.rank)).toEqual(["5"]);
  });
});
