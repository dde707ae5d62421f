/**
 * PyTorch's store-based barrier timeout at init (logs/pytorch/store-barrier.ts): the real capture of
 * the pasted corpus (file 101, deepspeedai/Megatron-DeepSpeed #338, PyTorch 1.x wording), and the
 * PyTorch 2.x wording as distributed_c10d.py writes it (`on rank {}, for key: {} (world_size={},
 * num_workers_joined={}, timeout={})`).
 */
import { describe, expect, it } from "vitest";
import {
  parseStoreBarrier,
  parseStoreBarrierWait,
  storeBarrierFindings,
  storeBarrierWaitFindings,
} from "../../../../../collectors/nccl/logs/pytorch/store-barrier.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("101-")) ?? "";
/** Rank 0 waiting, 5 lines 10 s apart, 1 of 8 joined (huggingface/accelerate #1401, blind set 3). */
const waiting = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("206-")) ?? "";
/** Ranks 0-3 and 5-7 waiting, 7 of 8 joined, rank 0 twice (Lightning-AI/pytorch-lightning #4420, blind set 4). */
const sevenOfEight = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("235-")) ?? "";
/** YOLOv5 on PyTorch 1.9: rank 0 waits with worker_count=16 where world_size=4, five lines, no timestamps. */
const overshoot = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("268-")) ?? "";

/** What 2.x's wording says on rank 3 of 16, 15 joined (the timeout's line and the waiting line alike). */
const RANK3_OF_16 = { rank: 3, key: "store_based_barrier_key:1", worldSize: 16, joined: 15, counter: "num_workers_joined", timeout: "0:30:00" };

describe("the store-based barrier timeout at init", () => {
  it("reads the 1.x wording of the real capture: rank, key, world size, workers joined, timeout", () => {
    const line = readCapture(`nccl-pasted/${name}`).split("\n")[0] ?? "";
    expect(parseStoreBarrier(line, "x:1")).toEqual({
      rank: 7,
      key: "store_based_barrier_key:32",
      worldSize: 8,
      joined: 4,
      counter: "worker_count",
      timeout: "0:00:30",
      where: "x:1",
    });
  });

  it("reads the 2.x wording (DistStoreError, num_workers_joined), behind a launcher's prefix", () => {
    const line =
      "[rank3]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 3, for key: store_based_barrier_key:1 (world_size=16, num_workers_joined=15, timeout=0:30:00)";
    expect(parseStoreBarrier(line, "y:9")).toMatchObject(RANK3_OF_16);
    expect(parseStoreBarrier("Timed out initializing process group in store based barrier", "z:1")).toBeUndefined();
  });

  it("the real capture: a hang at init naming the ranks that waited and how many of the world joined", () => {
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "critical", [5, 7]]]);
    expect(r.headline).toBe(
      "PyTorch timed out initializing a process group: only 4 of 8 ranks reached its store-based barrier (store_based_barrier_key:32) within 0:00:30; rank 5,7 waited.",
    );
  });

  it("more workers than the world size: another job shares the store", () => {
    const f = parseStoreBarrier(
      "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=8, worker_count=16, timeout=0:15:00)",
      "a:1",
    );
    expect(f).toBeDefined();
    const [finding] = storeBarrierFindings(f ? [f] : []);
    expect(finding?.summary).toContain("16 ranks joined its store-based barrier (store_based_barrier_key:1) where the world has 8");
    expect(finding?.summary).toContain("Another job shares this rendezvous store");
  });
});

describe("ranks still waiting in the store-based barrier", () => {
  const lines = readCapture(`nccl-pasted/${waiting}`)
    .split("\n")
    .filter((l) => l.includes("Waiting in store based barrier"));

  it("reads the real waiting line (PyTorch 1.x wording, behind Python logging's prefix)", () => {
    expect(lines).toHaveLength(5);
    expect(parseStoreBarrierWait(lines[0] ?? "", "w:1")).toEqual({
      rank: 0,
      key: "store_based_barrier_key:2",
      worldSize: 8,
      joined: 1,
      counter: "worker_count",
      timeout: "0:30:00",
      where: "w:1",
    });
    expect(parseStoreBarrierWait(lines[0] ?? "", "w:1")).not.toHaveProperty("seconds");
  });

  it("reads the 2.2+ debug wording, with the seconds waited (distributed_c10d.py's format, no blank before rank)", () => {
    const line =
      "[rank3]:[W] Waiting in store based barrier to initialize process group for 31.5 secondsrank: 3, key: store_based_barrier_key:1 (world_size=16, num_workers_joined=15, timeout=0:30:00 error=Wait timeout)";
    expect(parseStoreBarrierWait(line, "d:2")).toEqual({ ...RANK3_OF_16, seconds: 31.5, where: "d:2" });
    expect(parseStoreBarrierWait("Waiting in store based barrier to initialize process group", "d:3")).toBeUndefined();
  });

  it("the real capture: rank 0 waited 50 s with 1 of 8 joined, a warning that names it", () => {
    const r = analyzeLogs([{ name: waiting, text: readCapture(`nccl-pasted/${waiting}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "warning", [0]]]);
    expect(r.headline).toBe(
      "PyTorch is still initializing a process group: rank 0 waited 50 s or more in its store-based barrier (store_based_barrier_key:2), and only 1 of 8 ranks reached it meanwhile (it gives up after 0:30:00).",
    );
    expect(r.findings[0]?.summary).toContain("The job hangs at init if the others never come: they crashed, are stuck before init_process_group / new_group");
    expect(r.findings[0]?.evidence).toEqual([1, 2, 3, 4, 5].map((n) => `${waiting}:${n}`));
  });

  it("a barrier still filling is no hang: two lines (20 s), or ranks joining meanwhile, or a timeout that says it already", () => {
    const w = lines.map((l, i) => parseStoreBarrierWait(l, `w:${i + 1}`)).filter((x) => x !== undefined);
    expect(storeBarrierWaitFindings(w.slice(0, 2), [])).toEqual([]);
    expect(storeBarrierWaitFindings(w.slice(0, 3), [])).toHaveLength(1);
    const filling = w.map((x, i) => ({ ...x, joined: 1 + i }));
    expect(storeBarrierWaitFindings(filling, [])).toEqual([]);
    const timeout = { rank: 0, key: "store_based_barrier_key:2", worldSize: 8, joined: 1, timeout: "0:30:00", where: "w:9" };
    expect(storeBarrierWaitFindings(w, [timeout])).toEqual([]);
  });

  it("every rank that joined is seen waiting: the few that never came are named behind, once the barrier counts as a hang", () => {
    const lines = readCapture(`nccl-pasted/${sevenOfEight}`)
      .split("\n")
      .filter((l) => l.includes("Waiting in store based barrier"));
    // The capture as it is: rank 0 waited 20 s (two lines), not yet a hang.
    expect(analyzeLogs([{ name: sevenOfEight, text: lines.join("\n") }]).findings).toEqual([]);
    // Ten seconds on (rank 0's third line, nobody joining): the hang, and rank 4 behind.
    const r = analyzeLogs([{ name: sevenOfEight, text: [...lines, lines[0] ?? ""].join("\n") }]);
    // The rank behind first: it is what to look at.
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([
      ["rank_behind", "warning", [4]],
      ["hang_suspected", "warning", [0]],
    ]);
    expect(r.findings[0]?.summary).toContain("Rank 4 never reached PyTorch's store-based barrier (store_based_barrier_key:1) that ranks 0-3,5-7 wait in");
    // Half the world absent (rank 0 alone of 2, or 1 of 8 joined): not a few ranks behind, only the hang.
    const w = [1, 2, 3].map(
      () =>
        "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)",
    );
    expect(analyzeLogs([{ name: "two", text: w.join("\n") }]).findings.map((f) => f.kind)).toEqual(["hang_suspected"]);
  });

  it("more ranks joined than the world has (1.x): a barrier that never completes, a hang from the first line (the real captures: 268, 5 lines; 390, 2 lines a rank)", () => {
    const text = readCapture(`nccl-pasted/${overshoot}`);
    const r = analyzeLogs([{ name: overshoot, text }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["hang_suspected", "warning", [0]]]);
    expect(r.findings[0]?.summary).toBe(
      "PyTorch is still initializing a process group: rank 0 waited 50 s or more in its store-based barrier (store_based_barrier_key:1), which 16 ranks joined where the world has 4: " +
        "it waits for the count to equal the world's, which it never will (it gives up after 0:01:00). " +
        "Another launch shares this rendezvous store (the same MASTER_ADDR:MASTER_PORT, or a stale store): give each job its own port.",
    );
    // Two lines (20 s) are a hang too: the count never comes down; a count that equals the world's is a barrier complete.
    const waits = text.split("\n").filter((l) => l.startsWith("Waiting in store based barrier"));
    expect(waits).toHaveLength(5);
    expect(analyzeLogs([{ name: overshoot, text: waits.slice(0, 2).join("\n") }]).findings.map((f) => [f.kind, f.ranks])).toEqual([["hang_suspected", [0]]]);
    const four = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("390-")) ?? "";
    expect(analyzeLogs([{ name: four, text: readCapture(`nccl-pasted/${four}`) }]).findings.map((f) => [f.kind, f.ranks])).toEqual([
      ["hang_suspected", [0, 1, 2, 3]],
    ]);
    const complete = waits.map((l) => l.replace("worker_count=16", "worker_count=4"));
    expect(analyzeLogs([{ name: overshoot, text: complete.join("\n") }]).findings).toEqual([]);
    // 2.x's barrier ends when any rank's add saw the world's count, which a shared store may have given: no hang from the count alone.
    const newer = waits.map((l) => l.replace("worker_count=16", "num_workers_joined=16"));
    expect(analyzeLogs([{ name: overshoot, text: newer.join("\n") }]).findings).toEqual([]);
  });
});
