/**
 * Fuzz: the InfiniBand parsers (collectors/infiniband/parse-sysfs.ts, parse-ibstat.ts,
 * parse-perfquery.ts, diag-errors.ts) on mutated real captures and hostile text: never throw, never
 * NaN/±Infinity, counters are u64 values (0 ≤ v ≤ 2^64-1), the one-line problem stays one short
 * line, and a 10 MB line (including one with a long run of blanks, which made the old regular
 * expressions backtrack quadratically) is handled.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diagLine, diagProblem } from "../../collectors/infiniband/diag-errors.js";
import { parseIbstat } from "../../collectors/infiniband/parse-ibstat.js";
import { parsePerfquery } from "../../collectors/infiniband/parse-perfquery.js";
import { cleanText, normalizeGuid, parseCounterValue, parseLid, parseRateBytesPerSecond, parseStateId } from "../../collectors/infiniband/parse-sysfs.js";
import { linesOf, stringChars, toolCaptures, violations } from "./invariants.js";
import { fuzzInput, hugeLine, mutatedText, mutatedWhole, RUNS, withoutCr } from "./mutate.js";

const U64_MAX = 2n ** 64n - 1n;

/** File contents of the sysfs captures (`path:content` dumps and ttar content lines). */
const sysfsValues = [
  ...new Set(
    linesOf(toolCaptures("ib_sysfs")).flatMap((l) => {
      const c = l.indexOf(":");
      return c > 0 ? [l, l.slice(c + 1)] : [l];
    }),
  ),
];
const ibstatTexts = toolCaptures("ibstat");
const perfTexts = toolCaptures("perfquery");
const diagLines = linesOf([...ibstatTexts, ...perfTexts, ...toolCaptures("errors")]);
const PORT_NUMBERS = ["port", "rateGbps", "baseLid", "lmc", "smLid", "numberOfPorts", "lid", "portSelect"];

describe("fuzz: sysfs file parsers", () => {
  it("parseCounterValue: a u64 (0..2^64-1) or a reason, never a number outside that", () => {
    fc.assert(
      fc.property(fuzzInput(sysfsValues), (text) => {
        const r = parseCounterValue(text);
        if (r.ok) {
          expect(Number.isInteger(r.value)).toBe(true);
          expect(r.value).toBeGreaterThanOrEqual(0);
          expect(BigInt(text.trim())).toBeLessThanOrEqual(U64_MAX);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("parseCounterValue: every u64 printed by the kernel reads back; anything above 2^64-1 is garbled", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 70n }), fc.constantFrom("", "\n", " \n"), (v, end) => {
        const r = parseCounterValue(`${v}${end}`);
        if (v <= U64_MAX) expect(r).toEqual({ ok: true, value: Number(v) });
        else expect(r).toEqual({ ok: false, reason: "garbled" });
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: 2^64+1 and 99999999999999999999 are garbled, not counters (fast-check counter-example)", () => {
    expect(parseCounterValue("18446744073709551617\n")).toEqual({ ok: false, reason: "garbled" });
    expect(parseCounterValue("99999999999999999999")).toEqual({ ok: false, reason: "garbled" });
    expect(parseCounterValue("18446744073709551615\n")).toEqual({ ok: true, value: 18446744073709551615 });
  });

  it("rate, state, lid, guid, text: undefined or a bounded, finite value", () => {
    fc.assert(
      fc.property(fuzzInput(sysfsValues), (text) => {
        const rate = parseRateBytesPerSecond(text);
        if (rate !== undefined) expect(Number.isFinite(rate) && rate >= 0).toBe(true);
        const state = parseStateId(text);
        if (state !== undefined) expect(state >= 0 && state <= 999).toBe(true);
        const lid = parseLid(text);
        if (lid !== undefined) expect(Number.isInteger(lid) && lid >= 0 && lid <= 99_999).toBe(true);
        const guid = normalizeGuid(text);
        if (guid !== undefined) expect(guid).toMatch(/^0x[0-9a-f]{16}$/);
        const clean = cleanText(text);
        if (clean !== undefined) {
          expect(clean.length).toBeLessThanOrEqual(128);
          expect(clean).not.toMatch(/[\u0000-\u001f\u007f]/);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: a 400-digit rate is absent, not Infinity (fast-check counter-example)", () => {
    expect(parseRateBytesPerSecond(`${"9".repeat(400)} Gb/sec (4X NDR)`)).toBeUndefined();
  });

  it("10 MB attribute files: every parser returns at once", () => {
    for (const unit of ["9", " ", "0x", "\u0000", "4: ACTIVE "]) {
      const text = hugeLine(unit);
      expect(parseCounterValue(text).ok).toBe(false);
      expect(parseRateBytesPerSecond(text)).toBeUndefined();
      expect(parseLid(text)).toBeUndefined();
      expect(normalizeGuid(text)).toBeUndefined();
      expect((cleanText(text) ?? "").length).toBeLessThanOrEqual(128);
      if (unit !== "4: ACTIVE ") expect(parseStateId(text)).toBeUndefined();
    }
  });
});

describe("fuzz: ibstat parser", () => {
  it("never throws; numbers finite and non-negative; the problem is one short line; output no larger than input", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole(ibstatTexts), mutatedText(diagLines)), (text) => {
        const r = parseIbstat(text);
        expect(violations(r, { nonNegative: PORT_NUMBERS })).toEqual([]);
        expect(r.problem === undefined || (r.problem.length <= 300 && !r.problem.includes("\n"))).toBe(true);
        expect(stringChars({ cas: r.cas, warnings: r.warnings })).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("CRLF line ends give the same result as LF", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...ibstatTexts), mutatedText(diagLines)).map(withoutCr), (text) => {
        expect(parseIbstat(text.replaceAll("\n", "\r\n"))).toEqual(parseIbstat(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("keys named like Object.prototype members are ordinary unknown keys", () => {
    const protoKeys = Object.getOwnPropertyNames(Object.prototype).filter((k) => /^[A-Za-z][A-Za-z ]*$/.test(k));
    fc.assert(
      fc.property(fc.constantFrom(...protoKeys), fc.boolean(), (key, inPort) => {
        const text = `CA 'mlx5_0'\n${inPort ? "\tPort 1:\n" : ""}\t\t${key}: 1\n`;
        expect(() => parseIbstat(text)).not.toThrow();
        expect(parseIbstat(text).cas[0]?.ports).toEqual(inPort ? [{ port: 1 }] : []);
      }),
      { numRuns: 40 },
    );
  });

  it("regression: `constructor: 1` in a port block threw `portKey[1] is not a function`", () => {
    expect(parseIbstat("CA 'mlx5_0'\n\tPort 1:\n\t\tconstructor: 1\n").cas[0]?.ports).toEqual([{ port: 1 }]);
    expect(parseIbstat("CA 'mlx5_0'\n\ttoString: 1\n").cas[0]?.name).toBe("mlx5_0");
  });

  it("regression: Rate of 400 digits is absent, not Infinity (fast-check counter-example)", () => {
    const r = parseIbstat(`CA 'mlx5_0'\n\tPort 1:\n\t\tRate: ${"9".repeat(400)}\n\t\tBase lid: 7\n`);
    expect(r.cas[0]?.ports[0]).toEqual({ port: 1, baseLid: 7 });
  });

  it("10 MB lines, one with a 10 MB run of blanks inside a value, parse in linear time", () => {
    const ca = "CA 'mlx5_0'\n\tCA type: MT4129\n";
    const blanks = parseIbstat(`${ca}\tFirmware version: x${hugeLine(" ")}y\n\tNumber of ports: 1\n`);
    expect(blanks.cas[0]?.numberOfPorts).toBe(1);
    expect(blanks.cas[0]?.firmwareVersion?.length).toBe(10 * 1024 * 1024 + 2);
    const noColon = parseIbstat(`${ca}a${hugeLine(" ")}b\n`);
    expect(noColon.problem?.length).toBeLessThanOrEqual(300);
    const panic = parseIbstat(`${ca}ibpanic: [123] ${hugeLine("x ")}\n`);
    expect(panic.cas).toHaveLength(1);
    expect(panic.problem?.startsWith("ibpanic: x x")).toBe(true);
    expect(panic.problem?.length).toBeLessThanOrEqual(300);
  });
});

describe("fuzz: perfquery parser", () => {
  it("never throws; counters are u64; lid/port finite; output no larger than input", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole(perfTexts), mutatedText(linesOf(perfTexts))), (text) => {
        const r = parsePerfquery(text);
        expect(violations(r, { nonNegative: PORT_NUMBERS })).toEqual([]);
        for (const b of r.blocks) for (const v of Object.values(b.counters)) expect(v >= 0 && v <= 2 ** 64).toBe(true);
        expect(r.problem === undefined || (r.problem.length <= 300 && !r.problem.includes("\n"))).toBe(true);
        expect(stringChars({ blocks: r.blocks, warnings: r.warnings })).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: RUNS },
    );
  });

  it("a counter is the u64 printed; beyond 2^64-1 it is kept as text, not as a number", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 66n }), (v) => {
        const b = parsePerfquery(`# Port extended counters: Lid 5 port 1\nPortXmitData:......${v}\n`).blocks[0];
        if (v <= U64_MAX) expect(b?.counters).toEqual({ PortXmitData: Number(v) });
        else expect(b?.counters).toEqual({});
      }),
      { numRuns: RUNS },
    );
  });

  it("CRLF line ends give the same result as LF", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...perfTexts), mutatedText(linesOf(perfTexts))).map(withoutCr), (text) => {
        expect(parsePerfquery(text.replaceAll("\n", "\r\n"))).toEqual(parsePerfquery(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: a header with a 400-digit lid does not give lid Infinity (fast-check counter-example)", () => {
    const r = parsePerfquery(`# Port counters: Lid ${"9".repeat(400)} port 1\nSymbolErrorCounter:....3\n`);
    expect(violations(r)).toEqual([]);
  });

  it("10 MB lines, with long runs of blanks, dots or colons, parse in linear time", () => {
    const head = "# Port extended counters: Lid 5 port 1\n";
    const blanks = parsePerfquery(`${head}PortXmitData:x${hugeLine(" ")}y\nPortRcvData:....7\n`);
    expect(blanks.blocks[0]?.counters).toEqual({ PortRcvData: 7 });
    const dots = parsePerfquery(`${head}PortXmitData:${hugeLine(".")}\nPortRcvData:....7\n`);
    expect(dots.blocks[0]?.counters.PortRcvData).toBe(7);
    const header = parsePerfquery(`#${hugeLine(" ")}x\n# T: Lid 1 port 1${hugeLine(" ")}x\n#${hugeLine(": Lid 1 port 1 (x")}\n`);
    expect(header.blocks).toEqual([]);
    expect(header.problem?.length).toBeLessThanOrEqual(300);
  });
});

describe("fuzz: infiniband-diags error lines", () => {
  it("diagLine / diagProblem never throw; the problem is one line of bounded length", () => {
    fc.assert(
      fc.property(mutatedText(diagLines), (text) => {
        const p = diagProblem(text);
        expect(p === undefined || (p.length <= 300 && !/[\r\n]/.test(p))).toBe(true);
        for (const l of text.split("\n")) {
          const d = diagLine(l);
          if (d) expect(l.includes(d.kind)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a 10 MB ibwarn line with blanks inside is read in linear time", () => {
    const d = diagLine(`ibwarn: [99] a${hugeLine(" ")}b\r`);
    expect(d?.kind).toBe("ibwarn");
    expect(d?.text.endsWith("b")).toBe(true);
  });
});
