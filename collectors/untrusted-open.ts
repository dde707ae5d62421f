/**
 * Opens a file that a training job (an untrusted user) can name: a log in a followed folder, a
 * Flight Recorder dump, an Inspector record, a debug-info FIFO. docs/security.md has the threat
 * model. A job user can put a FIFO, a device link or a symlink to another user's file where a
 * log is expected, and swap it between two looks; so nothing is opened by path and trusted:
 *
 * 1. open(path, O_PATH): a descriptor that names the inode without opening it (no FIFO partner
 *    is waited for, no device driver is called), following symlinks as the follower does;
 * 2. fstat on that descriptor: only a regular file (or, for a poke, a FIFO) goes on;
 * 3. where it really is (/proc/self/fd): inside a configured root, or else owned by the owner of
 *    every symlink on the configured path below the root (root's and the agent's own links are
 *    trusted): a job user's link to a file that user cannot read is refused;
 * 4. reopened through /proc/self/fd/N with O_NONBLOCK: the very inode checked, never another one
 *    swapped in at the path meanwhile.
 *
 * Every step is an async libuv call that cannot block: a FIFO never holds a thread-pool thread.
 */
import { close, closeSync, constants, fstat, fstatSync, open, openSync, type Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, sep } from "node:path";

/** Linux O_PATH (node:fs does not export it). */
const O_PATH = 0o10000000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Why a job's file was not opened (besides the system's own errors: ENOENT, EACCES...). */
export type RefusalCode = "ENOTREG" | "ENOTFIFO" | "EFOREIGN";

export class RefusedFile extends Error {
  constructor(readonly code: RefusalCode, readonly path: string, detail: string) {
    super(`${path}: ${detail}`);
  }
}

/** One line per refusal code, for logs. */
export const REFUSAL_WORDS: Readonly<Record<RefusalCode, string>> = {
  ENOTREG: "not a regular file (a FIFO, socket or device is never read)",
  ENOTFIFO: "not a FIFO",
  EFOREIGN: "a symbolic link to a file outside the followed folders that the link's owner does not own",
};

/** The configured roots a job's files may live in, with their real paths (looked up again on a miss). */
export class TrustRoots {
  private real: string[] | undefined;
  private configured: string[] = [];

  constructor(roots: readonly string[]) {
    this.set(roots);
  }

  /** Other roots (a follower learns its roots when it starts; a reload changes them). */
  set(roots: readonly string[]): void {
    this.configured = [...new Set(roots.filter((r) => isAbsolute(r)))];
    this.real = undefined;
  }

  get roots(): readonly string[] {
    return this.configured;
  }

  /** Whether the real path p is inside a root (its real path). */
  async contains(p: string): Promise<boolean> {
    if (this.real !== undefined && inside(this.real, p)) return true;
    this.real = await Promise.all(this.configured.map((r) => realpath(r).catch(() => r)));
    return inside(this.real, p);
  }

  /** The configured root path lies below (the longest), if any. */
  rootOf(p: string): string | undefined {
    let best: string | undefined;
    for (const r of this.configured) if (inside([r], p) && (best === undefined || r.length > best.length)) best = r;
    return best;
  }
}

function inside(roots: readonly string[], p: string): boolean {
  for (const r of roots) if (p === r || p.startsWith(r.endsWith(sep) ? r : r + sep)) return true;
  return false;
}

export interface OpenedFile {
  fd: number;
  st: Stats;
}

/**
 * Opens a job's regular file for reading (non-blocking) after the checks above. Throws the
 * system's error (ENOENT, EACCES, ELOOP...) or a RefusedFile; never blocks on a FIFO or device.
 */
export async function openJobFile(path: string, roots: TrustRoots): Promise<OpenedFile> {
  const pathFd = await openFd(path, O_PATH);
  try {
    const st = await fstatFd(pathFd);
    if (!st.isFile()) throw new RefusedFile("ENOTREG", path, REFUSAL_WORDS.ENOTREG);
    const proc = `/proc/self/fd/${pathFd}`;
    const where = await readlink(proc).catch(() => undefined);
    if (where !== undefined && !(await roots.contains(stripDeleted(where))) && !(await linksOwnedBy(path, roots, st.uid))) {
      throw new RefusedFile("EFOREIGN", path, REFUSAL_WORDS.EFOREIGN);
    }
    // Reopen the inode just checked; where /proc is missing, by path (no symlink check possible).
    const fd = await openFd(where !== undefined ? proc : path, READ_FLAGS);
    const again = await fstatFd(fd).catch(() => undefined);
    if (again === undefined || again.ino !== st.ino || again.dev !== st.dev || !again.isFile()) {
      close(fd, () => undefined);
      throw new RefusedFile("ENOTREG", path, REFUSAL_WORDS.ENOTREG);
    }
    return { fd, st: again };
  } finally {
    close(pathFd, () => undefined);
  }
}

function openFd(path: string, flags: number): Promise<number> {
  return new Promise((res, rej) => open(path, flags, (err, fd) => (err ? rej(err) : res(fd))));
}

function fstatFd(fd: number): Promise<Stats> {
  return new Promise((res, rej) => fstat(fd, (err, st) => (err ? rej(err) : res(st))));
}

/** Whether every symlink on path below its root (if any) is owned by root, by this process's user or by uid. */
async function linksOwnedBy(path: string, roots: TrustRoots, uid: number): Promise<boolean> {
  const root = roots.rootOf(path);
  if (root === undefined) return false;
  const me = process.getuid?.() ?? -1;
  const rel = relative(root, path);
  if (rel === "" || rel.startsWith("..")) return false;
  let p = root;
  for (const part of rel.split(sep)) {
    p = p === sep ? sep + part : p + sep + part;
    const st = await lstat(p).catch(() => undefined);
    if (st === undefined) return false;
    if (st.isSymbolicLink() && st.uid !== 0 && st.uid !== me && st.uid !== uid) return false;
  }
  return true;
}

function stripDeleted(p: string): string {
  return p.endsWith(" (deleted)") ? p.slice(0, -10) : p;
}

/**
 * Opens a job's FIFO for writing, for a poke: never through a symlink (O_NOFOLLOW), never a
 * regular file, never blocking (no reader: ENXIO at once). The caller writes and closes.
 */
export function openJobFifoForWrite(path: string): number {
  const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  let ok = false;
  try {
    ok = fstatSync(fd).isFIFO();
  } finally {
    if (!ok) closeSync(fd);
  }
  if (!ok) throw new RefusedFile("ENOTFIFO", path, REFUSAL_WORDS.ENOTFIFO);
  return fd;
}

/** The directory a prefix-named family of files lives in (`<dir>/<stem><rank>`), as a root. */
export function prefixRoot(prefix: string): string {
  return dirname(prefix);
}
