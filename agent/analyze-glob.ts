/**
 * A glob that reached `ringwatch analyze` unexpanded (`ringwatch analyze 'logs/*.log'`: quoted, or
 * given by a tool that runs no shell), expanded as a shell would: `*`, `?`, `[...]` (`[!...]`,
 * `[^...]`, ranges) within a name, `**` as any number of folders (none included), `\` before a
 * character for the character itself. As in a shell, a name that starts with a dot is matched only
 * by a pattern that starts with one, and `**` does not enter dot folders.
 *
 * The matcher holds no regular expression: it walks pattern and name once, going back at most to the
 * last `*` (O(pattern x name) at worst, no exponential backtracking). The folder walk is bounded: at
 * most MAX_DEPTH folders below where the pattern starts, at most `maxPaths` matches, each folder
 * (by device and inode, so symbolic links cannot loop) entered once per pattern position.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Whether s holds a glob character (`*`, `?` or `[`) that is not escaped. */
export function hasGlob(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "*" || c === "?" || c === "[") return true;
  }
  return false;
}

/**
 * Where the `[...]` class that starts at pattern[i] ends (the index after `]`), and whether ch is
 * in it; undefined when there is no closing `]` (the `[` is then a plain character).
 */
function matchClass(p: string, i: number, ch: string): { end: number; hit: boolean } | undefined {
  let j = i + 1;
  const negate = p[j] === "!" || p[j] === "^";
  if (negate) j++;
  let hit = false;
  let first = true;
  for (; j < p.length; j++) {
    let c = p[j] ?? "";
    if (c === "]" && !first) return { end: j + 1, hit: hit !== negate };
    first = false;
    if (c === "\\" && j + 1 < p.length) c = p[++j] ?? "";
    if (p[j + 1] === "-" && j + 2 < p.length && p[j + 2] !== "]") {
      let hi = p[j + 2] ?? "";
      j += 2;
      if (hi === "\\" && j + 1 < p.length) hi = p[++j] ?? "";
      if (ch >= c && ch <= hi) hit = true;
    } else if (ch === c) hit = true;
  }
  return undefined;
}

/** Whether name matches one segment of a pattern (no `/` in either). */
export function matchSegment(pattern: string, name: string): boolean {
  if (name.startsWith(".") && !pattern.startsWith(".") && !pattern.startsWith("\\.")) return false;
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === "*") {
      starP = ++p;
      starN = n;
      continue;
    }
    if (p < pattern.length) {
      const ch = name[n] ?? "";
      if (c === "?") {
        p++;
        n++;
        continue;
      }
      if (c === "[") {
        const cls = matchClass(pattern, p, ch);
        if (cls !== undefined) {
          if (cls.hit) {
            p = cls.end;
            n++;
            continue;
          }
        } else if (ch === "[") {
          p++;
          n++;
          continue;
        }
      } else {
        const lit = c === "\\" && p + 1 < pattern.length ? pattern[p + 1] : c;
        if (lit === ch) {
          p += c === "\\" && p + 1 < pattern.length ? 2 : 1;
          n++;
          continue;
        }
      }
    }
    // No match here: let the last `*` take one more character, if there was one.
    if (starP < 0) return false;
    p = starP;
    n = ++starN;
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** A pattern segment without glob characters, unescaped. */
function literal(seg: string): string {
  return seg.replace(/\\(.)/g, "$1");
}

/** Folders below a pattern's fixed start that `**` may reach. */
export const MAX_GLOB_DEPTH = 16;

export interface GlobResult {
  /** The paths that match, sorted as they were found (each folder's names sorted). */
  paths: string[];
  /** Why matching stopped early (a bound was hit), if it did. */
  stopped?: string;
}

/** The paths that match pattern, at most maxPaths of them. */
export function expandGlob(pattern: string, maxPaths: number): GlobResult {
  const absolute = pattern.startsWith("/");
  const segs = pattern.split("/").filter((s) => s !== "");
  let base = absolute ? "/" : "";
  let k = 0;
  while (k < segs.length - 1 && !hasGlob(segs[k] ?? "")) base = base === "" ? literal(segs[k++] ?? "") : join(base, literal(segs[k++] ?? ""));
  const rest = segs.slice(k);
  const paths: string[] = [];
  const seen = new Set<string>();
  const entered = new Set<string>();
  let stopped: string | undefined;

  const dirKey = (dir: string): string | undefined => {
    try {
      const st = statSync(dir === "" ? "." : dir);
      return st.isDirectory() ? `${st.dev}:${st.ino}` : undefined;
    } catch {
      return undefined;
    }
  };
  const names = (dir: string): string[] => {
    try {
      return readdirSync(dir === "" ? "." : dir).sort();
    } catch {
      return [];
    }
  };
  const add = (path: string): void => {
    if (seen.has(path)) return;
    if (paths.length >= maxPaths) {
      stopped ??= `more than ${maxPaths} paths match ${pattern}: the rest is not read`;
      return;
    }
    seen.add(path);
    paths.push(path);
  };
  const walk = (dir: string, i: number, depth: number): void => {
    if (stopped !== undefined) return;
    const key = dirKey(dir);
    if (key === undefined || entered.has(`${key}/${i}`)) return;
    entered.add(`${key}/${i}`);
    const seg = rest[i];
    if (seg === undefined) return;
    const last = i === rest.length - 1;
    if (seg === "**") {
      if (last)
        add(dir === "" ? "." : dir); // `dir/**`: the folder, read whole below
      else walk(dir, i + 1, depth); // no folder at all
      if (depth >= MAX_GLOB_DEPTH) {
        stopped ??= `${pattern}: not followed more than ${MAX_GLOB_DEPTH} folders deep`;
        return;
      }
      for (const name of names(dir)) {
        if (name.startsWith(".")) continue;
        const sub = dir === "" ? name : join(dir, name);
        if (dirKey(sub) !== undefined && !last) walk(sub, i, depth + 1);
      }
      return;
    }
    if (!hasGlob(seg)) {
      const sub = dir === "" ? literal(seg) : join(dir, literal(seg));
      if (last) {
        try {
          statSync(sub);
          add(sub);
        } catch {
          // no such path: no match
        }
      } else walk(sub, i + 1, depth + 1);
      return;
    }
    for (const name of names(dir)) {
      if (!matchSegment(seg, name)) continue;
      const sub = dir === "" ? name : join(dir, name);
      if (last) add(sub);
      else walk(sub, i + 1, depth + 1);
    }
  };
  if (rest.length === 0) add(base);
  else walk(base, 0, 0);
  return stopped !== undefined ? { paths, stopped } : { paths };
}
