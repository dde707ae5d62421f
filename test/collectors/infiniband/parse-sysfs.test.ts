import { describe, expect, it } from "vitest";
import { cleanText, normalizeGuid, parseCounterValue, parseLid, parseRateBytesPerSecond, parseStateId } from "../../../collectors/infiniband/parse-sysfs.js";

describe("parseStateId", () => {
  it.each([
    ["4: ACTIVE\n", 4],
    ["1: DOWN", 1],
    ["5: LinkUp\n", 5],
    ["3: Disabled", 3],
    ["  2 : INIT", 2],
  ])("%j → %d", (text, id) => {
    expect(parseStateId(text)).toBe(id);
  });

  it.each(["ACTIVE", "", "x: ACTIVE", "4 ACTIVE"])("%j → undefined", (text) => {
    expect(parseStateId(text)).toBeUndefined();
  });
});

describe("parseRateBytesPerSecond (Gb × 125,000,000)", () => {
  it.each([
    ["400 Gb/sec (4X NDR)\n", 50_000_000_000],
    ["200 Gb/sec (2X NDR)", 25_000_000_000],
    ["100 Gb/sec (4X EDR)", 12_500_000_000],
    ["40 Gb/sec (4X QDR)", 5_000_000_000],
    ["25 Gb/sec (1X EDR)", 3_125_000_000],
    ["10 Gb/sec (4X)", 1_250_000_000],
    ["2.5 Gb/sec (1X SDR)", 312_500_000],
    ["0 GB/sec\n", 0],
  ])("%j → %d", (text, bytes) => {
    expect(parseRateBytesPerSecond(text)).toBe(bytes);
  });

  it.each(["", "fast", "Gb/sec 400", "400Gb/sec"])("%j → undefined", (text) => {
    expect(parseRateBytesPerSecond(text)).toBeUndefined();
  });
});

describe("parseCounterValue", () => {
  it("reads decimal values, including 64-bit ones", () => {
    expect(parseCounterValue("4294967295\n")).toEqual({ ok: true, value: 4294967295 });
    expect(parseCounterValue("0")).toEqual({ ok: true, value: 0 });
    expect(parseCounterValue("230539874932483\n")).toEqual({ ok: true, value: 230539874932483 });
  });

  it("tells N/A (no PMA) from garbage", () => {
    expect(parseCounterValue("N/A (no PMA)\n")).toEqual({ ok: false, reason: "no-pma" });
    expect(parseCounterValue("-1")).toEqual({ ok: false, reason: "garbled" });
    expect(parseCounterValue("")).toEqual({ ok: false, reason: "garbled" });
    expect(parseCounterValue("12 34")).toEqual({ ok: false, reason: "garbled" });
  });
});

describe("parseLid / normalizeGuid / cleanText", () => {
  it("reads hex and decimal LIDs", () => {
    expect(parseLid("0x33bf\n")).toBe(0x33bf);
    expect(parseLid("0x0")).toBe(0);
    expect(parseLid("128")).toBe(128);
    expect(parseLid("lid")).toBeUndefined();
  });

  it("puts both GUID spellings in the same form", () => {
    expect(normalizeGuid("0a7f:bc12:45ef:d23b")).toBe("0x0a7fbc1245efd23b");
    expect(normalizeGuid("0x58A2E10300A7820E\n")).toBe("0x58a2e10300a7820e");
    expect(normalizeGuid("0x1")).toBe("0x0000000000000001");
    expect(normalizeGuid("not a guid")).toBeUndefined();
  });

  it("cleans label text and drops empty values", () => {
    expect(cleanText("MT4129\n")).toBe("MT4129");
    expect(cleanText("a\u0000b\n")).toBe("a b");
    expect(cleanText(" \n")).toBeUndefined();
    expect(cleanText("x".repeat(500))).toHaveLength(128);
  });
});
