import { appendFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const openFds = (): number => readdirSync("/proc/self/fd").length;

describe.each(MODES)("Follower with thousands of files ($name)", ({ name, opts }) => {
  it("follows 2,000 files without an fd per file", { timeout: 60_000 }, async () => {
    const d = testTempDir();
    const paths: string[] = [];
    for (let dir = 0; dir < 20; dir++) {
      mkdirSync(join(d, `node${dir}`));
      for (let i = 0; i < 100; i++) {
        const p = join(d, `node${dir}`, `nccl-${i}.log`);
        writeFileSync(p, `init ${dir}/${i}\n`);
        paths.push(p);
      }
    }
    const fdsBefore = existsSync("/proc/self/fd") ? openFds() : 0;
    const { rec, f } = await follow({ ...opts, ...(name === "polling" ? { pollIntervalMs: 1000 } : {}), paths: [d] });
    expect(rec.got.filter((g) => g.historical)).toHaveLength(2000);
    expect(f.stats().files).toBe(2000);
    if (fdsBefore > 0) expect(openFds() - fdsBefore).toBeLessThan(100);
    const some = paths.filter((_, i) => i % 40 === 0); // 50 files, spread over every directory
    for (const p of some) appendFileSync(p, `more ${p}\n`);
    await eventually(() => expect(rec.got.filter((g) => !g.historical)).toHaveLength(50), 30_000);
    expect(new Set(rec.got.filter((g) => !g.historical).map((g) => g.line))).toEqual(new Set(some.map((p) => `more ${p}`)));
    if (fdsBefore > 0) expect(openFds() - fdsBefore).toBeLessThan(100);
  });
});
