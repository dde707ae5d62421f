/**
 * Fault injection against the running agent, over real HTTP. Tools that print garbage: random
 * bytes, NULs, or a valid start (a dmon header) then junk. For each, one agent whose nvidia-smi
 * dmon, ibstat, lsmod and ip misbehave (set A) and one whose nvidia-smi --query-gpu and perfquery
 * misbehave (set B), next to a clean agent measured in the same seconds. The misbehaving tools are
 * test/fakes/faulty; the checks are in lib/tool-checks.ts.
 */
import { describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { find, troubleLogs } from "./lib/tool-checks.js";
import { toolFaultSuite } from "./lib/tool-suite.js";
import type { FaultMode } from "./lib/tool-rig.js";

const MODES: FaultMode[] = ["random", "nuls", "header-junk"];
const run = toolFaultSuite(MODES);

describe("random, nuls, header-junk: specifics", () => {
  it("random bytes on the dmon stream are counted as malformed lines, never as samples", () => {
    const a = find(run(), "random", "A");
    expect(sample(a.final, "ringwatch_gpu_dmon_malformed_lines_total")).toBeGreaterThan(100);
    expect(a.scrapes.every((s) => sample(s.body, 'ringwatch_gpu_power_watts{gpu="0"}') === undefined)).toBe(true);
  });

  it("a dmon header followed only by junk: the child is killed for silence and restarted", () => {
    const a = find(run(), "header-junk", "A");
    expect(sample(a.final, "ringwatch_gpu_dmon_malformed_lines_total")).toBeGreaterThan(0);
    expect(troubleLogs(a, "gpu").some((l) => l.includes("silent for 3 intervals and was killed"))).toBe(true);
    expect(a.scrapes.every((s) => sample(s.body, 'ringwatch_gpu_power_watts{gpu="0"}') === undefined)).toBe(true);
  });
});
