/** What `ringwatch analyze` lists in a bundle: bounds, links, names that are no log. */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Lister, type Listed } from "../../agent/analyze-input.js";
import { notALogByName } from "../../agent/analyze-sniff.js";
import { tempDir } from "../helpers/temp-dir.js";

function show(l: Listed): string {
  if ("found" in l) return `found ${l.found.path}${l.found.named ? " (named)" : ""} ${l.found.size}`;
  if ("stopped" in l) return `stopped: ${l.stopped}`;
  return "skipped" in l ? `skipped ${l.path}: ${l.skipped}` : `error ${l.path}: ${l.error}`;
}

describe("analyze's listing", () => {
  it("lists subfolders sorted, once per folder and per file, and stops at the file bound with one line", () => {
    const d = tempDir();
    for (const sub of ["a", "b", ".git", "__MACOSX"]) mkdirSync(join(d, sub));
    for (const f of ["a/1.log", "a/2.log", "b/3.log", "b/4.log", "c.log", ".git/HEAD", "__MACOSX/._1.log", "README", "notes.md"])
      writeFileSync(join(d, f), "line\n");
    symlinkSync("1.log", join(d, "a", "same.log"));
    symlinkSync("../a", join(d, "b", "a-again"));
    const lister = new Lister(4, 16);
    expect([...lister.list(d)].map(show)).toEqual([
      `skipped ${d}/README: documentation, not a log`,
      `found ${d}/a/1.log 5`,
      `found ${d}/a/2.log 5`,
      `skipped ${d}/a/same.log: the same file as ${d}/a/1.log`,
      `found ${d}/b/3.log 5`,
      `found ${d}/b/4.log 5`,
      `skipped ${d}/b/a-again: the folder ${d}/a, read already (a symbolic link to it)`,
      `stopped: stopped at 4 files: ${d}/c.log and what follows is not read (name fewer folders)`,
    ]);
    expect([...lister.list(join(d, "a", "1.log"))].map(show)).toEqual([]); // full: nothing more, said once
  });

  it("a file named is read whatever its name; folders deeper than the bound are skipped with a line", () => {
    const d = tempDir();
    mkdirSync(join(d, "x", "y", "z", "w"), { recursive: true });
    writeFileSync(join(d, "x", "y", "z", "w", "deep.log"), "");
    writeFileSync(join(d, "x", "y", "z", "two-below.log"), "");
    writeFileSync(join(d, "x", "top.log"), "ab\n");
    writeFileSync(join(d, "SOURCES.md"), "# s\n");
    const lister = new Lister(100, 2);
    expect([...lister.list(join(d, "SOURCES.md")), ...lister.list(join(d, "x"))].map(show)).toEqual([
      `found ${d}/SOURCES.md (named) 4`,
      `found ${d}/x/top.log 3`,
      `found ${d}/x/y/z/two-below.log 0`,
      `skipped ${d}/x/y/z/w: more than 2 folders below ${d}/x`,
    ]);
    expect([...new Lister().list(join(d, "none-*.log"))].map(show)).toEqual([`error ${d}/none-*.log: no file matches this pattern`]);
  });

  it("takes documentation for no log by its name", () => {
    expect(
      ["SOURCES.md", "README", "readme.txt", "LICENSE", "notes.markdown", "guide.rst", "rank0.log", "md", "nccl.txt"].map((n) => notALogByName(n) ?? ""),
    ).toEqual([
      "Markdown, not a log",
      "documentation, not a log",
      "documentation, not a log",
      "documentation, not a log",
      "Markdown, not a log",
      "documentation, not a log",
      "",
      "",
      "",
    ]);
  });
});
