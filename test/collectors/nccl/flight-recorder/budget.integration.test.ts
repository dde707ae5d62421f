/**
 * readFrDump on large dumps Python's pickle wrote (test/fakes/fr-big-dump.py): the two hostile ones
 * that took the agent down (one rank list named by 4,096 groups; one entry of 64 tensors of 16
 * dimensions named 50,000 times) are refused at once with their reason; the cap on rank lists holds
 * exactly 16 full lists; and the full buffer of a 131,072-rank job is read, far inside every budget.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { Budget, FR_BUDGET, type BudgetKind } from "../../../../collectors/nccl/flight-recorder/budget.js";
import { dumpOf } from "../../../../collectors/nccl/flight-recorder/convert.js";
import { readFrDump } from "../../../../collectors/nccl/flight-recorder/read.js";
import { unpickle } from "../../../../collectors/nccl/flight-recorder/unpickle.js";
import { writeBigDump } from "../../../helpers/fr-big-dumps.js";
import { hasPython } from "../../../helpers/fr-dumps.js";
import { tempDir } from "../../../helpers/temp-dir.js";

const run = hasPython() || process.env.CI ? describe : describe.skip;

run("readFrDump on large dumps", () => {
  const dir = tempDir();
  const path = (name: string): string => join(dir, name);
  const sizes = new Map<string, number>();
  beforeAll(() => {
    sizes.set("ranks", writeBigDump("shared-ranks", path("nccl_trace_rank_2")));
    sizes.set("entry", writeBigDump("shared-entry", path("nccl_trace_rank_3")));
    writeBigDump("shared-ranks", path("groups16"), { groups: 16 });
    writeBigDump("shared-ranks", path("groups17"), { groups: 17 });
    sizes.set("job", writeBigDump("large-job", path("nccl_trace_rank_0")));
  }, 120_000);

  /** readFrDump(file) and the milliseconds it took. */
  function timed(name: string, opts = {}): { r: ReturnType<typeof readFrDump>; ms: number } {
    const bytes = readFileSync(path(name));
    const t0 = performance.now();
    const r = readFrDump(bytes, name, opts);
    return { r, ms: performance.now() - t0 };
  }

  it("4,096 groups that share one 131,072-rank list (1.4 MB): refused with its reason in well under a second", () => {
    expect(sizes.get("ranks")).toBeGreaterThan(1_300_000);
    const { r, ms } = timed("nccl_trace_rank_2", { entriesPerGroup: 512 });
    expect(r).toEqual({
      ok: false,
      source: "nccl_trace_rank_2",
      rank: 2,
      error: "too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)",
      over: "budget",
    });
    // Measured 0.2-0.3 s. Before the budget: 88 s, 4.25 GB and an abort (ringwatch analyze).
    expect(ms).toBeLessThan(5_000);
    process.stdout.write(`budget: shared rank list refused in ${ms.toFixed(0)} ms\n`);
  });

  it("one entry of 64 tensors × 16 dimensions named 50,000 times (104 KB): refused with its reason in well under a second", () => {
    expect(sizes.get("entry")).toBeLessThan(110_000);
    const { r, ms } = timed("nccl_trace_rank_3", { entriesPerGroup: 512 });
    expect(r).toEqual({
      ok: false,
      source: "nccl_trace_rank_3",
      rank: 3,
      error: "too large: tensor sizes over budget (more than 4,194,304 tensors and dimensions)",
      over: "budget",
    });
    // Measured 0.1-0.3 s. Before: 7.4 s and 1.47 GB.
    expect(ms).toBeLessThan(5_000);
    process.stdout.write(`budget: shared entry refused in ${ms.toFixed(0)} ms\n`);
  });

  it("16 groups sharing the list are read (16 × 131,072 ranks is the cap), all with one array; a 17th is over", () => {
    const { r } = timed("groups16");
    if (!r.ok) throw new Error(r.error);
    expect(r.dump.groups).toHaveLength(16);
    expect(r.dump.groups[0]?.ranks).toHaveLength(131_072);
    for (const g of r.dump.groups) expect(g.ranks).toBe(r.dump.groups[0]?.ranks);
    expect(timed("groups17").r).toMatchObject({
      ok: false,
      error: "too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)",
      over: "budget",
    });
  });

  it("a 131,072-rank job's full buffer (20,000 entries, 20 frames each) is read, and spends at most a quarter of any budget", () => {
    const { r, ms } = timed("nccl_trace_rank_0", { entriesPerGroup: 512 });
    if (!r.ok) throw new Error(r.error);
    expect(r.dump.groups.map((g) => [g.desc, g.ranks?.length])).toEqual([
      ["default_pg", 131_072],
      ["data_parallel", 1024],
      ["tensor_parallel", 8],
      ["pipeline_parallel", 16],
      ["model_parallel", 128],
      ["embedding", 2],
      ["data_parallel_cp", 1024],
    ]);
    // The last 512 collectives of each of the 4 groups with entries; the rest only counted.
    expect(r.dump.entries).toHaveLength(2048);
    expect(r.dump.entriesDropped).toBe(20_000 - 2048);
    expect(r.dump.entries[2047]).toMatchObject({ seq: 5000, op: "broadcast", pgDesc: "pipeline_parallel", state: "scheduled" });
    expect(r.dump.groups[0]).toMatchObject({ lastEnqueued: 20_000, lastCompleted: 19_999 });

    // What reading it whole costs, against each cap.
    const b = new Budget();
    const raw = unpickle(readFileSync(path("nccl_trace_rank_0")), b);
    if (!raw.ok) throw new Error(raw.error);
    const got = dumpOf(raw.value, "nccl_trace_rank_0", b);
    if (typeof got === "string") throw new Error(got);
    expect(got.dump.entries).toHaveLength(20_000);
    const spent = b.spent();
    const share = Object.fromEntries((Object.keys(FR_BUDGET) as BudgetKind[]).map((k) => [k, spent[k] / FR_BUDGET[k].cap]));
    for (const k of Object.keys(FR_BUDGET) as BudgetKind[]) expect(share[k], k).toBeLessThan(0.25);
    expect(spent.ranks).toBe(131_072 + 1024 + 8 + 16 + 128 + 2 + 1024);
    process.stdout.write(`budget: ${sizes.get("job")} bytes, 20,000 entries read in ${ms.toFixed(0)} ms; share of each cap: ${JSON.stringify(share)}\n`);
  });
});
