/**
 * PyTorch's store-based barrier timeout at init (logs/pytorch/store-barrier.ts): the real capture of
 * the pasted corpus (file 101, deepspeedai/Megatron-DeepSpeed #338, PyTorch 1.x wording), and the
 * PyTorch 2.x wording as distributed_c10d.py writes it (`on rank {}, for key: {} (world_size={},
 * num_workers_joined={}, timeout={})`).
 */
import { describe, expect, it } from "vitest";
import { parseStoreBarrier, storeBarrierFindings } from "../../../../../collectors/nccl/logs/pytorch/store-barrier.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("101-")) ?? "";

describe("the store-based barrier timeout at init", () => {
  it("reads the 1.x wording of the real capture: rank, key, world size, workers joined, timeout", () => {
    const line = readCapture(`nccl-pasted/${name}`).split("\n")[0] ?? "";
    expect(parseStoreBarrier(line, "x:1")).toEqual({
      rank: 7,
      key: "store_based_barrier_key:32",
      worldSize: 8,
      joined: 4,
      timeout: "0:00:30",
      where: "x:1",
    });
  });

  it("reads the 2.x wording (DistStoreError, num_workers_joined), behind a launcher's prefix", () => {
    const line =
      "[rank3]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on rank 3, for key: store_based_barrier_key:1 (world_size=16, num_workers_joined=15, timeout=0:30:00)";
    expect(parseStoreBarrier(line, "y:9")).toMatchObject({ rank: 3, key: "store_based_barrier_key:1", worldSize: 16, joined: 15, timeout: "0:30:00" });
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
