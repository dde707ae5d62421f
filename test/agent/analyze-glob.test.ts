/** The glob matcher of `ringwatch analyze`, for patterns the shell did not expand. */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expandGlob, hasGlob, matchSegment } from "../../agent/analyze-glob.js";
import { tempDir } from "../helpers/temp-dir.js";

describe("analyze's glob", () => {
  it("matches *, ?, [...] as a shell does", () => {
    const yes: [string, string][] = [
      ["*.log", "rank0.log"],
      ["*.log*", "rank0.log.1.gz"],
      ["rank?.log", "rank7.log"],
      ["rank[0-7].log", "rank3.log"],
      ["rank[!0-7].log", "rank8.log"],
      ["rank[^0-7].log", "rank9.log"],
      ["[]x].log", "].log"],
      ["a\\*b", "a*b"],
      ["[a", "[a"],
      ["*", "x"],
      [".*", ".hidden"],
      ["*a*b*c", "xxaxxbxxc"],
    ];
    const no: [string, string][] = [
      ["*.log", "rank0.log.1.gz"],
      ["rank?.log", "rank10.log"],
      ["rank[0-7].log", "rank8.log"],
      ["rank[!0-7].log", "rank3.log"],
      ["*", ".hidden"],
      ["?hidden", ".hidden"],
      ["a\\*b", "axb"],
      ["*a*b*c", "xxaxxbxx"],
    ];
    for (const [p, n] of yes) expect([p, n, matchSegment(p, n)]).toEqual([p, n, true]);
    for (const [p, n] of no) expect([p, n, matchSegment(p, n)]).toEqual([p, n, false]);
    expect([hasGlob("logs/*.log"), hasGlob("a[1]"), hasGlob("plain.log"), hasGlob("a\\*b")]).toEqual([true, true, false, false]);
  });

  it("does not backtrack exponentially", () => {
    const t0 = performance.now();
    expect(matchSegment("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a".repeat(5000))).toBe(false);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it("expands ** over folders, without dot folders, entering a folder reached again by a link only once", () => {
    const d = tempDir();
    for (const sub of ["node1", "node2/logs", "node2/.cache"]) mkdirSync(join(d, sub), { recursive: true });
    for (const f of ["node1/rank0.log", "node1/rank1.log.1.gz", "node2/logs/job.log", "node2/.cache/old.log", "top.log"]) writeFileSync(join(d, f), "x\n");
    symlinkSync("..", join(d, "node2", "up"));
    expect(expandGlob(`${d}/**/*.log`, 100).paths).toEqual([`${d}/top.log`, `${d}/node1/rank0.log`, `${d}/node2/logs/job.log`]);
    expect(expandGlob(`${d}/node[12]/*.log*`, 100).paths).toEqual([`${d}/node1/rank0.log`, `${d}/node1/rank1.log.1.gz`]);
    expect(expandGlob(`${d}/node*`, 100).paths).toEqual([`${d}/node1`, `${d}/node2`]);
    expect(expandGlob(`${d}/**`, 100).paths).toEqual([d]);
    expect(expandGlob(`${d}/*.txt`, 100).paths).toEqual([]);
    expect(expandGlob(`${d}/**/*`, 2)).toEqual({ paths: [`${d}/node1`, `${d}/node2`], stopped: `more than 2 paths match ${d}/**/*: the rest is not read` });
  });
});
