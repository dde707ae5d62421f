/**
 * Opens a file that a training job (an untrusted user) can name: a log in a followed folder, a
 * Flight Recorder dump, an Inspector record, a debug-info FIFO. docs/security.md has the threat
 * model. A job user can put a FIFO, a device link or a symlink to another user's file where a
 * log is expected, and swap it between two looks; so nothing is opened by path and trusted, and
 * every decision is made on what was opened, never on what a path names a moment later:
 *
 * 1. open(path, O_PATH): a descriptor that names the inode without opening it (no FIFO partner is
 *    waited for, no device driver is called), following symlinks as the follower does;
 * 2. fstat on that descriptor: only a regular file (or, for a poke, a FIFO) goes on;
 * 3. where that inode really is (readlink of /proc/self/fd/N, the kernel's own answer): a path the
 *    configuration asks to follow (TrustRoots), or else a file every local user could read anyway
 *    (readable by others, every directory above it searchable by others). A job user's link to a
 *    file that user could not read is refused, whichever way the link was swapped meanwhile;
 * 4. reopened through /proc/self/fd/N with O_NONBLOCK: the very inode checked.
 *
 * Every step is an async libuv call that cannot block on a FIFO: a FIFO never holds a thread.
 */
import { close, constants, fstat, open, type Stats } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import { performance } from "node:perf_hooks";

/** Linux O_PATH (node:fs does not export it). */
const O_PATH = 0o10000000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
/** A root that did not resolve (not there yet) is looked up again at most this often. */
const RESOLVE_AGAIN_MS = 60_000;

/** Why a job's file was not opened (besides the system's own errors: ENOENT, EACCES...). */
export type RefusalCode = "ENOTREG" | "ENOTFIFO" | "EFOREIGN";

export class RefusedFile extends Error {
  constructor(
    readonly code: RefusalCode,
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** One line per refusal code, for logs. */
export const REFUSAL_WORDS: Readonly<Record<RefusalCode, string>> = {
  ENOTREG: "not a regular file (a FIFO, socket or device is never read)",
  ENOTFIFO: "not a FIFO",
  EFOREIGN: "a symbolic link to a file outside the followed paths that not every local user may read",
};

/**
 * The configured roots a job's files may live in, with their real paths (resolved once; a root
 * not there yet is looked up again later). `matches`, given a path under a configured root, says
 * whether the configuration asks for it (the follower's patterns): inside a root is not enough
 * where the root is only the fixed prefix of a glob (`/home/STAR/nccl/STAR.log` has root /home).
 */
export class TrustRoots {
  private real: (string | undefined)[] = [];
  private resolvedAt = -Infinity;
  private configured: string[] = [];

  constructor(
    roots: readonly string[],
    private matches?: (path: string) => boolean,
  ) {
    this.set(roots, matches);
  }

  /** Other roots (a follower learns its roots when it starts; a reload changes them). */
  set(roots: readonly string[], matches?: (path: string) => boolean): void {
    this.configured = [...new Set(roots.filter((r) => isAbsolute(r) && r !== sep))];
    this.matches = matches;
    this.real = [];
    this.resolvedAt = -Infinity;
  }

  /** Whether the real path p is one the configuration asks for (below a root's real path, and matched). */
  async contains(p: string): Promise<boolean> {
    const now = performance.now();
    if (this.real.length !== this.configured.length || (this.real.includes(undefined) && now - this.resolvedAt >= RESOLVE_AGAIN_MS)) {
      this.resolvedAt = now;
      const known = this.real;
      this.real = await Promise.all(this.configured.map(async (r, i) => known[i] ?? (await realpath(r).catch(() => undefined))));
    }
    for (let i = 0; i < this.configured.length; i++) {
      const root = this.configured[i] as string;
      const real = this.real[i] ?? root;
      if (p !== real && !p.startsWith(real.endsWith(sep) ? real : real + sep)) continue;
      const asConfigured = root + p.slice(real.length);
      if (this.matches === undefined || this.matches(asConfigured)) return true;
    }
    return false;
  }
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
    // Without /proc the inode's place cannot be known: refused, never reopened by path.
    const where = await readlink(proc).catch(() => undefined);
    if (where === undefined || !((await roots.contains(stripDeleted(where))) || (await everyoneMayRead(stripDeleted(where), st)))) {
      throw new RefusedFile("EFOREIGN", path, REFUSAL_WORDS.EFOREIGN);
    }
    const fd = await openFd(proc, READ_FLAGS);
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

/**
 * Whether any local user could read the file at real path p anyway: readable by others, and every
 * directory above it searchable by others. p is the kernel's name for the opened inode (no
 * symlink in it), and its directories belong to whoever owns them, not to the job user.
 */
async function everyoneMayRead(p: string, st: Stats): Promise<boolean> {
  if ((st.mode & 0o004) === 0) return false;
  for (let dir = dirname(p); ; dir = dirname(dir)) {
    const d = await lstat(dir).catch(() => undefined);
    if (d === undefined || !d.isDirectory() || (d.mode & 0o001) === 0) return false;
    if (dir === sep || dir === ".") return true;
  }
}

function stripDeleted(p: string): string {
  return p.endsWith(" (deleted)") ? p.slice(0, -10) : p;
}

/**
 * Opens a job's FIFO for writing, for a poke: never through a symlink (O_NOFOLLOW), never a
 * regular file, never blocking (no reader: ENXIO at once). The caller writes and closes.
 */
export async function openJobFifoForWrite(path: string): Promise<number> {
  const fd = await openFd(path, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  let ok = false;
  try {
    ok = (await fstatFd(fd)).isFIFO();
  } finally {
    if (!ok) close(fd, () => undefined);
  }
  if (!ok) throw new RefusedFile("ENOTFIFO", path, REFUSAL_WORDS.ENOTFIFO);
  return fd;
}

/** The directory a prefix-named family of files lives in (`<dir>/<stem><rank>`), as a root ("/" is none). */
export function prefixRoot(prefix: string): string {
  return dirname(resolve(prefix));
}
