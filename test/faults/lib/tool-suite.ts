/**
 * What every tool-fault test file starts with: one run of runToolFaults for its modes, and for each
 * mode the two checks every fault must pass (set A and set B). Returns the run for the file's own,
 * mode-specific checks.
 */
import { beforeAll, describe, it } from "vitest";
import { expectSetA, expectSetB, find } from "./tool-checks.js";
import { latencyTable, runToolFaults, type FaultRun } from "./tool-faults.js";
import type { FaultMode } from "./tool-rig.js";

export function toolFaultSuite(modes: readonly FaultMode[], windowMs = 7000): () => FaultRun {
  let run: FaultRun | undefined;
  const get = (): FaultRun => {
    if (run === undefined) throw new Error("the tool-fault run did not complete");
    return run;
  };
  // The run waits for events (lib/tool-faults.ts): on a busy machine, agents that start slowly and
  // stuck tools killed after the rig's timeout make it take minutes; this limit is for a run that hangs.
  beforeAll(async () => {
    run = await runToolFaults(modes, windowMs);
    console.log(`tool faults (${modes.join(", ")})\n${latencyTable(run)}`);
  }, 400_000);

  describe.each([...modes])("%s", (mode) => {
    it("set A (dmon, ibstat, lsmod, ip): those collectors report failure, nccl goes on, /metrics keeps answering, nothing leaks", () => {
      expectSetA(find(get(), mode, "A"), get());
    });

    it("set B (--query-gpu, perfquery): infiniband reports failure, gpu samples, gdr and mtu go on, nothing leaks", () => {
      expectSetB(find(get(), mode, "B"), get());
    });
  });
  return get;
}
