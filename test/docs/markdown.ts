/**
 * What the documentation tests need to read Markdown: the repository's Markdown files, their
 * paragraphs (for "one home per fact"), their links and their headings' anchors (for "no link to
 * nothing"). Plain line-based reading of the subset of GitHub Markdown this project writes.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";

/** Paths (relative to the repository, with `/`) that are not documentation of this project. */
const SKIPPED = /^(node_modules|test\/fixtures|dist|coverage|\.bench|bench\/out)\//;

/** Every tracked `*.md` file of the repository (git ls-files; a directory walk where git is missing). */
export function markdownFiles(root: string): string[] {
  let files: string[];
  try {
    files = execFileSync("git", ["ls-files", "-z", "--cached", "--", "*.md"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
      .split("\0")
      .filter((f) => f.length > 0);
  } catch {
    files = walk(root, "");
  }
  return files.filter((f) => !SKIPPED.test(f) && existsSync(join(root, f))).sort();
}

function walk(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = dir === "" ? e.name : `${dir}/${e.name}`;
    if (e.name === ".git" || SKIPPED.test(`${rel}/`)) continue;
    if (e.isDirectory()) out.push(...walk(root, rel));
    else if (e.isFile() && e.name.endsWith(".md")) out.push(rel);
  }
  return out;
}

export interface Line {
  /** 1-based line number. */
  n: number;
  text: string;
}

const FENCE = /^\s*(`{3,}|~{3,})/;

/** The lines outside fenced code blocks. */
export function proseLines(text: string): Line[] {
  const out: Line[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((raw, i) => {
    const m = FENCE.exec(raw);
    if (fence !== undefined) {
      if (m?.[1] !== undefined && m[1][0] === fence[0] && m[1].length >= fence.length && raw.trim() === m[1]) fence = undefined;
      return;
    }
    if (m?.[1] !== undefined) {
      fence = m[1];
      return;
    }
    out.push({ n: i + 1, text: raw });
  });
  return out;
}

export interface Unit {
  /** 1-based line where the unit starts. */
  line: number;
  /** The unit as written. */
  text: string;
  /** The unit as compared: links as their text, no emphasis or backticks, whitespace collapsed. */
  key: string;
}

const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+/;
const TABLE_ROW = /^\s*\|/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/** What two copies of one paragraph have in common, whatever their links, emphasis and line breaks. */
export function normalise(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`+/g, "")
    .replace(/\*+/g, "")
    .replace(/(^|[^\p{L}\p{N}])_+|_+(?=[^\p{L}\p{N}]|$)/gu, "$1")
    .replace(/^\s*([-+]|\d+[.)])\s+/, "")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The units a Markdown text is made of, outside fenced code blocks: paragraphs (blocks of
 * consecutive non-blank lines), each list item (with its continuation lines), each table row
 * (header and separator rows left out) and each heading.
 */
export function units(text: string): Unit[] {
  const out: Unit[] = [];
  let current: { line: number; lines: string[] } | undefined;
  const flush = (): void => {
    if (current) out.push({ line: current.line, text: current.lines.join("\n"), key: normalise(current.lines.join(" ")) });
    current = undefined;
  };
  const lines = proseLines(text);
  lines.forEach((l, i) => {
    const previous = lines[i - 1];
    const next = lines[i + 1];
    const contiguous = (other: Line | undefined, step: number): other is Line => other !== undefined && other.n === l.n + step;
    if (l.text.trim() === "") return flush();
    if (TABLE_ROW.test(l.text)) {
      flush();
      const isSeparator = TABLE_SEPARATOR.test(l.text);
      const isHeader = contiguous(next, 1) && TABLE_SEPARATOR.test(next.text);
      if (!isSeparator && !isHeader)
        out.push({ line: l.n, text: l.text, key: normalise(l.text.replace(/^\s*\||\|\s*$/g, "").replace(/\s*(?<!\\)\|\s*/g, " | ")) });
      return;
    }
    if (/^\s{0,3}#{1,6}\s/.test(l.text)) {
      flush();
      out.push({ line: l.n, text: l.text, key: normalise(l.text.replace(/^\s*#+\s*/, "")) });
      return;
    }
    // A line after a fence or a skipped line starts a new unit, as does a list item.
    if (LIST_ITEM.test(l.text) || !contiguous(previous, -1)) flush();
    if (current) current.lines.push(l.text);
    else current = { line: l.n, lines: [l.text] };
  });
  flush();
  return out;
}

export interface Duplicate {
  key: string;
  /** `file:line` of each place it stands, in file order. */
  places: string[];
}

/**
 * Units of at least `minLength` characters (compared as normalised) that stand in more than one
 * of the documents (a repeat within one document is that document's business).
 */
export function duplicates(docs: ReadonlyMap<string, string>, minLength = 60): Duplicate[] {
  const seen = new Map<string, Map<string, number>>();
  for (const [file, text] of docs) {
    for (const u of units(text)) {
      if (u.key.length < minLength) continue;
      const where = seen.get(u.key) ?? new Map<string, number>();
      if (!where.has(file)) where.set(file, u.line);
      seen.set(u.key, where);
    }
  }
  return [...seen].filter(([, where]) => where.size > 1).map(([key, where]) => ({ key, places: [...where].map(([file, line]) => `${file}:${line}`) }));
}

/**
 * A heading's anchor as GitHub makes it: the heading's text without its markup, lower-cased,
 * punctuation dropped (letters, digits, `_`, `-` and spaces stay), each space a `-`.
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown text's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
export function anchors(text: string): Set<string> {
  const out = new Set<string>();
  const counts = new Map<string, number>();
  for (const l of proseLines(text)) {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(l.text);
    if (m?.[1] === undefined) continue;
    const base = slug(m[1]);
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  line: number;
  target: string;
}

/** Every `[text](target)` and `![alt](target)` outside fenced code blocks and inline code. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const l of proseLines(text)) {
    const prose = l.text.replace(/(`+)[\s\S]*?\1/g, (code) => " ".repeat(code.length));
    for (const m of prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^\s)]*)(?:\s+"[^"]*")?\s*\)/g)) {
      const target = (m[1] ?? "").replace(/^<|>$/g, "");
      out.push({ line: l.n, target });
    }
  }
  return out;
}

/** Reads a file of the repository by its relative path; undefined when it is not there. */
export type ReadFile = (path: string) => string | undefined;

/** Whether a relative path (with `/`) is a file or directory of the repository. */
export type Exists = (path: string) => boolean;

/**
 * The relative links of `file` that point to nothing: a path that does not exist, or an `#anchor`
 * that is no heading of the Markdown file it points into. External links (a scheme such as
 * `https:` or `mailto:`) are not followed.
 */
export function brokenLinks(file: string, text: string, exists: Exists, read: ReadFile): string[] {
  const broken: string[] = [];
  for (const { line, target } of links(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf("#");
    const path = hash < 0 ? target : target.slice(0, hash);
    const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const resolved =
      path === ""
        ? file
        : normalize(join(dirname(file), decodeURIComponent(path)))
            .split(sep)
            .join("/")
            .replace(/\/$/, "");
    const where = `${file}:${line}: (${target})`;
    if (resolved.startsWith("../") || resolved === "..") {
      broken.push(`${where} leaves the repository`);
      continue;
    }
    if (!exists(resolved)) {
      broken.push(`${where} ${resolved} does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === "" || !resolved.endsWith(".md")) continue;
    const doc = path === "" ? text : read(resolved);
    if (doc === undefined || !anchors(doc).has(anchor)) broken.push(`${where} ${resolved} has no heading #${anchor}`);
  }
  return broken;
}

/** Exists and ReadFile on a directory. */
export function onDisk(root: string): { exists: Exists; read: ReadFile } {
  return {
    exists: (p) => p === "." || p === "" || existsSync(join(root, p)),
    read: (p) => (existsSync(join(root, p)) ? readFileSync(join(root, p), "utf8") : undefined),
  };
}

/** The ringwatch_* names that a Markdown text's table rows define: those in backticks in a row's first cell. */
export function definedMetrics(text: string): string[] {
  const out: string[] = [];
  for (const { text: line } of proseLines(text)) {
    if (!line.trimStart().startsWith("|")) continue;
    const first =
      line
        .trim()
        .slice(1)
        .split(/(?<!\\)\|/)[0] ?? "";
    for (const m of first.matchAll(/`(ringwatch_[a-z0-9_]+)/g)) if (m[1] !== undefined) out.push(m[1]);
  }
  return out;
}
