import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { follow, Recorder, sleep, tempDir } from "./helpers.js";

describe("Follower, rotations in a busy directory", () => {
  // Before a file that loses its last path had its directory rescanned at once, ~1 % of the lines
  // were lost here: a renamed file was not seen under its new name before the next rotation deleted
  // it. Alone this now reads every line; under heavy CPU contention (other suites in parallel) the
  // rescan can still come late for a file or two, so the bound is 0.2 %, five times under the old loss.
  it("128 hot files (more than the 64 descriptors kept) rotated by rename every ~0.75 s: nothing read twice, at most a trace lost", async () => {
    const d = tempDir();
    const files = Array.from({ length: 128 }, (_, i) => join(d, `r${i}.log`));
    for (const p of files) writeFileSync(p, "");
    const rec = new Recorder();
    const { f } = await follow({ paths: [d], usePolling: false, removeGraceMs: 1000 }, rec);
    let written = 0;
    const pad = "x".repeat(180);
    const tick = (): void => {
      for (const p of files) {
        let s = "";
        for (let k = 0; k < 20; k++) s += `line ${written++} ${pad}\n`;
        appendFileSync(p, s);
      }
    };
    const ticks = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        tick();
        await sleep(50);
      }
    };
    await ticks(10);
    for (let round = 0; round < 4; round++) {
      await ticks(10);
      // logrotate `rotate 1` with create: the previous .1 is renamed over, so it is deleted.
      for (const p of files) {
        renameSync(p, `${p}.1`);
        writeFileSync(p, "");
      }
      await ticks(5);
    }
    await ticks(5);
    const deadline = Date.now() + 15_000;
    while (f.stats().linesRead < written && Date.now() < deadline) await sleep(100);
    await sleep(500);
    const seen = new Map<string, number>();
    for (const l of rec.lines()) seen.set(l, (seen.get(l) ?? 0) + 1);
    expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
    expect(seen.size).toBeLessThanOrEqual(written);
    expect(written - seen.size).toBeLessThan(written * 0.002);
  }, 60_000);
});
