/**
 * What the follower knows about one followed file (one inode). A file is identified by
 * (dev, ino) plus its birth time where the file system reports one, so an inode number reused
 * after delete + create is a different file. Besides the offset it keeps two small
 * fingerprints used to detect copytruncate when the size alone cannot tell:
 *  - `tail`: the last bytes before the offset. Every read starts that many bytes early and
 *    compares them (no extra system call); different bytes mean the file was rewritten.
 *  - `head`: the first bytes of the file, compared when the size did not move but mtime did.
 */
import type { FSWatcher, Stats } from "node:fs";
import { LineSplitter } from "./line-splitter.js";
import type { FollowedFile, ResumePoint } from "./types.js";

export const TAIL_PRINT = 64;
export const HEAD_PRINT = 256;

export type StartMode = "head" | "start";

export class Tail {
  file: FollowedFile;
  readonly birthMs: number;
  /** Followed paths that name this file now; empty = orphan (renamed away or deleted). */
  readonly paths = new Set<string>();
  /** Next byte to read. */
  offset = 0;
  /** mtime seen at the last read (ms). */
  mtimeMs = -1;
  /** Open descriptor, or null (see FdCache). */
  fd: number | null = null;
  /** A read of this file is running. */
  busy = false;
  /** Read only the head (historical) and jump to the end: the file existed at start. */
  headPending: boolean;
  /** Counted in Registry.headsPending until its first read attempt ends (start() waits for those). */
  headCounted = false;
  /** The last read failed (EACCES...): retry on the sweep. */
  errored = false;
  removed = false;
  /** Orphan past its grace: read once more through the fd, then remove. */
  finalize = false;
  /** On a file system without inotify: polled, and the fd is closed after each read (open() revalidates NFS caches). */
  readonly closeAfterRead: boolean;
  orphanTimer: NodeJS.Timeout | null = null;
  /** One-shot inotify watch, armed while the file is idle (see change-watch.ts). */
  watch: FSWatcher | null = null;
  /** The path the watch was armed through (inotify then follows the inode it named). */
  watchPath: string | null = null;
  /** Next look while the file is hot (being written). */
  hotTimer: NodeJS.Timeout | null = null;
  /** Consecutive looks that found nothing new. */
  quiet = 0;
  /** No inotify watch (polling file system, or no watch could be had): the poll loop looks at it. */
  polled = false;
  readonly splitter: LineSplitter;
  readonly tailPrint = Buffer.alloc(TAIL_PRINT);
  tailLen = 0;
  readonly headPrint = Buffer.alloc(HEAD_PRINT);
  headLen = 0;
  /** The full head print as indexed in the follower's HeadIndex, once there is one. */
  indexedHead: string | null = null;
  /** Whether a new file was checked for being a copy of a followed one (head-index.ts). */
  copyChecked: boolean;

  constructor(file: FollowedFile, st: Stats, mode: StartMode, maxLineBytes: number, onPollingFs: boolean) {
    this.file = file;
    this.birthMs = st.birthtimeMs; // as reported: sameFile() decides whether to trust it
    noteBirth(st);
    this.headPending = mode === "head";
    this.copyChecked = mode === "head";
    this.closeAfterRead = onPollingFs;
    this.polled = onPollingFs;
    this.splitter = new LineSplitter(maxLineBytes);
  }

  /** Whether st describes this file (same inode, and same birth where both are known). */
  sameFile(st: Stats): boolean {
    if (st.ino !== this.file.ino || st.dev !== this.file.dev) return false;
    const born = birthOf(st);
    return this.birthMs === 0 || born === 0 || born === this.birthMs;
  }

  /** Remembers bytes buf[from, to), which end at the new offset, as the tail fingerprint. */
  rememberTail(buf: Buffer, from: number, to: number): void {
    const add = to - from;
    if (add >= TAIL_PRINT) {
      buf.copy(this.tailPrint, 0, to - TAIL_PRINT, to);
      this.tailLen = TAIL_PRINT;
      return;
    }
    const keep = Math.min(this.tailLen, TAIL_PRINT - add);
    this.tailPrint.copyWithin(0, this.tailLen - keep, this.tailLen);
    buf.copy(this.tailPrint, keep, from, to);
    this.tailLen = keep + add;
  }

  /** Records bytes buf[from, to), read at file position pos, into the head fingerprint if they fall in it. */
  rememberHead(buf: Buffer, from: number, to: number, pos: number): void {
    if (pos !== this.headLen || pos >= HEAD_PRINT) return;
    const n = Math.min(to - from, HEAD_PRINT - pos);
    buf.copy(this.headPrint, pos, from, from + n);
    this.headLen = pos + n;
  }

  /** Where this file stands, to hand to another follower. */
  resumePoint(): ResumePoint {
    return {
      offset: this.offset,
      generation: this.file.generation,
      tail: Buffer.from(this.tailPrint.subarray(0, this.tailLen)),
      head: Buffer.from(this.headPrint.subarray(0, this.headLen)),
      partial: this.splitter.partial(),
    };
  }

  /** Goes on from where another follower stood (instead of a head read or the start). */
  resumeFrom(r: ResumePoint): void {
    this.headPending = false;
    this.copyChecked = true;
    this.offset = r.offset;
    this.tailLen = r.tail.copy(this.tailPrint);
    this.headLen = r.head.copy(this.headPrint);
    this.splitter.preload(r.partial);
  }

  /** Forgets position, fingerprints and any partial line (truncation). */
  rewind(): void {
    this.offset = 0;
    this.tailLen = 0;
    this.headLen = 0;
    this.splitter.reset();
  }
}

/**
 * Whether this process sees real birth times. Where statx(2) is missing (kernels before 4.11,
 * seccomp profiles that refuse it) libuv reports the ctime as the birth time, which moves on
 * every write and rename. A birth time that differs from its ctime proves they are real (statx
 * works for the whole process): from then on a birth time equal to the ctime is trusted too. That
 * is the common case of a new empty file, such as the one created right after a rotation, which
 * often gets the inode number of the file the rotation deleted.
 */
export const birthTimes = {
  real: false,
  /** Forgets what was seen (tests). */
  forget(): void {
    this.real = false;
  },
};

/**
 * st's birth time, or 0 when unknown: none reported, or equal to the ctime before any file showed
 * that birth times are real here. (Until then a real birth time equal to the ctime, a file not
 * changed since the clock tick it was created in, is not trusted: identity rests on (dev, ino),
 * and a reused inode number is caught as a truncation.)
 */
export function birthOf(st: Stats): number {
  noteBirth(st);
  return st.birthtimeMs !== st.ctimeMs || birthTimes.real ? st.birthtimeMs : 0;
}

/** Notes whether st shows that birth times are real (see birthTimes). */
export function noteBirth(st: Stats): void {
  if (st.birthtimeMs > 0 && st.birthtimeMs !== st.ctimeMs) birthTimes.real = true;
}

export function idOf(st: Stats): string {
  return `${st.dev}:${st.ino}`;
}
