/**
 * Configured paths -> patterns. chokidar 4 has no globs: each pattern names a static root
 * directory to watch, and the follower matches what chokidar reports below it. Supports `*`, `?`,
 * `[abc]` / `[!a-z]`, `**` (any number of directories, up to maxDepth) and `{a,b}` (expanded
 * first, so `/logs/{nccl,torch}/*.log` watches two roots). Cold path: regexes are fine here.
 */
import { stat } from "node:fs/promises";
import { basename, dirname, resolve } from "node:path";
import { jobFsGate } from "../job-fs-gate.js";

/** One path segment: a literal name, a compiled wildcard, or `**` (null). */
type Seg = string | RegExp | null;

export interface PathPattern {
  /** Directory to watch (absolute). */
  readonly root: string;
  /** Directory levels below root that must be watched (chokidar's `depth`). */
  readonly depth: number;
  /** Whether a file at root/rel... is wanted. */
  matchFile(rel: readonly string[]): boolean;
  /** Whether a directory at root/relDir... may hold wanted files (else it is not descended). */
  couldContain(relDir: readonly string[]): boolean;
}

const MAX_EXPANSIONS = 256;

/** `{a,b}` alternatives expanded (nested braces too); a brace without a comma stays literal. */
export function expandBraces(p: string): string[] {
  const out: string[] = [];
  expandInto(p, out);
  return out;
}

function expandInto(p: string, out: string[]): void {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") {
      i++;
      continue;
    }
    if (p[i] !== "{") continue;
    const parts: string[] = [];
    let depth = 0;
    let last = i + 1;
    for (let j = i; j < p.length; j++) {
      const c = p[j];
      if (c === "\\") {
        j++;
        continue;
      }
      if (c === "{") depth++;
      else if (c === "," && depth === 1) {
        parts.push(p.slice(last, j));
        last = j + 1;
      } else if (c === "}" && --depth === 0) {
        if (parts.length === 0) break; // `{x}`: literal
        parts.push(p.slice(last, j));
        for (const alt of parts) {
          if (out.length >= MAX_EXPANSIONS) return;
          expandInto(p.slice(0, i) + alt + p.slice(j + 1), out);
        }
        return;
      }
    }
  }
  if (out.length < MAX_EXPANSIONS) out.push(p);
}

export function hasMagic(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/** One glob segment to an anchored RegExp (`*` and `?` never cross `/`). */
export function compileSegment(seg: string): RegExp {
  let re = "^";
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i] as string;
    if (c === "*") {
      while (seg[i + 1] === "*") i++;
      re += "[^/]*";
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const close = seg.indexOf("]", i + 2);
      if (close === -1) {
        re += "\\[";
        continue;
      }
      let body = seg.slice(i + 1, close).replace(/\\/g, "\\\\");
      if (body[0] === "!" || body[0] === "^") body = "^" + body.slice(1);
      re += "[" + body + "]";
      i = close;
    } else if (c === "\\" && i + 1 < seg.length) {
      re += escapeRe(seg[++i] as string);
    } else {
      re += escapeRe(c);
    }
  }
  return new RegExp(re + "$");
}

function escapeRe(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? "\\" + c : c;
}

function segMatch(s: Seg, name: string): boolean {
  return typeof s === "string" ? s === name : s !== null && s.test(name);
}

function matchSegs(p: readonly Seg[], pi: number, r: readonly string[], ri: number): boolean {
  for (; pi < p.length; pi++, ri++) {
    const s = p[pi] as Seg;
    if (s === null) {
      if (pi === p.length - 1) return ri < r.length;
      for (let k = ri; k < r.length; k++) if (matchSegs(p, pi + 1, r, k)) return true;
      return false;
    }
    if (ri >= r.length || !segMatch(s, r[ri] as string)) return false;
  }
  return ri === r.length;
}

function canPrefix(p: readonly Seg[], r: readonly string[]): boolean {
  let pi = 0;
  for (let ri = 0; ri < r.length; ri++, pi++) {
    if (pi >= p.length) return false;
    const s = p[pi] as Seg;
    if (s === null) return true;
    if (!segMatch(s, r[ri] as string)) return false;
  }
  return pi < p.length;
}

/** A glob (already brace-expanded and absolute). */
export function globPattern(abs: string, maxDepth: number): PathPattern {
  const parts = abs.split("/");
  let first = parts.findIndex(hasMagic);
  if (first === -1) first = parts.length - 1;
  const root = parts.slice(0, first).join("/") || "/";
  const segs: Seg[] = parts.slice(first).map((s) => (s === "**" ? null : hasMagic(s) ? compileSegment(s) : s));
  const star = segs.includes(null);
  const depth = star ? maxDepth : segs.length - 1;
  return {
    root,
    depth,
    matchFile: (rel) => rel.length - 1 <= depth && matchSegs(segs, 0, rel, 0),
    couldContain: (rel) => rel.length <= depth && canPrefix(segs, rel),
  };
}

/** A directory: every file below it, up to maxDepth directory levels. */
export function dirPattern(root: string, maxDepth: number): PathPattern {
  return {
    root,
    depth: maxDepth,
    matchFile: (rel) => rel.length >= 1 && rel.length - 1 <= maxDepth,
    couldContain: (rel) => rel.length <= maxDepth,
  };
}

/** A literal path that is not (yet) a directory: that file, or the tree below it if it becomes one. */
export function filePattern(abs: string, maxDepth: number): PathPattern {
  const name = basename(abs);
  return {
    root: dirname(abs),
    depth: maxDepth + 1,
    matchFile: (rel) => rel[0] === name && rel.length - 2 <= maxDepth,
    couldContain: (rel) => rel[0] === name && rel.length - 1 <= maxDepth,
  };
}

/** Compiles the configured paths (relative ones against the cwd). */
export async function compilePaths(paths: readonly string[], maxDepth: number): Promise<PathPattern[]> {
  const out: PathPattern[] = [];
  for (const p of paths) {
    for (const one of expandBraces(p)) {
      const abs = resolve(one);
      if (abs.split("/").some(hasMagic)) {
        out.push(globPattern(abs, maxDepth));
        continue;
      }
      const isDir = await jobFsGate
        .run(abs, () => stat(abs))
        .then(
          (s) => s.isDirectory(),
          () => false,
        );
      out.push(isDir ? dirPattern(abs, maxDepth) : filePattern(abs, maxDepth));
    }
  }
  return out;
}

/** Path segments of abs below root, or undefined when abs is not root or below it. */
export function relSegments(root: string, abs: string): string[] | undefined {
  if (abs === root) return [];
  const prefix = root === "/" ? "/" : root + "/";
  if (!abs.startsWith(prefix)) return undefined;
  return abs.slice(prefix.length).split("/");
}

/** Whether any pattern wants abs: as a file (isDir false), a directory (true), or either (undefined). */
export function wanted(patterns: readonly PathPattern[], abs: string, isDir: boolean | undefined): boolean {
  for (const p of patterns) {
    const rel = relSegments(p.root, abs);
    if (rel === undefined) continue;
    if (rel.length === 0) return isDir !== false;
    if (isDir !== false && p.couldContain(rel)) return true;
    if (isDir !== true && p.matchFile(rel)) return true;
  }
  return false;
}
