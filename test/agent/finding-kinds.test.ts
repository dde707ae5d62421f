/**
 * The table of finding kinds (collectors/nccl/verdict/finding-kinds.ts): every kind is one row with
 * a real capture that `ringwatch analyze` turns into a finding of that kind, or the reason no
 * capture can; docs/nccl.md lists exactly the table's kinds.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAnalyze } from "../../agent/analyze.js";
import { FINDING_KINDS, type FindingKindRow } from "../../collectors/nccl/verdict/finding-kinds.js";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { fixturesDir } from "../helpers/fixtures.js";

const ROWS: readonly FindingKindRow[] = FINDING_KINDS;
const DOCS = join(fixturesDir, "..", "..", "docs", "nccl.md");

async function analyze(path: string): Promise<Report> {
  let out = "";
  const code = await runAnalyze(["--json", path], { stdout: (s) => (out += s), stderr: () => undefined });
  expect(code, path).toBe(0);
  return JSON.parse(out) as Report;
}

describe("finding kinds", () => {
  it.each(ROWS.filter((r) => r.capture !== undefined).map((r) => [r.kind, r.capture ?? ""]))("%s: its capture %s gives one", async (kind, capture) => {
    const report = await analyze(join(fixturesDir, capture));
    expect(report.findings.map((f) => f.kind)).toContain(kind);
  });

  it("each row has a capture or says why none can; those without are the kinds no capture holds", () => {
    for (const r of ROWS)
      expect(
        [r.capture, r.noCapture].filter((x) => x !== undefined),
        r.kind,
      ).toHaveLength(1);
    expect(ROWS.filter((r) => r.capture === undefined).map((r) => r.kind)).toEqual([
      "stack_outlier",
      "nccl_diagnostic",
      "straggler",
      "dump_unreadable",
      "kernel_log_truncated",
    ]);
    expect(new Set(ROWS.map((r) => r.kind)).size).toBe(ROWS.length);
  });

  it("a live-only kind is one no capture can give analyze, and a source concludes it live", () => {
    const live = ROWS.filter((r) => r.liveOnly === true);
    expect(live.map((r) => r.kind)).toEqual(["straggler"]);
    for (const r of live) expect(r.noCapture, r.kind).toMatch(/^live only: /);
  });

  it("docs/nccl.md lists exactly the table's kinds in analyze's JSON fields (the live-only kinds aside)", () => {
    const text = readFileSync(DOCS, "utf8").replace(/\s+/g, " ");
    const start = text.indexOf("Each finding has `kind` (");
    const end = text.indexOf("), `severity`", start);
    expect(start).toBeGreaterThan(0);
    const listed = [...text.slice(start, end).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((k) => k !== "kind");
    expect([...new Set(listed)].sort()).toEqual(
      ROWS.filter((r) => r.liveOnly !== true)
        .map((r) => r.kind)
        .sort(),
    );
  });
});
