/**
 * Fault injection against the running agent, over real HTTP. Tools that hang: print nothing and
 * never exit, or also ignore SIGTERM. For each, one agent whose nvidia-smi dmon, ibstat, lsmod and
 * ip misbehave (set A) and one whose nvidia-smi --query-gpu and perfquery misbehave (set B), next
 * to a clean agent measured in the same seconds. The misbehaving tools are test/fakes/faulty; the
 * checks are in lib/tool-checks.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { expectSetA, expectSetB, find, troubleLogs } from "./lib/tool-checks.js";
import { runToolFaults, type FaultRun } from "./lib/tool-faults.js";
import type { FaultMode } from "./lib/tool-rig.js";

const MODES: FaultMode[] = ["hang", "hang-hard"];
let run: FaultRun;

beforeAll(async () => {
  run = await runToolFaults(MODES, 7000);
}, 120_000);

describe.each(MODES)("%s", (mode) => {
  it("set A (dmon, ibstat, lsmod, ip): those collectors report failure, nccl goes on, /metrics keeps answering, nothing leaks", () => {
    expectSetA(find(run, mode, "A"), run);
  });

  it("set B (--query-gpu, perfquery): infiniband reports failure, gpu samples, gdr and mtu go on, nothing leaks", () => {
    expectSetB(find(run, mode, "B"), run);
  });
});

describe("hang, hang-hard: specifics", () => {
  it("hang-hard: a tool that ignores SIGTERM is killed with SIGKILL (the log says it was killed)", () => {
    const a = find(run, "hang-hard", "A");
    for (const c of ["infiniband", "gdr", "mtu"]) expect(troubleLogs(a, c).some((l) => l.includes("timed out and was killed")), c).toBe(true);
    expect(troubleLogs(a, "gpu").some((l) => l.includes("silent for 3 intervals and was killed"))).toBe(true);
    expect(sample(a.final, "ringwatch_gpu_dmon_restarts_total")).toBeGreaterThanOrEqual(1);
  });
});
