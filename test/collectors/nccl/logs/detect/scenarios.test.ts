/**
 * Live detection on simulated jobs (real NCCL line formats, fake clock): healthy, one rank stops
 * before a collective, all stall inside one, job exits, CUDA-graph silence, slow steps,
 * stragglers, mismatches, and a culprit on another node.
 */
import { describe, expect, it } from "vitest";
import { Scenario, allStallInside, graphReplay, jobExits, mismatch, rankStopsBeforeCollective, slowButMoving, straggler } from "../../../../sim/index.js";
import { sample, samplesOf } from "../../../../helpers/agent-process.js";
import { createHarness, firstHang } from "./harness.js";

/** 16 GPUs on one node (e.g. an HGX B200 x16-style box): NCCL 2.27, where opCount stays 0 on single-node comms. */
const DEVICES_16 = Array.from({ length: 16 }, (_, i) => ({ cudaDev: i, nvmlDev: i, busId: `${(0x18 + i * 0x10).toString(16)}000` }));
const ONE_NODE_16 = { nodes: ["dgx-a01"], ranksPerNode: 16, ncclVersion: "2.27.6", devices: DEVICES_16 };
const THRESHOLD = 120_000;

describe("NCCL verdicts on simulated jobs", () => {
  it("healthy 16-rank job for 10 minutes: no verdict at all", () => {
    const h = createHarness(new Scenario(ONE_NODE_16));
    const history = h.run(600_000, 2000);
    expect(firstHang(history)).toBeUndefined();
    const last = history[history.length - 1]?.verdicts ?? [];
    expect(last.length).toBeGreaterThan(0);
    for (const v of last) {
      expect(v).toMatchObject({ hangSuspected: false, behind: [], stragglers: [], mismatch: false });
    }
  });

  it("one rank stops before a collective: hang after the threshold, that rank behind", async () => {
    const sim = new Scenario(ONE_NODE_16, { faults: [rankStopsBeforeCollective({ rank: 5, atStep: 3, beforeCollIndex: 2 })] });
    const h = createHarness(sim);
    const history = h.run(200_000, 1000);
    const faultAt = sim.stepStart(3);
    const at = firstHang(history);
    expect(at).toBeDefined();
    const ttv = (at ?? 0) - faultAt;
    expect(ttv).toBeGreaterThanOrEqual(THRESHOLD - 1000);
    expect(ttv).toBeLessThanOrEqual(THRESHOLD + 3000); // about two minutes, as promised
    const hung = h.verdicts().filter((v) => v.hangSuspected);
    expect(hung.length).toBeGreaterThanOrEqual(1);
    expect(hung.some((v) => v.behind.length === 1 && v.behind[0] === 5)).toBe(true);
    // Live metrics say the same.
    const text = await h.scrape();
    const behindLines = samplesOf(text, "ringwatch_nccl_rank_behind").filter((l) => l.endsWith(" 1"));
    expect(behindLines.length).toBeGreaterThanOrEqual(1);
    expect(behindLines.every((l) => l.includes('rank="5"'))).toBe(true);
    expect(samplesOf(text, "ringwatch_nccl_hang_suspected").some((l) => l.endsWith(" 1"))).toBe(true);
  });

  it("all ranks stall inside one collective: hang, nobody behind, GPU signature reported", async () => {
    const sim = new Scenario(ONE_NODE_16, { faults: [allStallInside({ atStep: 2 })] });
    const h = createHarness(sim, { gpu: "spin" });
    const history = h.run(180_000, 1000);
    expect(firstHang(history)).toBeDefined();
    const v = h.verdicts().find((x) => x.hangSuspected);
    expect(v?.behind).toEqual([]);
    expect(v?.gpus.every((g) => g.signature === "spin")).toBe(true);
    const text = await h.scrape();
    expect(samplesOf(text, "ringwatch_gpu_hang_signature").filter((l) => l.includes('signature="spin"')).length).toBe(16);
  });

  it("job exits: no hang, at once (processes gone) or after teardown", () => {
    for (const clean of [true, false]) {
      const sim = new Scenario({ ...ONE_NODE_16, subsystems: ["INIT", "COLL", "NET", "DESTROY"] }, { faults: [jobExits({ atStep: 5, clean })] });
      const h = createHarness(sim);
      const history = h.run(400_000, 2000);
      expect(firstHang(history), `clean=${clean}`).toBeUndefined();
    }
  });

  it("in pods (liveness unknown), a job that ends without teardown lines is told apart by its GPUs' memory", () => {
    // After the exit the GPUs read 0 % at idle power with their framebuffer released; a hung job keeps its memory.
    const after = (held: boolean) => (rank: number, _t: number, sim: Scenario) => {
      const alive = sim.truth().ranks.find((r) => r.rank === rank)?.alive ?? false;
      return alive ? { sm: 100, powerW: 600, powerLimitW: 700, fbUsedMiB: 70_000 } : { sm: 0, powerW: 65, powerLimitW: 700, fbUsedMiB: held ? 70_000 : 3 };
    };
    const ended = createHarness(new Scenario(ONE_NODE_16, { faults: [jobExits({ atStep: 5, clean: false })] }), { liveness: "unknown", gpu: after(false) });
    expect(firstHang(ended.run(400_000, 2000))).toBeUndefined();
    expect(ended.verdicts().some((v) => v.reason.startsWith("ended"))).toBe(true);
    // Memory still held (processes stuck, not gone): that is a hang.
    const stuck = createHarness(new Scenario(ONE_NODE_16, { faults: [jobExits({ atStep: 5, clean: false })] }), { liveness: "unknown", gpu: after(true) });
    expect(firstHang(stuck.run(400_000, 2000))).toBeDefined();
  });

  it("CUDA-graph replay silence is not a hang while the GPUs compute", () => {
    const h = createHarness(new Scenario(ONE_NODE_16, { faults: [graphReplay({ fromStep: 3 })] }), { gpu: "busy" });
    expect(firstHang(h.run(600_000, 2000))).toBeUndefined();
    const reasons = h.verdicts().map((v) => v.reason);
    expect(reasons.some((r) => r.includes("every GPU is computing"))).toBe(true);
  });

  it("the same silence with spinning GPUs is a hang (the GPU is the second signal)", () => {
    const h = createHarness(new Scenario(ONE_NODE_16, { faults: [graphReplay({ fromStep: 3 })] }), { gpu: "spin" });
    expect(firstHang(h.run(200_000, 2000))).toBeDefined();
  });

  it("a slow but moving job stretches its threshold and raises nothing", () => {
    const sim = new Scenario(ONE_NODE_16, { faults: [slowButMoving({ stepMs: 200_000, fromStep: 2 })] });
    const h = createHarness(sim, { gpu: "busy" });
    expect(firstHang(h.run(1_500_000, 5000))).toBeUndefined();
    const thresholds = h.verdicts().map((v) => v.thresholdMs);
    expect(Math.max(...thresholds)).toBeGreaterThan(THRESHOLD); // learned from its own gaps
  });

  it("a straggler that always arrives last is named while the job moves", () => {
    const h = createHarness(new Scenario({ nodes: ["dgx-a01"], ranksPerNode: 8 }, { faults: [straggler({ rank: 3, delayMs: 300 })] }));
    const history = h.run(120_000, 100);
    expect(firstHang(history)).toBeUndefined();
    const named = h.verdicts().filter((v) => v.stragglers.length > 0);
    expect(named.length).toBeGreaterThan(0);
    expect(named.every((v) => v.stragglers.length === 1 && v.stragglers[0] === 3)).toBe(true);
  });

  it("a collective-type mismatch at one sequence index is reported", async () => {
    const h = createHarness(
      new Scenario({ nodes: ["dgx-a01"], ranksPerNode: 8 }, { faults: [mismatch({ rank: 2, atCollIndex: 1, op: "AllGather", atStep: 4 })] }),
    );
    h.run(60_000, 1000);
    const v = h.verdicts().filter((x) => x.mismatch);
    expect(v.length).toBe(1);
    const comm = h.tracker.comms.get(v[0]?.commKey ?? "");
    expect(comm?.mismatch).toMatchObject({ opB: "AllGather" });
    expect([comm?.mismatch?.rankA, comm?.mismatch?.rankB]).toContain(2);
    const text = await h.scrape();
    expect(sample(text, `ringwatch_nccl_collective_mismatch{comm_id="${v[0]?.commKey ?? ""}"}`)).toBe(1);
  });

  it("the culprit on another node: this node sees its ranks all waiting, counts equal", async () => {
    const sim = new Scenario(
      { nodes: ["dgx-a01", "dgx-a02"], ranksPerNode: 8 },
      { faults: [rankStopsBeforeCollective({ rank: 12, atStep: 3, beforeCollIndex: 1 })] },
    );
    const h = createHarness(sim, { host: "dgx-a01" });
    expect(firstHang(h.run(200_000, 1000))).toBeDefined();
    const world = [...h.tracker.comms.values()].find((c) => c.nranks === 16);
    expect(world?.ranks.size).toBe(8);
    const v = h.verdicts().find((x) => x.commKey === world?.key);
    expect(v?.hangSuspected).toBe(true);
    expect(v?.behind).toEqual([]); // the rank behind is not here: Prometheus compares counts across nodes
    const text = await h.scrape();
    const counts = samplesOf(text, "ringwatch_nccl_rank_progress").filter((l) => l.includes(`comm_id="${world?.key ?? ""}"`));
    expect(counts).toHaveLength(8);
    expect(new Set(counts.map((l) => l.split(" ")[1])).size).toBe(1);
  });
});
