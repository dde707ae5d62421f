/**
 * What `ringwatch analyze` reads, opened so that nothing a job left in a log folder (or in a glob
 * the shell expanded there) can stop it: a dangling or looping symlink, a FIFO, a socket or a device
 * is skipped with one line, and the verdict comes from the rest.
 *
 * - A directory gives its entries, sorted, without dot files and without descending.
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
import { join } from "node:path";
import { isatty } from "node:tty";

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

/** The entries of one argument (a file, a directory or `-`), each opened only when reached. */
export function* entries(arg: string): Generator<Entry> {
  if (arg === "-") {
    yield stdin();
    return;
  }
  const first = look(arg, true);
  if (first !== "directory") {
    yield first;
    return;
  }
  let names: string[];
  try {
    names = readdirSync(arg).sort();
  } catch (err) {
    yield { path: arg, error: code(err) };
    return;
  }
  for (const name of names) {
    if (name.startsWith(".")) continue;
    const e = look(join(arg, name), false);
    if (e !== "directory") yield e; // subdirectories are not read
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

function lookFailed(path: string, err: unknown): Entry {
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
