import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compilePaths, compileSegment, expandBraces, globPattern, wanted } from "../../../collectors/follow/glob.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

describe("expandBraces", () => {
  it("expands alternatives, nested ones, and leaves a brace without comma alone", () => {
    expect(expandBraces("/l/{a,b}/x.{log,txt}")).toEqual(["/l/a/x.log", "/l/a/x.txt", "/l/b/x.log", "/l/b/x.txt"]);
    expect(expandBraces("/l/{a,{b,c}d}")).toEqual(["/l/a", "/l/bd", "/l/cd"]);
    expect(expandBraces("/l/{x}/y")).toEqual(["/l/{x}/y"]);
  });
});

describe("compileSegment", () => {
  it("handles * ? [abc] [!a] and escapes the rest", () => {
    expect(compileSegment("nccl-*.log").test("nccl-h1-42.log")).toBe(true);
    expect(compileSegment("nccl-*.log").test("nccl-h1-42.logx")).toBe(false);
    expect(compileSegment("r?.log").test("r1.log")).toBe(true);
    expect(compileSegment("r?.log").test("r12.log")).toBe(false);
    expect(compileSegment("r[0-3].log").test("r2.log")).toBe(true);
    expect(compileSegment("r[!0-3].log").test("r2.log")).toBe(false);
    expect(compileSegment("a+b(c).log").test("a+b(c).log")).toBe(true);
  });
});

describe("globPattern", () => {
  it("finds the static root and matches below it", () => {
    const p = globPattern("/var/log/nccl/*/nccl-*.log", 4);
    expect(p.root).toBe("/var/log/nccl");
    expect(p.depth).toBe(1);
    expect(p.matchFile(["job1", "nccl-h-1.log"])).toBe(true);
    expect(p.matchFile(["nccl-h-1.log"])).toBe(false);
    expect(p.couldContain(["job1"])).toBe(true);
    expect(p.couldContain(["job1", "deeper"])).toBe(false);
  });

  it("lets ** match zero or more directories up to maxDepth", () => {
    const p = globPattern("/d/**/r*.log", 2);
    expect(p.matchFile(["r0.log"])).toBe(true);
    expect(p.matchFile(["a", "b", "r0.log"])).toBe(true);
    expect(p.matchFile(["a", "b", "c", "r0.log"])).toBe(false);
    expect(p.couldContain(["a", "b"])).toBe(true);
    expect(p.couldContain(["a", "b", "c"])).toBe(false);
  });
});

describe("compilePaths + wanted", () => {
  it("treats an existing directory as every file below it and a plain path as one file", async () => {
    const d = testTempDir();
    mkdirSync(join(d, "logs", "sub"), { recursive: true });
    writeFileSync(join(d, "one.log"), "");
    const pats = await compilePaths([join(d, "logs"), join(d, "one.log")], 1);
    expect(pats.map((p) => p.root)).toEqual([join(d, "logs"), d]);
    expect(wanted(pats, join(d, "logs", "sub", "x"), false)).toBe(true);
    expect(wanted(pats, join(d, "logs", "sub", "deep", "x"), false)).toBe(false);
    expect(wanted(pats, join(d, "one.log"), false)).toBe(true);
    expect(wanted(pats, join(d, "two.log"), false)).toBe(false);
    expect(wanted(pats, join(d, "logs", "sub"), true)).toBe(true);
  });

  it("expands braces into separate roots", async () => {
    const pats = await compilePaths(["/x/{nccl,torch}/*.log"], 4);
    expect(pats.map((p) => p.root)).toEqual(["/x/nccl", "/x/torch"]);
    expect(wanted(pats, "/x/torch/r0.log", false)).toBe(true);
    expect(wanted(pats, "/x/other/r0.log", false)).toBe(false);
  });
});
