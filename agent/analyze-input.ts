/**
 * What `ringwatch analyze` reads, opened so that nothing a job left in a log folder (or in a glob
 * the shell expanded there) can stop it: a dangling or looping symlink, a FIFO, a socket or a device
 * is skipped with one line, and the verdict comes from the rest.
 *
 * - A directory gives its files and those of its subfolders (Lister), sorted, without dot files;
 *   a glob the shell did not expand gives what it matches (analyze-glob.ts). Files are listed
 *   (stat, which opens nothing) before any is opened, so that the total size is known.
 * - Only regular files are read. A path is looked at through an O_PATH descriptor (Linux), which
 *   names the inode without opening it: no FIFO partner is waited for and no device driver is
 *   called. A regular file is then reopened through /proc/self/fd, so the very inode looked at is
 *   read, even if the path was swapped meanwhile; elsewhere, by path, checked again after opening.
 * - A regular file is read up to the size it had when opened: a log still being written (or
 *   written on purpose) cannot keep analyze reading.
 * - `-` is standard input (a file, a pipe, a socket or a terminal), read until its writer closes
 *   it; a device on standard input (`< /dev/zero`) is refused.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, statSync, type Stats } from "node:fs";
import { basename, join } from "node:path";
import { isatty } from "node:tty";
import { expandGlob, hasGlob } from "./analyze-glob.js";
import { notALogByName } from "./analyze-sniff.js";

/** Linux O_PATH (node:fs does not export it). */
const O_PATH = 0o10000000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const NAMED_NOT_REGULAR = "not a regular file or directory (to read from a pipe, give -)";

/** One input being read: a regular file up to its size when opened, or standard input to its end. */
export class Input {
  private left: number;

  constructor(
    readonly path: string,
    private readonly fd: number,
    limit: number | undefined,
  ) {
    this.left = limit ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Up to max bytes into buf (from 0); 0 at the end. Waits in 10 ms steps while a non-blocking
   * stream (stdin that another process made non-blocking) has nothing yet.
   */
  read(buf: Buffer, max: number): number {
    const want = Math.min(max, buf.length, this.left);
    if (want <= 0) return 0;
    for (;;) {
      try {
        const n = readSync(this.fd, buf, 0, want, null);
        this.left -= n;
        return n;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }

  close(): void {
    if (this.fd !== 0) closeSync(this.fd);
  }
}

/** One thing an argument names: an input to read, or why it is not read (one line each). */
export type Entry = { input: Input } | { path: string; skipped: string } | { path: string; error: string };

/** Folders read below a folder named (a bundle: bundle/node1/logs/rank0/...). */
export const MAX_DEPTH = 16;
/** Files listed in one run, at most; the rest are not read (one line says so). */
export const MAX_FILES = 20_000;

/** A regular file found, not opened yet: its size then (for the progress display). */
export interface Found {
  path: string;
  /** Named on the command line, not met in a folder or matched by a glob. */
  named: boolean;
  size: number;
}

/** What listing an argument finds: a file to open, why a path is not read, or a bound that was hit. */
export type Listed = { found: Found } | { path: string; skipped: string } | { path: string; error: string } | { stopped: string };

/**
 * Lists the files that the arguments of one run name, without opening them: a folder with its
 * subfolders (sorted; without dot files and dot folders, and `__MACOSX`), a glob the shell did not
 * expand, `-`. Each folder and each file is listed once, by device and inode, so a symbolic link
 * back up a tree ends there and two names of one file are read once. Bounded by MAX_DEPTH and
 * MAX_FILES, with a line when a bound is hit.
 */
export class Lister {
  private files = 0;
  private full = false;
  private readonly dirs = new Map<string, string>();
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly maxFiles = MAX_FILES,
    private readonly maxDepth = MAX_DEPTH,
  ) {}

  *list(arg: string): Generator<Listed> {
    if (arg === "-") {
      yield { found: { path: "-", named: true, size: stdinSize() } };
      return;
    }
    let st: Stats;
    try {
      st = statSync(arg);
    } catch (err) {
      if (code(err) === "ENOENT" && hasGlob(arg)) yield* this.glob(arg);
      else yield lookFailed(arg, err);
      return;
    }
    yield* this.named(arg, st);
  }

  private *glob(pattern: string): Generator<Listed> {
    const r = expandGlob(pattern, Math.max(1, this.maxFiles - this.files));
    if (r.paths.length === 0) yield { path: pattern, error: "no file matches this pattern" };
    for (const path of r.paths) yield* this.met(path === "-" ? "./-" : path, path, 0);
    if (r.stopped !== undefined) yield { stopped: r.stopped };
  }

  private *named(path: string, st: Stats): Generator<Listed> {
    if (st.isDirectory()) yield* this.walk(path, st, path, 0);
    else if (st.isFile()) yield* this.file(path, st, true);
    else yield { path, skipped: NAMED_NOT_REGULAR };
  }

  private *walk(dir: string, st: Stats, root: string, depth: number): Generator<Listed> {
    const key = `${st.dev}:${st.ino}`;
    const before = this.dirs.get(key);
    if (before !== undefined) {
      yield { path: dir, skipped: `the folder ${before}, read already (a symbolic link to it)` };
      return;
    }
    this.dirs.set(key, dir);
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (err) {
      yield { path: dir, error: code(err) };
      return;
    }
    for (const name of names) {
      if (this.full) return;
      if (name.startsWith(".") || name === "__MACOSX") continue;
      yield* this.met(join(dir, name), root, depth + 1);
    }
  }

  /** A path met in a folder `depth` below root, or matched by a glob: read unless it is no log by its name. */
  private *met(path: string, root: string, depth: number): Generator<Listed> {
    let st: Stats;
    try {
      st = statSync(path);
    } catch (err) {
      yield lookFailed(path, err);
      return;
    }
    if (st.isDirectory()) {
      if (depth > this.maxDepth) yield { path, skipped: `more than ${this.maxDepth} folders below ${root}` };
      else yield* this.walk(path, st, root, depth);
    } else if (!st.isFile()) yield { path, skipped: "not a regular file" };
    else {
      const why = notALogByName(basename(path));
      if (why !== undefined) yield { path, skipped: why };
      else yield* this.file(path, st, false);
    }
  }

  private *file(path: string, st: Stats, named: boolean): Generator<Listed> {
    if (this.full) return;
    if (this.files >= this.maxFiles) {
      this.full = true;
      yield { stopped: `stopped at ${this.maxFiles} files: ${path} and what follows is not read (name fewer folders)` };
      return;
    }
    const key = `${st.dev}:${st.ino}`;
    const before = this.seen.get(key);
    if (before !== undefined) {
      yield { path, skipped: `the same file as ${before}` };
      return;
    }
    this.seen.set(key, path);
    this.files++;
    yield { found: { path, named, size: st.size } };
  }
}

/** Opens what a listing found: standard input, or a regular file (else why not). */
export function open(f: Found): Entry {
  if (f.path === "-") return stdin();
  const e = look(f.path, f.named);
  return e === "directory" ? { path: f.path, skipped: "not a regular file (replaced while being opened)" } : e;
}

/** The entries of one argument (a file, a folder, a glob or `-`), each opened only when reached. */
export function* entries(arg: string, lister = new Lister()): Generator<Entry> {
  for (const l of lister.list(arg)) {
    if ("found" in l) yield open(l.found);
    else if ("stopped" in l) yield { path: arg, skipped: l.stopped };
    else yield l;
  }
}

function stdinSize(): number {
  try {
    const st = fstatSync(0);
    return st.isFile() ? st.size : 0;
  } catch {
    return 0;
  }
}

function stdin(): Entry {
  let st: Stats;
  try {
    st = fstatSync(0);
  } catch (err) {
    return { path: "-", error: code(err) };
  }
  if (st.isFile()) return { input: new Input("-", 0, st.size) };
  if (st.isFIFO() || st.isSocket() || isatty(0)) return { input: new Input("-", 0, undefined) };
  return { path: "-", skipped: "standard input is a device, not a file, pipe or terminal" };
}

/** Opens path if it is a regular file; "directory" for a directory; else why not. */
function look(path: string, named: boolean): Entry | "directory" {
  let pathFd: number | undefined;
  let st: Stats;
  try {
    if (process.platform === "linux") {
      pathFd = openSync(path, O_PATH);
      st = fstatSync(pathFd);
    } else st = statSync(path);
  } catch (err) {
    if (pathFd !== undefined) closeSync(pathFd);
    return lookFailed(path, err);
  }
  try {
    if (st.isDirectory()) return "directory";
    if (!st.isFile()) return { path, skipped: named ? NAMED_NOT_REGULAR : "not a regular file" };
    const fd = reopen(path, pathFd);
    const again = fstatSync(fd);
    if (!again.isFile() || again.ino !== st.ino || again.dev !== st.dev) {
      closeSync(fd);
      return { path, skipped: "not a regular file (replaced while being opened)" };
    }
    return { input: new Input(path, fd, again.size) };
  } catch (err) {
    return { path, error: code(err) };
  } finally {
    if (pathFd !== undefined) closeSync(pathFd);
  }
}

/** The inode behind pathFd, through /proc/self/fd; by path where there is no /proc. */
function reopen(path: string, pathFd: number | undefined): number {
  if (pathFd === undefined) return openSync(path, READ_FLAGS);
  try {
    return openSync(`/proc/self/fd/${pathFd}`, READ_FLAGS);
  } catch (err) {
    if (code(err) !== "ENOENT") throw err;
    return openSync(path, READ_FLAGS);
  }
}

function lookFailed(path: string, err: unknown): { path: string; skipped: string } | { path: string; error: string } {
  const c = code(err);
  if (c === "ELOOP") return { path, skipped: "symbolic link loop" };
  if (c === "ENOENT") {
    try {
      if (lstatSync(path).isSymbolicLink()) return { path, skipped: "dangling symbolic link" };
    } catch {
      // gone altogether
    }
  }
  return { path, error: c };
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
