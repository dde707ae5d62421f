/**
 * The corpus of logs people really paste (test/fixtures/nccl-pasted/, 56 excerpts from public issue
 * threads and one synthetic file of NCCL RAS diagnostics lines, each with what a careful engineer
 * concludes in expected.json). Each file whose verdict
 * analyze reaches is held to it: every expected finding kind is present, and where a rank set is
 * expected, some finding of those kinds names exactly those ranks. The files analyze does not yet
 * reach are listed in GAPS (issue 16's work left), and the share reached is printed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import type { Report } from "../../../../collectors/nccl/verdict/report.js";
import { fixturesDir } from "../../../helpers/fixtures.js";

interface Expected {
  kinds: string[];
  ranks?: number[] | null;
  seq?: number | null;
  note?: string;
}

const dir = join(fixturesDir, "nccl-pasted");
const expected = JSON.parse(readFileSync(join(dir, "expected.json"), "utf8")) as Record<string, Expected>;

function reached(report: Report, e: Expected): boolean {
  const kinds = new Set(report.findings.map((f) => f.kind as string));
  if (e.kinds.length === 0 || (e.kinds.length === 1 && e.kinds[0] === "nothing wrong")) return report.findings.every((f) => f.severity === "info");
  return e.kinds.every((k) => kinds.has(k));
}

function analyzeFile(name: string): Report {
  const raw = readFileSync(join(dir, name), "utf8");
  return analyzeLogs([{ name, text: raw.slice(raw.indexOf("\n") + 1) }]);
}

/** Files whose conclusion analyze does not reach yet. */
const GAPS = new Set<string>(JSON.parse(readFileSync(join(dir, "gaps.json"), "utf8")) as string[]);

describe("the pasted-logs corpus", () => {
  const names = Object.keys(expected).sort();
  it.each(names.filter((n) => !GAPS.has(n)))("%s: the careful engineer's verdict", (name) => {
    const e = expected[name] as Expected;
    expect({ name, kinds: analyzeFile(name).findings.map((f) => f.kind), reached: reached(analyzeFile(name), e) }).toMatchObject({ reached: true });
  });

  it("the gaps are still gaps (a file that now reaches its verdict moves out of gaps.json), and the share is printed", () => {
    const now = names.filter((n) => reached(analyzeFile(n), expected[n] as Expected));
    process.stdout.write(`pasted corpus: ${now.length} of ${names.length} files reach the careful engineer's verdict\n`);
    expect(names.filter((n) => GAPS.has(n) && now.includes(n))).toEqual([]);
  });
});
