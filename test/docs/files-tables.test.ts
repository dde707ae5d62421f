/**
 * Every collector README's Files table is complete: each source file of the folder (and of its
 * sub-folders, but for one with a README of its own) is named in the README's "## Files" section,
 * as a path relative to the README, and every file named there exists. A newcomer finds every
 * file's job in one place, and a file added or moved without its row fails here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

/** Folders under collectors/ that have a README.md (a collector, or a part with its own page). */
function readmeFolders(dir = join(root, "collectors")): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isDirectory()) continue;
    if (existsSync(join(path, "README.md"))) out.push(path);
    out.push(...readmeFolders(path));
  }
  return out;
}

/** The .ts files of a README's folder, relative to it, leaving out sub-folders with their own README. */
function sourceFiles(folder: string, dir = folder): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!existsSync(join(path, "README.md"))) out.push(...sourceFiles(folder, path));
    } else if (name.endsWith(".ts")) out.push(relative(folder, path));
  }
  return out;
}

/** The "## Files" section of a README, up to the next heading of level 2. */
function filesSection(readme: string): string {
  const start = readme.indexOf("\n## Files\n");
  if (start < 0) return "";
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** Paths in backticks that end in .ts. */
function named(section: string): Set<string> {
  return new Set([...section.matchAll(/`([\w./-]+\.ts)`/g)].map((m) => m[1] ?? ""));
}

/** Paths named from the repository's root rather than from the README's folder. */
const REPO_PATH = /^(agent|collectors|test|bench|scripts)\//;

const folders = readmeFolders();

describe("collector READMEs: Files tables", () => {
  it("finds every collector's README", () => {
    for (const c of ["gpu", "infiniband", "gdr", "mtu", "nccl", "job", "kmsg"]) expect(folders).toContain(join(root, "collectors", c));
  });

  it.each(folders.map((f) => [relative(root, f)]))("%s/README.md names every file of the folder, and only files that exist", (folder) => {
    const dir = join(root, folder);
    const section = filesSection(readFileSync(join(dir, "README.md"), "utf8"));
    expect(section, "a ## Files section").not.toBe("");
    const mentioned = named(section);
    expect(
      sourceFiles(dir).filter((f) => !mentioned.has(f)),
      "files without a row",
    ).toEqual([]);
    // A path from the repository's root (a test, the agent's side) must exist there; any other, in the folder.
    const exists = (f: string): boolean => (REPO_PATH.test(f) ? existsSync(join(root, f)) : existsSync(join(dir, f)));
    expect(
      [...mentioned].filter((f) => !exists(f)),
      "rows for files that do not exist",
    ).toEqual([]);
  });
});
