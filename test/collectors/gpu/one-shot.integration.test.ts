/** nvidia-smi's one-shot runs are bounded in time and output: checked with node itself as the tool, through the real exec. */
import { describe, expect, it } from "vitest";
import { createExec } from "../../../collectors/exec.js";
import { ONE_SHOT_MAX_BYTES, oneShot } from "../../../collectors/gpu/one-shot.js";

describe("oneShot", () => {
  it("runs the tool with the arguments given and returns what it printed", async () => {
    const r = await oneShot(createExec(), process.execPath)(["-e", "console.log(process.argv.slice(1).join('|'))", "--", "--query-gpu=index", "--format=csv"]);
    expect(r.ok).toBe(true);
    expect(r.stdout).toBe("--query-gpu=index|--format=csv\n");
  });

  it("kills a tool that prints more than 1 MiB", async () => {
    const r = await oneShot(createExec(), process.execPath)(["-e", `process.stdout.write("x".repeat(${ONE_SHOT_MAX_BYTES + 1024}))`]);
    expect(r.ok).toBe(false);
    expect(r.overflowed).toBe(true);
    const fits = await oneShot(createExec(), process.execPath)(["-e", `process.stdout.write("x".repeat(${ONE_SHOT_MAX_BYTES - 1024}))`]);
    expect(fits.ok).toBe(true);
  });

  it("kills a tool that runs past the limit", async () => {
    const t0 = Date.now();
    const r = await oneShot(createExec(), process.execPath, 300)(["-e", "setTimeout(() => {}, 20000)"]);
    expect(r.timedOut).toBe(true);
    expect(r.ok).toBe(false);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
});
