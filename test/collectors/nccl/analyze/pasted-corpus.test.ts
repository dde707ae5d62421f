/**
 * The corpus of logs people really paste (test/fixtures/nccl-pasted/: excerpts from public issue
 * threads and one synthetic file of NCCL RAS diagnostics lines, each with what a careful engineer
 * concludes in expected.json). Each file is held to that conclusion whole:
 * - the set of finding kinds at warning and above is exactly the expected one (an extra finding
 *   fails as a missing one does; "nothing wrong" is the empty set);
 * - where ranks are expected with a finding, exactly those ranks are named, as a careful engineer names them: by the
 *   findings of the highest severity present, or by the verdict's leading finding (the headline's: a rank behind
 *   rather than every rank's own timeout), each as its culprits (`ranks`) alone or with those they hold up
 *   (`waiting_ranks`);
 * - where a sequence number is expected, a finding at warning or above carries it.
 * The files analyze does not yet reach are in gaps.json with what is missing; the share reached is
 * printed (docs/nccl.md, "How good is analyze").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { KernelLines } from "../../../../agent/analyze-kernel.js";
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
/** Files whose conclusion analyze does not reach yet, with what is missing. */
const gaps = JSON.parse(readFileSync(join(dir, "gaps.json"), "utf8")) as Record<string, string>;

const sorted = (xs: Iterable<number>): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** What differs between the report and the careful engineer's conclusion (empty: reached). */
function differences(report: Report, e: Expected): string[] {
  const serious = report.findings.filter((f) => f.severity !== "info");
  const out: string[] = [];
  const kinds = [...new Set(serious.map((f) => f.kind as string))].sort();
  const want = [...new Set(e.kinds.filter((k) => k !== "nothing wrong"))].sort();
  if (kinds.join() !== want.join()) out.push(`kinds [${kinds.join(", ")}], expected [${want.join(", ")}]`);
  if (want.length > 0 && e.ranks && e.ranks.length > 0) {
    const top = serious.some((f) => f.severity === "critical") ? "critical" : "warning";
    const lead = report.findings[report.incidents[0]?.findings[0] ?? -1];
    const readings = [serious.filter((f) => f.severity === top), lead !== undefined ? [lead] : []].flatMap((named) => [
      sorted(named.flatMap((f) => f.ranks)).join(),
      sorted(named.flatMap((f) => [...f.ranks, ...(f.waiting_ranks ?? [])])).join(),
    ]);
    const wantRanks = sorted(e.ranks).join();
    if (!readings.includes(wantRanks)) out.push(`ranks [${readings[1] ?? ""}], expected [${wantRanks}]`);
  }
  if (e.seq !== undefined && e.seq !== null && !serious.some((f) => f.seq === e.seq)) {
    out.push(`seq [${serious.flatMap((f) => (f.seq !== undefined ? [f.seq] : [])).join(",")}], expected ${e.seq}`);
  }
  return out;
}

function analyzeFile(name: string): Report {
  const raw = readFileSync(join(dir, name), "utf8");
  // As `ringwatch analyze` reads them: with the kernel lines (Xid, AER) a pasted dmesg holds.
  return analyzeLogs([{ name, text: raw.slice(raw.indexOf("\n") + 1) }], new KernelLines());
}

const names = Object.keys(expected).sort();

describe("the pasted-logs corpus", () => {
  it.each(names.filter((n) => gaps[n] === undefined))("%s: the careful engineer's verdict, no more, no less", (name) => {
    expect(differences(analyzeFile(name), expected[name] as Expected)).toEqual([]);
  });

  it("every file has its source on line 1 and an expected verdict; every gap is a file of the corpus", () => {
    for (const n of names) expect(readFileSync(join(dir, n), "utf8").startsWith("# source: "), n).toBe(true);
    expect(Object.keys(gaps).filter((n) => !names.includes(n))).toEqual([]);
  });

  it("the gaps are still gaps (a file that now reaches its verdict moves out of gaps.json), and the share is printed", () => {
    let kindsExpected = 0;
    let kindsFound = 0;
    const reached: string[] = [];
    for (const n of names) {
      const e = expected[n] as Expected;
      const r = analyzeFile(n);
      const found = new Set(r.findings.filter((f) => f.severity !== "info").map((f) => f.kind as string));
      const want = e.kinds.filter((k) => k !== "nothing wrong");
      kindsExpected += want.length;
      kindsFound += want.filter((k) => found.has(k)).length;
      if (differences(r, e).length === 0) reached.push(n);
    }
    process.stdout.write(
      `pasted corpus: ${reached.length} of ${names.length} files reach the careful engineer's verdict exactly; ` +
        `${kindsFound} of ${kindsExpected} expected finding kinds found\n`,
    );
    expect(Object.keys(gaps).filter((n) => reached.includes(n))).toEqual([]);
  });
});
