/**
 * Fault injection against the running agent, over real HTTP. Tools that print 100 MB: their real
 * output repeated, or one endless line. For each, one agent whose nvidia-smi dmon, ibstat, lsmod
 * and ip misbehave (set A) and one whose nvidia-smi --query-gpu and perfquery misbehave (set B),
 * next to a clean agent measured in the same seconds. The misbehaving tools are test/fakes/faulty;
 * the checks are in lib/tool-checks.ts.
 */
import { describe, expect, it } from "vitest";
import { sample } from "../helpers/agent-process.js";
import { find, troubleLogs } from "./lib/tool-checks.js";
import { toolFaultSuite } from "./lib/tool-suite.js";
import type { FaultMode } from "./lib/tool-rig.js";

const MODES: FaultMode[] = ["flood", "flood-noline"];
const run = toolFaultSuite(MODES);

describe("flood, flood-noline: specifics", () => {
  it("a dmon that floods is killed after a few thousand lines, not parsed for 100 MB", () => {
    const a = find(run(), "flood", "A");
    expect(troubleLogs(a, "gpu").some((l) => /nvidia-smi dmon printed \d+ lines in .* and was killed/.test(l))).toBe(true);
    expect(sample(a.final, "ringwatch_gpu_dmon_restarts_total")).toBeGreaterThanOrEqual(1);
    // One-shot tools are killed at their output limit.
    for (const c of ["infiniband", "gdr", "mtu"])
      expect(
        troubleLogs(a, c).some((l) => l.includes("output exceeded the limit")),
        `${c}: ${troubleLogs(a, c).join("\n")}`,
      ).toBe(true);
  });

  it("one endless line on the dmon stream is skipped without being buffered", () => {
    const a = find(run(), "flood-noline", "A");
    expect(sample(a.final, "ringwatch_gpu_dmon_malformed_lines_total")).toBeGreaterThan(0);
    expect(a.scrapes.every((s) => sample(s.body, 'ringwatch_gpu_power_watts{gpu="0"}') === undefined)).toBe(true);
  });
});
