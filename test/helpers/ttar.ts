/**
 * Turns text fixtures into real directory trees, so tests can point a reader at a real sysfs tree.
 *
 * expandTtar: the ttar format (github.com/ideaship/ttar, used by node_exporter and procfs):
 *   `Directory: <path>` + `Mode: <octal>`; `Path: <path>` + `Lines: <n>` + n content lines +
 *   `Mode: <octal>`; `Path: <path>` + `SymlinkTo: <target>`; `# ...` comment lines (the
 *   `# ttar - - -` separators). In content lines an `EOF` not preceded by a backslash marks a last
 *   line without newline, `NULLBYTE` is a NUL byte, and `\EOF` / `\NULLBYTE` are the literal words.
 *
 * expandPathDump: a flattened tree, one `<relative path>:<file content>` line per file (content
 *   up to the end of the line, written without a trailing newline), as in the gpud sysfs capture.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, normalize } from "node:path";

/** A new empty temporary directory. */
export function makeTempDir(prefix = "ringwatch-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes a tree made by the functions here. */
export function removeTree(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** `dest/rel`, refusing absolute paths and `..` (fixtures must stay inside dest). */
function inside(dest: string, rel: string): string {
  const n = normalize(rel);
  if (isAbsolute(n) || n === ".." || n.startsWith("../")) throw new Error(`path escapes the tree: ${rel}`);
  return join(dest, n);
}

/** Decodes one ttar content line; `last` tells whether it ended with the no-newline marker. */
function decodeLine(line: string): { text: string; noNewline: boolean } {
  const noNewline = /[^\\]EOF/.test(line);
  const text = line
    .replace(/^NULLBYTE/, "\u0000")
    .replace(/([^\\])NULLBYTE/g, "$1\u0000")
    .replace(/([^\\])NULLBYTE/g, "$1\u0000")
    .replace(/\\NULLBYTE/g, "NULLBYTE")
    .replace(/([^\\])EOF/g, "$1")
    .replace(/\\EOF/g, "EOF");
  return { text, noNewline };
}

/** Expands ttar text into `dest` (created if needed); returns `dest`. */
export function expandTtar(text: string, dest: string = makeTempDir()): string {
  mkdirSync(dest, { recursive: true });
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let path: string | undefined;
  let remaining = 0;
  let content = "";

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (remaining > 0) {
      const { text: decoded, noNewline } = decodeLine(line);
      content += noNewline ? decoded : `${decoded}\n`;
      if (--remaining === 0 && path !== undefined) writeFileSync(path, content);
      continue;
    }
    const m = /^(Path|Lines|Mode|Directory|SymlinkTo): (.*)$/.exec(line);
    if (!m) {
      if (line.startsWith("#")) continue;
      throw new Error(`ttar: unknown line ${i + 1}: ${JSON.stringify(line)}`);
    }
    const [, key, value = ""] = m;
    switch (key) {
      case "Path":
        path = inside(dest, value);
        mkdirSync(dirname(path), { recursive: true });
        break;
      case "Directory":
        path = inside(dest, value);
        mkdirSync(path, { recursive: true });
        break;
      case "Lines":
        if (path === undefined) throw new Error(`ttar: Lines before Path on line ${i + 1}`);
        remaining = Number(value);
        content = "";
        if (!Number.isInteger(remaining) || remaining < 0) throw new Error(`ttar: bad Lines on line ${i + 1}`);
        writeFileSync(path, "");
        break;
      case "Mode":
        if (path === undefined) throw new Error(`ttar: Mode before Path on line ${i + 1}`);
        chmodSync(path, Number.parseInt(value, 8));
        break;
      case "SymlinkTo":
        if (path === undefined) throw new Error(`ttar: SymlinkTo before Path on line ${i + 1}`);
        symlinkSync(value, path);
        break;
    }
  }
  if (remaining > 0) throw new Error(`ttar: archive ends ${remaining} content line(s) early`);
  return dest;
}

/** Expands `<relative path>:<content>` lines into files under `dest/under`; returns `dest`. */
export function expandPathDump(text: string, dest: string = makeTempDir(), under = ""): string {
  for (const [i, line] of text.split("\n").entries()) {
    if (line.length === 0) continue;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new Error(`path dump: no "path:" on line ${i + 1}: ${JSON.stringify(line)}`);
    const file = inside(join(dest, under), line.slice(0, colon));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, line.slice(colon + 1));
  }
  return dest;
}
