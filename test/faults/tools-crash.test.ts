/**
 * Fault injection against the running agent, over real HTTP. Tools that crash: exit 1 after part
 * of their output, die by SIGSEGV, or exit 1 in the middle of a line. For each, one agent whose
 * nvidia-smi dmon, ibstat, lsmod and ip misbehave (set A) and one whose nvidia-smi --query-gpu and
 * perfquery misbehave (set B), next to a clean agent measured in the same seconds. The misbehaving
 * tools are test/fakes/faulty; the checks are in lib/tool-checks.ts.
 */
import { describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { find, troubleLogs } from "./lib/tool-checks.js";
import { toolFaultSuite } from "./lib/tool-suite.js";
import type { FaultMode } from "./lib/tool-rig.js";

const MODES: FaultMode[] = ["crash", "signal", "midline"];
const run = toolFaultSuite(MODES);

describe("crash, signal, midline: specifics", () => {
  it("signal: the log names the signal; a dmon that dies is restarted", () => {
    const a = find(run(), "signal", "A");
    expect(troubleLogs(a, "mtu").some((l) => l.includes("killed by SIGSEGV"))).toBe(true);
    expect(troubleLogs(a, "gpu").some((l) => l.includes("killed by SIGSEGV"))).toBe(true);
    expect(sample(a.final, "ringwatch_gpu_dmon_restarts_total")).toBeGreaterThanOrEqual(1);
  });

  it("midline: the cut-off last line of a dying dmon is neither a row nor a malformed line", () => {
    const a = find(run(), "midline", "A");
    // The cut one ("    0    634 ... 2") never reaches the parser (no wrong reading: set A's checks).
    expect(sample(a.final, "ringwatch_gpu_dmon_malformed_lines_total")).toBe(0);
    expect(sample(a.final, "ringwatch_gpu_dmon_restarts_total")).toBeGreaterThanOrEqual(1);
  });
});
