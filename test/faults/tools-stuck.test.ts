/**
 * Fault injection against the running agent, over real HTTP. Tools that hang: print nothing and
 * never exit, or also ignore SIGTERM. For each, one agent whose nvidia-smi dmon, ibstat, lsmod and
 * ip misbehave (set A) and one whose nvidia-smi --query-gpu and perfquery misbehave (set B), next
 * to a clean agent measured in the same seconds. The misbehaving tools are test/fakes/faulty; the
 * checks are in lib/tool-checks.ts.
 */
import { describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { find, troubleLogs } from "./lib/tool-checks.js";
import { toolFaultSuite } from "./lib/tool-suite.js";
import type { FaultMode } from "./lib/tool-rig.js";

const MODES: FaultMode[] = ["hang", "hang-hard"];
const run = toolFaultSuite(MODES);

describe("hang, hang-hard: specifics", () => {
  it("hang-hard: a tool that ignores SIGTERM is killed with SIGKILL (the log says it was killed)", () => {
    const a = find(run(), "hang-hard", "A");
    for (const c of ["infiniband", "gdr", "mtu"])
      expect(
        troubleLogs(a, c).some((l) => l.includes("timed out and was killed")),
        c,
      ).toBe(true);
    expect(troubleLogs(a, "gpu").some((l) => l.includes("silent for 3 intervals and was killed"))).toBe(true);
    expect(sample(a.final, "ringwatch_gpu_dmon_restarts_total")).toBeGreaterThanOrEqual(1);
    // Runs that had started, their SIGTERM handler in place (FAULT_STARTED), and were gone while the
    // agent still ran: only SIGKILL ends them, and not a run killed before it could ignore SIGTERM.
    // (The identity query is left out: it runs once, and may be killed before it has started.)
    const b = find(run(), "hang-hard", "B");
    for (const tool of ["nvidia-smi dmon", "ibstat", "lsmod", "ip"])
      expect(
        a.started.some((r) => r.tool === tool && r.mode === "hang-hard" && r.ended),
        tool,
      ).toBe(true);
    expect(b.started.some((r) => r.tool === "perfquery" && r.mode === "hang-hard" && r.ended)).toBe(true);
  });
});
