/**
 * Fuzz: Prometheus-style durations (collectors/settings/duration.ts), which every interval/threshold flag goes
 * through. The result is undefined or a safe, non-negative integer of milliseconds: never NaN or
 * Infinity (config.ts only rejects `undefined` and `<= 0`, so NaN would have been accepted).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../collectors/settings/duration.js";
import { fuzzInput, hugeLine, RUNS } from "./mutate.js";

const SEEDS = ["500ms", "15s", "1m30s", "2h", "1d", "1w", "0", "1.5", "30", "1h2m3s4ms", " 5s "];

describe("fuzz: parseDuration", () => {
  it("undefined or a safe non-negative integer, for any text", () => {
    fc.assert(
      fc.property(fc.oneof(fuzzInput(SEEDS, 4), fc.string({ maxLength: 30 })), (text) => {
        const ms = parseDuration(text);
        if (ms !== undefined) {
          expect(Number.isSafeInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 2 * RUNS },
    );
  });

  it("reads back what formatDuration writes", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 45 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
      { numRuns: RUNS },
    );
  });

  it("a compound duration is the sum of its parts", () => {
    fc.assert(
      fc.property(fc.nat(1000), fc.nat(1000), fc.nat(1000), fc.nat(1000), (h, m, s, x) => {
        expect(parseDuration(`${h}h${m}m${s}s${x}ms`)).toBe(h * 3_600_000 + m * 60_000 + s * 1000 + x);
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: `1constructor` read Object.prototype.constructor as a unit and gave NaN (fast-check counter-example)", () => {
    expect(parseDuration("1constructor")).toBeUndefined();
    for (const key of Object.getOwnPropertyNames(Object.prototype)) expect(parseDuration(`1${key}`)).toBeUndefined();
  });

  it("regression: durations beyond 2^53 ms (`9999…9`, 400 digits) are rejected, not Infinity", () => {
    expect(parseDuration("9".repeat(400))).toBeUndefined();
    expect(parseDuration(`${"9".repeat(400)}s`)).toBeUndefined();
    expect(parseDuration("99999999999999999w")).toBeUndefined();
    expect(parseDuration("1e309")).toBeUndefined();
  });

  it("10 MB of text is read in linear time", () => {
    expect(parseDuration(hugeLine("9"))).toBeUndefined();
    expect(parseDuration(hugeLine("1s", 1024 * 1024))).toBe(512 * 1024 * 1000);
    expect(parseDuration(hugeLine("1x", 1024 * 1024))).toBeUndefined();
  });
});
