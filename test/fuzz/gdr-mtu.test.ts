/**
 * Fuzz: the kernel module list parsers (collectors/gdr/parse-modules.ts) and the iproute2 parsers
 * (collectors/mtu/parse-ip-json.ts, parse-ip-text.ts) on mutated real captures and hostile text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseLsmod, parseProcModules, parseProcModulesLine, type KernelModule } from "../../collectors/gdr/parse-modules.js";
import { parseIpJson } from "../../collectors/mtu/parse-ip-json.js";
import { parseIpText } from "../../collectors/mtu/parse-ip-text.js";
import { linesOf, procModulesTexts, toolCaptures, violations } from "./invariants.js";
import { hugeLine, mutatedText, mutatedWhole, RUNS, withoutCr } from "./mutate.js";

const procTexts = procModulesTexts();
const lsmodTexts = toolCaptures("lsmod");
const moduleLines = linesOf([...procTexts, ...lsmodTexts]);
const ipCaptures = toolCaptures("ip_link");
const ipJson = ipCaptures.filter((t) => t.trimStart().startsWith("["));
const ipText = ipCaptures.filter((t) => !t.trimStart().startsWith("["));

function checkModules(text: string, list: ReturnType<typeof parseLsmod>): void {
  expect(violations(list, { nonNegative: ["size", "invalidLines"] })).toEqual([]);
  const nonBlank = text.split("\n").filter((l) => l.trim() !== "").length;
  expect(list.modules.length + list.invalidLines).toBeLessThanOrEqual(nonBlank);
  for (const m of list.modules) {
    expect(m.name).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Number.isSafeInteger(m.size)).toBe(true);
    expect(m.refcount === undefined || Number.isSafeInteger(m.refcount)).toBe(true);
    for (const u of m.users) expect(u.length).toBeGreaterThan(0);
  }
}

describe("fuzz: /proc/modules and lsmod parsers", () => {
  it("never throw; every line is a module or counted invalid; sizes are safe integers", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole([...procTexts, ...lsmodTexts]), mutatedText(moduleLines)), (text) => {
        checkModules(text, parseProcModules(text));
        checkModules(text, parseLsmod(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("CRLF line ends give the same modules as LF", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...procTexts, ...lsmodTexts), mutatedText(moduleLines)).map(withoutCr), (text) => {
        const crlf = text.replaceAll("\n", "\r\n");
        expect(parseProcModules(crlf)).toEqual(parseProcModules(text));
        expect(parseLsmod(crlf)).toEqual(parseLsmod(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("a /proc/modules line as the kernel prints it reads back exactly", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/);
    const mod = fc.record({
      name,
      size: fc.nat({ max: 2 ** 32 }),
      refcount: fc.option(fc.integer({ min: -1, max: 10_000 }), { nil: undefined }),
      users: fc.array(name, { maxLength: 4 }),
      state: fc.constantFrom("Live", "Loading", "Unloading"),
    });
    fc.assert(
      fc.property(mod, fc.constantFrom("", " (OE)", " (POE)"), (m: KernelModule, taint) => {
        const users = m.users.length ? `${m.users.join(",")},` : "-";
        const ref = m.refcount === undefined ? "-" : String(m.refcount);
        const line = `${m.name} ${m.size} ${ref} ${m.refcount === undefined ? "-" : users} ${m.state} 0x0000000000000000${taint}`;
        expect(parseProcModulesLine(line)).toEqual({ ...m, users: m.refcount === undefined ? [] : m.users });
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: a 400-digit size or refcount makes the line invalid, not Infinity (fast-check counter-example)", () => {
    const big = "9".repeat(400);
    expect(parseProcModules(`nvidia_peermem ${big} 0 - Live 0x0000000000000000 (OE)`)).toEqual({ modules: [], invalidLines: 1, sawHeader: false });
    expect(parseLsmod(`nvidia_peermem 16384 ${big}`).invalidLines).toBe(1);
  });

  it("a 10 MB line is one invalid line; the modules around it stay", () => {
    const ok = "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)";
    const r = parseProcModules(`${ok}\n${hugeLine("a ")}\n${ok}\n`);
    expect(r.modules).toHaveLength(2);
    expect(r.invalidLines).toBe(1);
  });

  it("regression: a 10 MB users field threw RangeError (regex backtracking stack overflow); now it is read", () => {
    expect(parseLsmod(`nvidia 1 0 ${hugeLine("x,")}\n`).modules[0]?.users).toHaveLength(5 * 1024 * 1024);
    const mb = hugeLine("ib_core,", 4 * 1024 * 1024); // the old regular expression overflowed from about 4 MB
    expect(parseProcModules(`nvidia 1 0 ${mb} Live 0x0\n`).modules).toHaveLength(1);
    expect(parseLsmod(`nvidia 1 0 ${mb},\n`).invalidLines).toBe(1);
  });
});

describe("fuzz: ip -j link JSON parser", () => {
  it("text that is not a JSON array throws only the documented `ip JSON:` error", () => {
    fc.assert(
      fc.property(mutatedWhole(ipJson), (text) => {
        let links;
        try {
          links = parseIpJson(text);
        } catch (err) {
          expect(err).toBeInstanceOf(Error);
          expect((err as Error).message).toMatch(/^ip JSON: /);
          return;
        }
        expect(violations(links)).toEqual([]);
        for (const l of links) expect(l.mtu === undefined || (Number.isInteger(l.mtu) && l.mtu >= 0 && l.mtu <= 2 ** 32 - 1)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("any JSON array is read without throwing: mtu is a u32 or absent, devices unique and non-empty", () => {
    const hostileNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(1e308, 2 ** 64 + 1, -1, 2 ** 32, 2 ** 32 - 1, 0));
    const entry = fc.oneof(
      fc.record(
        {
          ifname: fc.oneof(fc.string({ maxLength: 12 }), fc.anything()),
          mtu: fc.oneof(hostileNumber, fc.anything()),
          link_type: fc.anything(),
          operstate: fc.anything(),
          linkinfo: fc.oneof(fc.record({ info_kind: fc.anything() }), fc.anything()),
        },
        { requiredKeys: [] },
      ),
      fc.anything(),
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 8 }), (arr) => {
        const links = parseIpJson(JSON.stringify(arr));
        expect(new Set(links.map((l) => l.device)).size).toBe(links.length);
        for (const l of links) {
          expect(l.device.length).toBeGreaterThan(0);
          expect(l.mtu === undefined || (Number.isInteger(l.mtu) && l.mtu >= 0 && l.mtu <= 2 ** 32 - 1)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: mtu 2^64+1 and 1e309 (Infinity after JSON.parse) are absent", () => {
    expect(parseIpJson('[{"ifname":"ib0","mtu":18446744073709551617},{"ifname":"ib1","mtu":1e309},{"ifname":"ib2","mtu":4092}]').map((l) => l.mtu)).toEqual([
      undefined,
      undefined,
      4092,
    ]);
  });

  it("a 10 MB interface name is read, not thrown on", () => {
    const links = parseIpJson(JSON.stringify([{ ifname: hugeLine("x"), mtu: 1500 }]));
    expect(links[0]?.mtu).toBe(1500);
  });
});

describe("fuzz: ip link text parser", () => {
  it("never throws; mtu is a u32 or absent; every link came from a header line", () => {
    fc.assert(
      fc.property(fc.oneof(mutatedWhole(ipText), mutatedText(linesOf(ipText))), (text) => {
        const r = parseIpText(text);
        expect(violations(r)).toEqual([]);
        expect(r.links.length).toBeLessThanOrEqual(r.headers);
        expect(new Set(r.links.map((l) => l.device)).size).toBe(r.links.length);
        for (const l of r.links) expect(l.mtu === undefined || (l.mtu >= 0 && l.mtu <= 2 ** 32 - 1)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("CRLF line ends give the same links as LF", () => {
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...ipText), mutatedText(linesOf(ipText))).map(withoutCr), (text) => {
        expect(parseIpText(text.replaceAll("\n", "\r\n"))).toEqual(parseIpText(text));
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: `mtu 999…9` (400 digits) is absent, not Infinity (fast-check counter-example)", () => {
    expect(parseIpText(`2: ib0: <UP> mtu ${"9".repeat(400)} qdisc mq state UP`).links[0]?.mtu).toBeUndefined();
    expect(parseIpText("2: ib0: <UP> mtu 4294967296 qdisc mq state UP").links[0]?.mtu).toBeUndefined();
    expect(parseIpText("2: ib0: <UP> mtu 4092 qdisc mq state UP").links[0]?.mtu).toBe(4092);
  });

  it("a 10 MB header line is parsed in linear time", () => {
    const r = parseIpText(`2: ib0: <UP> mtu 4092 ${hugeLine("qdisc mq ")}\n    link/infiniband 00:00\n`);
    expect(r.links[0]).toMatchObject({ device: "ib0", mtu: 4092, linkType: "infiniband" });
  });
});
