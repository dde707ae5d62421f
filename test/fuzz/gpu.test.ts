/**
 * Fuzz: the nvidia-smi parsers (collectors/gpu/parse-dmon.ts, parse-query.ts) on mutated real
 * captures and hostile text. They must never throw, never yield NaN/±Infinity, keep their counters
 * non-negative and monotonic, and produce no more text than they were given.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DmonParser, parseDecimal, parseDmonText, type DmonEvent } from "../../collectors/gpu/parse-dmon.js";
import { IDENTITY_FIELDS, parseIdentity, parseQueryCsv, queryNumber } from "../../collectors/gpu/parse-query.js";
import { linesOf, stringChars, toolCaptures, violations } from "./invariants.js";
import { fuzzInput, hugeLine, mutatedText, mutatedWhole, RUNS, withoutCr } from "./mutate.js";

const dmonTexts = toolCaptures("nvidia_smi_dmon");
const dmonLines = linesOf([...dmonTexts, ...toolCaptures("errors")]);
const queryTexts = toolCaptures("nvidia_smi_query_csv");
const queryLines = linesOf([...queryTexts, ...toolCaptures("errors")]);
const STATS = ["rows", "skipped", "errors", "headers"] as const;

function rowsOnly(text: string): unknown {
  const r = parseDmonText(text);
  return { rows: r.rows, columns: r.columns, errors: r.errors.map((e) => e.kind) };
}

describe("fuzz: nvidia-smi dmon parser", () => {
  it("feed() never throws; stats stay non-negative, never decrease, and count at most one event per line", () => {
    fc.assert(
      fc.property(fc.array(fuzzInput(dmonLines), { maxLength: 30 }), (lines) => {
        const p = new DmonParser();
        let before = { ...p.stats };
        for (const line of lines) {
          const ev: DmonEvent | undefined = p.feed(line);
          expect(violations(ev)).toEqual([]);
          for (const k of STATS) expect(p.stats[k]).toBeGreaterThanOrEqual(before[k]);
          const grown = STATS.reduce((n, k) => n + p.stats[k] - before[k], 0);
          expect(grown).toBeLessThanOrEqual(1);
          before = { ...p.stats };
        }
        expect(STATS.reduce((n, k) => n + p.stats[k], 0)).toBeLessThanOrEqual(lines.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("parseDmonText on mutated captures: finite values, output no larger than twice the input", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole(dmonTexts), mutatedText(dmonLines)), (text) => {
        const r = parseDmonText(text);
        expect(violations(r)).toEqual([]);
        for (const row of r.rows) expect(row.gpu).toMatch(/^\d+$/);
        const fromInput = { rows: r.rows, columns: r.columns, errors: r.errors.map((e) => [e.message, e.pciBusId]), skipped: r.skipped.map((k) => k.line) };
        expect(stringChars(fromInput)).toBeLessThanOrEqual(2 * text.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("CRLF line ends give the same rows as LF", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...dmonTexts), mutatedText(dmonLines)).map(withoutCr), (text) => {
        expect(rowsOnly(text.replaceAll("\n", "\r\n"))).toEqual(rowsOnly(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("a value is the decimal printed, or absent: never NaN, never Infinity", () => {
    const token = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
      fc.double({ min: 0, max: 1e6, noNaN: true }).map((d) => d.toFixed(2)),
      fc.constantFrom("18446744073709551617", "1e309", "9".repeat(400), "0x10", "-", "N/A", "1.2.3", "--1"),
    );
    fc.assert(
      fc.property(token, (t) => {
        const v = parseDecimal(t);
        if (v !== undefined) {
          expect(Number.isFinite(v)).toBe(true);
          expect(v).toBe(Number(t));
        }
        const row = parseDmonText(`# gpu pwr\n0 ${t}`).rows[0];
        expect(row?.values.pwr).toBe(v);
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: a 400-digit value is absent, not Infinity (fast-check counter-example)", () => {
    expect(parseDecimal("9".repeat(400))).toBeUndefined();
    expect(parseDmonText(`# gpu pwr sm\n0 ${"9".repeat(400)} 5`).rows[0]?.values).toEqual({ sm: 5 });
  });

  it("a 10 MB line (header, row or junk) is parsed or skipped, and the next row still parses", () => {
    const p = new DmonParser();
    p.feed("# gpu pwr sm");
    expect(p.feed(hugeLine("0 1 2 "))?.type).toBe("skip");
    expect(p.feed(hugeLine("\u0000\u00ff", 1024 * 1024))?.type).toBe("skip");
    expect(p.feed("#" + hugeLine(" gpu", 1024 * 1024))?.type).toBe("header");
    p.feed("# gpu pwr sm");
    expect(p.feed("0 70 5")).toEqual({ type: "row", row: { gpu: "0", values: { pwr: 70, sm: 5 } } });
  });
});

describe("fuzz: nvidia-smi --query-gpu CSV parser", () => {
  const fieldSets: (readonly string[] | undefined)[] = [undefined, IDENTITY_FIELDS, ["index", "power.draw"], []];

  it("never throws; every row has exactly the field keys; numbers read from it are finite", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole(queryTexts), mutatedText(queryLines)), fc.constantFrom(...fieldSets), (text, fields) => {
        const r = parseQueryCsv(text, fields);
        expect(violations(r)).toEqual([]);
        for (const row of r.rows) {
          expect(Object.keys(row)).toEqual([...new Set(r.fields)]);
          for (const v of Object.values(row)) {
            const n = queryNumber(v);
            if (n !== undefined) expect(Number.isFinite(n)).toBe(true);
          }
        }
        expect(r.rows.length + r.errors.length + r.skipped.length).toBeLessThanOrEqual(text.split("\n").length);
      }),
      { numRuns: RUNS },
    );
  });

  it("parseIdentity: finite power limits, an index on every GPU, CRLF changes nothing", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedText(queryLines), mutatedWhole(queryTexts)), (text) => {
        const r = parseIdentity(text);
        expect(violations(r, { nonNegative: [] })).toEqual([]);
        for (const g of r.gpus) expect(g.index.length).toBeGreaterThan(0);
        const lf = withoutCr(text);
        expect(parseIdentity(lf.replaceAll("\n", "\r\n")).gpus).toEqual(parseIdentity(lf).gpus);
      }),
      { numRuns: RUNS },
    );
  });

  it("queryNumber: finite or undefined for any text", () => {
    fc.assert(
      fc.property(fc.oneof(fuzzInput(["700.00 W", "52 %", "2100", "[N/A]"]), fc.string()), (v) => {
        const n = queryNumber(v);
        expect(n === undefined || Number.isFinite(n)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("a 10 MB line is skipped without trouble and the other rows stay", () => {
    const text = `0, GPU-1, H100, 00000000:07:00.0, 590.48.01, 700.00\n${hugeLine("1, ")}\n1, GPU-2, H100, 00000000:08:00.0, 590.48.01, 700.00`;
    const r = parseIdentity(text);
    expect(r.gpus.map((g) => g.index)).toEqual(["0", "1"]);
    expect(r.skipped).toHaveLength(1);
  });
});
