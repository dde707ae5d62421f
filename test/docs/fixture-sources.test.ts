/**
 * test/fixtures/ holds real captures (and a few synthetic files that say so); every folder's
 * SOURCES*.md lists its files with where each came from. This keeps those lists current and
 * self-contained: every fixture file is listed in the SOURCES file of its folder (or the nearest
 * folder above it that has one), every listed file exists, and no SOURCES file points outside the
 * repository (a relative path leaving it, or a path on some machine: name the public source).
 * Each check is also shown failing on in-memory documents.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { fixturesDir } from "../helpers/fixtures.js";

const repoRoot = resolve(fixturesDir, "../..");

/** Absolute paths a capture may describe (the files a tool reads); any other is a machine's own file. */
const SYSTEM_DIRS = new Set(["proc", "sys", "dev", "usr", "etc", "var", "opt", "lib", "lib64", "bin", "sbin", "run", "boot"]);

/** The files a SOURCES text lists: the first cell of each table row (backticks stripped), header rows left out. */
export function listedFiles(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^\|\s*([^|]+?)\s*\|/.exec(line);
    if (!m?.[1] || /^-+$/.test(m[1]) || /^(file|dir)$/i.test(m[1])) continue;
    out.push(m[1].replace(/^`|`$/g, ""));
  }
  return out;
}

/** Paths in a SOURCES text (at folder `dir` of the repository at `root`) that point outside the repository. */
export function pathsOutside(text: string, dir: string, root: string): string[] {
  const out: string[] = [];
  const inside = (p: string): boolean => {
    const r = relative(root, resolve(dir, p));
    return r !== ".." && !r.startsWith(`..${sep}`) && !isAbsolute(r);
  };
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue; // a URL, or a heading here
    if (isAbsolute(target) || !inside(target.split("#")[0] ?? "")) out.push(target);
  }
  for (const m of text.matchAll(/(?<![\w:/.])((?:\.\.?\/)+[\w./*-]*)/g)) {
    if (!inside(m[1] ?? "")) out.push(m[1] ?? "");
  }
  for (const m of text.matchAll(/(?<![\w:/.~-])\/([\w.-]+)(?:\/[\w.*-]+)+/g)) {
    if (!SYSTEM_DIRS.has(m[1] ?? "")) out.push(m[0]);
  }
  return [...new Set(out)];
}

/** Every file below dir, relative to fixturesDir. */
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? walk(p) : [relative(fixturesDir, p)];
  });
}

const isSources = (p: string): boolean => /^SOURCES.*\.md$/.test(p.split(sep).at(-1) ?? "");
const all = walk(fixturesDir);
const sourcesFiles = all.filter(isSources);

/** The folder whose SOURCES file lists rel: its own, or the nearest above it that has one. */
function sourcesFolderOf(rel: string): string | undefined {
  for (let d = dirname(rel); ; d = dirname(d)) {
    if (sourcesFiles.some((s) => dirname(s) === d)) return d;
    if (d === "." || d === dirname(d)) return undefined;
  }
}

describe("test/fixtures SOURCES files", () => {
  it("there are SOURCES files, and every fixture file is under one", () => {
    expect(sourcesFiles.length).toBeGreaterThanOrEqual(3);
    expect(all.filter((f) => !isSources(f) && sourcesFolderOf(f) === undefined)).toEqual([]);
  });

  for (const folder of [...new Set(sourcesFiles.map((s) => dirname(s)))]) {
    const texts = sourcesFiles.filter((s) => dirname(s) === folder).map((s) => readFileSync(join(fixturesDir, s), "utf8"));
    const files = all
      .filter((f) => !isSources(f) && sourcesFolderOf(f) === folder)
      .map((f) => relative(folder, f))
      .sort();
    const listed = texts.flatMap(listedFiles);

    it(`${folder}/: lists exactly the files present (${files.length})`, () => {
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((f) => !listed.includes(f))).toEqual([]); // present, not listed
      expect(listed.filter((f) => !files.includes(f))).toEqual([]); // listed, not present
      expect(listed.length).toBe(new Set(listed).size); // none listed twice
    });

    it(`${folder}/: names no path outside the repository`, () => {
      for (const t of texts) expect(pathsOutside(t, join(fixturesDir, folder), repoRoot)).toEqual([]);
    });

    it(`${folder}/: counts (a "Total: N files" line) match the list`, () => {
      for (const t of texts) {
        const total = /Total: (\d+) files/.exec(t);
        if (total) expect(Number(total[1])).toBe(listedFiles(t).length);
      }
    });
  }

  it("(the checks fail on documents that break them)", () => {
    const doc = "| file | source |\n|---|---|\n| `a.log` | [x/y #1](https://github.com/x/y/issues/1) |\n| b.log | x |\n";
    expect(listedFiles(doc)).toEqual(["a.log", "b.log"]);
    const dir = join(fixturesDir, "nccl");
    expect(pathsOutside(doc, dir, repoRoot)).toEqual([]);
    expect(pathsOutside("see ../../../../shared/fixtures/tools/SOURCES.md", dir, repoRoot)).toEqual(["../../../../shared/fixtures/tools/SOURCES.md"]);
    expect(pathsOutside("see ../tools/lsmod/ for the captures", dir, repoRoot)).toEqual([]);
    expect(pathsOutside('see /work/shared/fixtures/tools/SOURCES.md "Gaps"', dir, repoRoot)).toEqual(["/work/shared/fixtures/tools/SOURCES.md"]);
    expect(pathsOutside("no real /proc/modules capture; /sys/class/infiniband trees", dir, repoRoot)).toEqual([]);
    expect(pathsOutside("[their list](../../../../elsewhere/list.md) and [ours](../tools/SOURCES.md)", dir, repoRoot)).toEqual([
      "../../../../elsewhere/list.md",
    ]);
  });
});
