/**
 * Runs the build as another user. A test running as root makes a mode-000 file mean something by
 * running the reader as nobody (65534); but a checkout under a 0700 directory (/root, a home
 * directory) is out of nobody's reach, and Node then cannot even load dist/agent/main.js. So the
 * build (dist/, package.json) and the production dependencies are copied into a fresh directory
 * that every user can read, and the agent or a built module runs from there.
 *
 * Dependencies are found the way Node resolves them: for each name in a package's dependencies,
 * optionalDependencies and peerDependencies, the package's own node_modules, then each parent's,
 * up to the checkout (an optional or peer dependency that is not installed is left out).
 */
import { chmodSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { repoRoot } from "./agent-process.js";
import { runProcess, type ProcessResult } from "./run-process.js";

/** nobody/nogroup: who runs the reader when this process is root. */
export const NOBODY = { uid: 65534, gid: 65534 };
export const isRoot = process.getuid?.() === 0;
/** The user a mode-000 file denies: nobody when this process is root (root reads everything), else this user. */
export const deniedUser: { uid: number; gid: number } | undefined = isRoot ? NOBODY : undefined;

export interface StagedBuild {
  /** The copy's root: dist/, package.json and node_modules/ (production dependencies only). */
  root: string;
  /** dist/agent/main.js of the copy. */
  agentMain: string;
  /** Directories of the copied packages, relative to root (node_modules/...). */
  packages: string[];
  /** file: URL of a built module of the copy, e.g. module("collectors/follow/follower.js"). */
  module(rel: string): string;
  remove(): void;
}

interface PackageJson {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function readPackage(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
}

/** Where Node finds `name` from a package at `from` (a path inside the checkout), or undefined. */
function findPackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith(`${sep}node_modules`)) {
      const p = join(dir, "node_modules", name);
      if (existsSync(join(p, "package.json"))) return p;
    }
    if (dir === repoRoot || !dir.startsWith(repoRoot + sep)) return undefined;
  }
}

/** Every production dependency of the checkout, transitively: directories relative to repoRoot. */
export function productionPackages(): string[] {
  const found = new Set<string>();
  const todo: [string, boolean][] = [[repoRoot, true]];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    const [dir, top] = next;
    const pkg = readPackage(dir);
    const required = Object.keys(pkg.dependencies ?? {});
    const optional = [...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
    for (const [names, mustExist] of [
      [required, true],
      [optional, false],
    ] as const) {
      for (const name of names) {
        const p = findPackage(name, dir);
        if (p === undefined) {
          if (mustExist) throw new Error(`${name} (a dependency of ${top ? "ringwatch" : relative(repoRoot, dir)}) is not installed: run npm ci`);
          continue;
        }
        const rel = relative(repoRoot, p);
        if (found.has(rel)) continue;
        found.add(rel);
        todo.push([p, false]);
      }
    }
  }
  return [...found].sort();
}

/** Whether every directory from / down to dir can be traversed by any user. */
function reachableByAll(dir: string): boolean {
  for (let d = realpathSync(dir); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return false;
    if (d === dirname(d)) return true;
  }
}

/** A temp directory that other users can reach: TMPDIR's, else /tmp, else /var/tmp. Throws with one line when none can be. */
function sharedBase(): string {
  const base = [tmpdir(), "/tmp", "/var/tmp"].find((d) => existsSync(d) && reachableByAll(d));
  if (base === undefined) throw new Error(`no temp directory that other users can reach (${tmpdir()}, /tmp, /var/tmp): set TMPDIR to one`);
  return base;
}

/** A new directory (mode 0755, real path) that every user can reach; the caller removes it. */
export function sharedTempDir(prefix = "rw-shared-"): string {
  const d = realpathSync(mkdtempSync(join(sharedBase(), prefix)));
  chmodSync(d, 0o755);
  return d;
}

/** Throws with one line unless every user can reach dir (its ancestors searchable by all). */
export function assertReachableByAll(dir: string): void {
  if (!reachableByAll(dir))
    throw new Error(`${dir} cannot be reached by other users (an ancestor directory is not searchable by all): set TMPDIR to a directory that is`);
}

/** Gives every user read access (and search access to directories) below dir. */
function openUp(path: string): void {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    chmodSync(path, st.mode | 0o555);
    for (const e of readdirSync(path)) openUp(join(path, e));
  } else {
    chmodSync(path, st.mode | 0o444 | (st.mode & 0o100 ? 0o111 : 0));
  }
}

/**
 * Copies the build and its production dependencies into a new directory every user can read.
 * Throws with one line when there is no build, or no temp directory other users can reach.
 */
export function stageBuild(prefix = "rw-staged-"): StagedBuild {
  if (!existsSync(join(repoRoot, "dist/agent/main.js"))) throw new Error("dist/agent/main.js is missing: run `npm run build` first");
  const root = sharedTempDir(prefix);
  try {
    const packages = productionPackages();
    cpSync(join(repoRoot, "dist"), join(root, "dist"), { recursive: true });
    cpSync(join(repoRoot, "package.json"), join(root, "package.json")); // "type": "module"
    for (const rel of packages) {
      // Nested node_modules are copied where a dependency needs them, not wholesale.
      const src = realpathSync(join(repoRoot, rel));
      cpSync(src, join(root, rel), { recursive: true, filter: (p) => p === src || !relative(src, p).split(sep).includes("node_modules") });
    }
    openUp(root);
    return {
      root,
      agentMain: join(root, "dist/agent/main.js"),
      packages,
      module: (rel) => pathToFileURL(join(root, "dist", rel)).href,
      remove: () => rmSync(root, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

export type ScriptResult = ProcessResult;

/**
 * Runs an ES module script (its text) with node as `user` (this user when undefined), from the
 * staged copy's root; the script gets `args` as process.argv.slice(1). Resolves when it exits.
 */
export function runScriptAs(
  staged: StagedBuild,
  script: string,
  args: string[],
  user: { uid: number; gid: number } | undefined,
  timeoutMs = 20_000,
): Promise<ScriptResult> {
  return runProcess(process.execPath, ["--input-type=module", "-e", script, "--", ...args], {
    cwd: resolve(staged.root),
    ...(user ? { user } : {}),
    timeoutMs,
    what: "script",
  });
}
