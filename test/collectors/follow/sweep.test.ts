import { describe, expect, it } from "vitest";
import type { Registry } from "../../../collectors/follow/registry.js";
import { ARMED_PER_SWEEP, Sweeper } from "../../../collectors/follow/sweep.js";
import { jobFsGate } from "../../../collectors/job-fs-gate.js";

/** A registry stand-in: every path is missing on disk, so each checked path reports unlinked(). */
function fakeRegistry(armed: number, hot: number, polled: number): { reg: Registry; checked: string[] } {
  const byPath = new Map<string, unknown>();
  for (let i = 0; i < armed; i++) byPath.set(`/nonexistent/rw-sweep/armed-${i}`, { watch: {}, polled: false });
  for (let i = 0; i < hot; i++) byPath.set(`/nonexistent/rw-sweep/hot-${i}`, { watch: null, polled: false });
  for (let i = 0; i < polled; i++) byPath.set(`/nonexistent/rw-sweep/polled-${i}`, { watch: null, polled: true });
  const checked: string[] = [];
  const reg = { byPath, byId: new Map(), unlinked: (p: string) => checked.push(p) } as unknown as Registry;
  return { reg, checked };
}

describe("Sweeper", () => {
  it("checks every unarmed file each sweep and a rotating share of the armed ones", async () => {
    const { reg, checked } = fakeRegistry(2500, 3, 2);
    const s = new Sweeper(reg, () => undefined, jobFsGate);
    const armedSeen: number[] = [];
    for (let run = 0; run < 4; run++) {
      checked.length = 0;
      await s.run("all");
      expect(checked.filter((p) => !p.includes("armed-"))).toHaveLength(5);
      armedSeen.push(checked.filter((p) => p.includes("armed-")).length);
    }
    expect(armedSeen).toEqual([ARMED_PER_SWEEP, ARMED_PER_SWEEP, 500, ARMED_PER_SWEEP]);
  });

  it("full checks everything; polled only the files without a watch", async () => {
    const { reg, checked } = fakeRegistry(1500, 3, 2);
    const s = new Sweeper(reg, () => undefined, jobFsGate);
    await s.run("full");
    expect(checked).toHaveLength(1505);
    checked.length = 0;
    await s.run("polled");
    expect(checked.every((p) => p.includes("polled-"))).toBe(true);
    expect(checked).toHaveLength(2);
  });
});
