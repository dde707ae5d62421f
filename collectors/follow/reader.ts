/**
 * Reads what is new in one followed file: from the saved offset to the size fstat reports, in
 * chunks into a reused buffer (never a whole-file read, never history twice). Detects
 * copytruncate before trusting the offset:
 *  - smaller: the bytes before the offset are gone -> truncated. If they are still there the size
 *    was stale (NFS/SMB attribute caches report old sizes) and nothing happens.
 *  - same size, new mtime: tail and head fingerprints compared -> truncated if either differs.
 *  - larger: each read starts TAIL_PRINT bytes early; different bytes there -> truncated.
 * A truncated file is read again from 0 (leading NULs skipped: a writer without O_APPEND leaves a
 * hole up to its old offset).
 */
import type { Stats } from "node:fs";
import type { FdCache } from "./fd-cache.js";
import type { LineSink } from "./line-splitter.js";
import { closeQuietly } from "./fd-cache.js";
import { isStalled, type FsGate } from "../job-fs-gate.js";
import { openJobFile, type TrustRoots } from "../untrusted-open.js";
import { errCode, fstatFd, readAt } from "./fs-async.js";
import type { HeadIndex } from "./head-index.js";
import { HEAD_PRINT, TAIL_PRINT, type Tail } from "./tail-state.js";
import type { FollowerStats } from "./types.js";

/** Unread bytes past which a mostly unallocated file is read from near its end only (isSparse). */
export const SPARSE_MIN_BYTES = 64 * 1024 * 1024;

/** Bytes one file may read per turn before others get theirs. */
export const TURN_BYTES = 8 * 1024 * 1024;

export interface ReadContext {
  readonly headBytes: number;
  readonly stats: FollowerStats;
  readonly fds: FdCache;
  /** Where the next chunk of t's lines goes. */
  sinkFor(t: Tail, historical: boolean, mtimeMs: number): LineSink;
  /** After a chunk: n lines went to sink (n may be 0). */
  delivered(t: Tail, sink: LineSink, n: number): void;
  /** The sink threw: the rest of that chunk is lost; reading resumes at the next line. */
  sinkFailed(t: Tail): void;
  truncated(t: Tail): void;
  /** open() said the path does not exist any more. */
  pathGone(path: string): void;
  /** open() found another file at the path. */
  pathReplaced(path: string, st: Stats): void;
  /** fstat says t has no links left while paths still name it: check what they name now. */
  unlinked(t: Tail): void;
  /** More is left after this turn. */
  requeue(t: Tail): void;
  /** A live look at t found nothing new (optional: the nccl collector dates lines by it). */
  looked?(t: Tail): void;
  /** A file could not be opened or read (EACCES, EIO...): counted and reported; retried later. */
  readFailed(path: string, code: string): void;
  readonly heads: HeadIndex;
  /** The followed roots: a file found through a symlink must lie inside them or belong to the link's owner. */
  readonly roots: TrustRoots;
  /** Every call on the file goes through it: a mount that stops answering holds few threads. */
  readonly gate: FsGate;
}

/** Reads from the open file, through the gate. */
type ReadFn = (buf: Buffer, off: number, len: number, pos: number) => Promise<number>;

/**
 * Reads what is new in t into buf. Returns true where a read was abandoned on a mount that does
 * not answer: that read may still write into buf when the server answers, so buf must not be reused.
 */

export async function readTail(t: Tail, buf: Buffer, ctx: ReadContext): Promise<boolean> {
  if (t.removed) return false;
  t.busy = true;
  try {
    const st = await openAndStat(t, ctx);
    if (st === undefined || t.removed || t.fd === null) return false;
    if (st.nlink === 0 && t.paths.size > 0) ctx.unlinked(t); // deleted (maybe recreated) while hot
    const fd = t.fd;
    const path = t.file.path;
    await readBody(t, (b, off, len, pos) => ctx.gate.run(path, () => readAt(fd, b, off, len, pos)), st, buf, ctx);
    t.errored = false;
    return false;
  } catch (e) {
    // A mount that does not answer is said once by its path's state, not per file.
    const stalled = isStalled(e);
    if (!stalled) ctx.readFailed(t.paths.values().next().value ?? t.file.path, errCode(e) ?? String(e));
    t.errored = true;
    ctx.fds.close(t);
    return stalled;
  } finally {
    t.busy = false;
    if (t.closeAfterRead || t.removed) ctx.fds.close(t);
  }
}

async function openAndStat(t: Tail, ctx: ReadContext): Promise<Stats | undefined> {
  if (t.fd !== null) {
    ctx.fds.use(t);
    const fd = t.fd;
    return ctx.gate.run(t.file.path, () => fstatFd(fd));
  }
  const path = t.paths.values().next().value;
  if (path === undefined) return undefined; // orphan without an fd: nothing left to read
  let fd: number;
  let st: Stats;
  try {
    ({ fd, st } = await ctx.gate.run(
      path,
      () => openJobFile(path, ctx.roots),
      (late) => closeQuietly(late.fd),
    ));
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT" || code === "ENOTDIR") ctx.pathGone(path);
    else if (isStalled(e)) t.errored = true;
    else {
      ctx.readFailed(path, code ?? String(e));
      t.errored = true;
    }
    return undefined;
  }
  if (t.removed || !t.sameFile(st)) {
    ctx.gate.close(path, fd);
    if (!t.removed) ctx.pathReplaced(path, st);
    return undefined;
  }
  t.fd = fd;
  ctx.fds.use(t);
  return st;
}

async function readBody(t: Tail, rd: ReadFn, st: Stats, buf: Buffer, ctx: ReadContext): Promise<void> {
  const size = st.size;
  const mtime = st.mtimeMs;
  if (t.headPending) return readHead(t, rd, size, mtime, buf, ctx);
  if (size === t.offset && mtime === t.mtimeMs) {
    ctx.looked?.(t);
    return;
  }
  if (size <= t.offset && t.offset > 0) {
    if (await unchanged(t, rd, buf, size === t.offset)) {
      if (size === t.offset) t.mtimeMs = mtime;
      return;
    }
    ctx.truncated(t);
  }
  t.mtimeMs = mtime;
  if (size <= t.offset) return;
  if (!t.copyChecked && t.offset === 0 && size >= HEAD_PRINT) {
    t.copyChecked = true;
    if (await skipIfCopy(t, rd, size, buf, ctx)) return;
  }
  if (isSparse(st, t.offset)) {
    // The skip passes over the overlap check below: make it first (a copytruncate is still one).
    if (t.offset > 0 && !(await unchanged(t, rd, buf, false))) ctx.truncated(t);
    ctx.stats.sparseSkipped++;
    await skipTo(t, rd, size - ctx.headBytes, buf);
  }
  if (!(await readRange(t, rd, size, false, mtime, buf, ctx, true, TURN_BYTES))) {
    ctx.truncated(t);
    await readRange(t, rd, size, false, mtime, buf, ctx, false, TURN_BYTES);
  }
}

/** Whether the bytes before the offset (and, if asked, the head) are still what we read. */
async function unchanged(t: Tail, rd: ReadFn, buf: Buffer, checkHead: boolean): Promise<boolean> {
  const k = t.tailLen;
  if (k > 0) {
    const n = await rd(buf, 0, k, t.offset - k);
    if (n !== k || buf.compare(t.tailPrint, 0, k, 0, k) !== 0) return false;
  }
  const h = t.headLen;
  if (checkHead && h > 0) {
    const n = await rd(buf, 0, h, 0);
    if (n !== h || buf.compare(t.headPrint, 0, h, 0, h) !== 0) return false;
  }
  return true;
}

/**
 * A new file whose head is a followed file's head (a copy made by logrotate copytruncate or cp):
 * followed from its end, so its lines are not counted twice. Returns whether it was one.
 */
async function skipIfCopy(t: Tail, rd: ReadFn, size: number, buf: Buffer, ctx: ReadContext): Promise<boolean> {
  const n = await rd(buf, 0, HEAD_PRINT, 0);
  if (!ctx.heads.isCopy(buf, 0, n, Date.now())) return false;
  t.rememberHead(buf, 0, n, 0);
  ctx.stats.copiesSkipped++;
  await jumpToEnd(t, rd, size, buf, ctx);
  return true;
}

/** Goes on from the end of the file: only lines written from now on are read. */
async function jumpToEnd(t: Tail, rd: ReadFn, size: number, buf: Buffer, ctx: ReadContext): Promise<void> {
  t.splitter.reset();
  const k = Math.min(TAIL_PRINT, size);
  const n = await rd(buf, 0, k, size - k);
  if (n !== k) {
    ctx.truncated(t); // it shrank while we looked: read it as a new file
    return;
  }
  t.offset = size;
  t.tailLen = 0;
  t.rememberTail(buf, 0, k);
  if (buf[k - 1] !== 10) t.splitter.skipping = true;
}

/**
 * Whether what is left to read is mostly holes: over SPARSE_MIN_BYTES unread, with less than
 * 1/64 of the file's size allocated (`truncate -s 1T` allocates nothing; a compressing file
 * system such as ZFS stores text logs at 1/3 to 1/10). Read from its start, it would take hours.
 */
function isSparse(st: Stats, offset: number): boolean {
  return st.size - offset > SPARSE_MIN_BYTES && st.blocks * 512 < st.size / 64;
}

/**
 * Goes on from pos. Where the byte before it ends a line (a newline) or lies in a hole (NUL: a
 * writer without O_APPEND left one after a copytruncate, and its first line may start right
 * here), pos is a line start; else the bytes up to the next newline are a cut line and skipped.
 */
async function skipTo(t: Tail, rd: ReadFn, pos: number, buf: Buffer): Promise<void> {
  if (pos <= t.offset) return;
  const skipNul = t.splitter.skipNul;
  t.splitter.reset();
  const n = await rd(buf, 0, 1, pos - 1);
  const before = n === 1 ? buf[0] : 10;
  t.splitter.skipNul = skipNul || before === 0;
  t.splitter.skipping = before !== 10 && before !== 0;
  t.offset = pos;
  t.tailLen = 0;
}

/** A file that existed at start: its first headBytes (historical), then on from its end. */
async function readHead(t: Tail, rd: ReadFn, size: number, mtime: number, buf: Buffer, ctx: ReadContext): Promise<void> {
  t.headPending = false;
  t.mtimeMs = mtime;
  const limit = Math.min(size, ctx.headBytes);
  if (limit > 0) await readRange(t, rd, limit, true, mtime, buf, ctx, false, Infinity);
  if (size <= limit || t.removed) return;
  // Skip the middle: only new lines from here. The fragment of a line cut at the end is skipped too.
  await jumpToEnd(t, rd, size, buf, ctx);
}

/**
 * Reads [offset, limit) and hands its complete lines to the file's sink, chunk by chunk. With verify the
 * read starts tailLen bytes early and returns false if those differ from the tail fingerprint.
 */
async function readRange(
  t: Tail,
  rd: ReadFn,
  limit: number,
  historical: boolean,
  mtime: number,
  buf: Buffer,
  ctx: ReadContext,
  verify: boolean,
  budget: number,
): Promise<boolean> {
  const k = verify ? t.tailLen : 0;
  let pos = t.offset - k;
  let first = true;
  while (pos < limit) {
    const n = await rd(buf, 0, Math.min(buf.length, limit - pos), pos);
    if (n === 0 || t.removed) break; // shrank under us: the next look sorts it out
    let from = 0;
    if (first) {
      first = false;
      if (n < k || buf.compare(t.tailPrint, 0, k, 0, k) !== 0) return false;
      from = k;
    }
    const tooLong = t.splitter.tooLong;
    const sink = ctx.sinkFor(t, historical, mtime);
    let lines = 0;
    try {
      lines = t.splitter.pushTo(buf, from, n, sink);
    } catch {
      t.splitter.reset();
      t.splitter.skipping = true;
      ctx.sinkFailed(t);
    }
    ctx.stats.linesTooLong += t.splitter.tooLong - tooLong;
    t.rememberHead(buf, from, n, t.offset);
    if (t.indexedHead === null && t.headLen === HEAD_PRINT) {
      t.indexedHead = t.headPrint.toString("latin1");
      ctx.heads.add(t.indexedHead);
    }
    t.offset += n - from;
    pos += n;
    t.rememberTail(buf, from, n); // buf[0, from) is already the fingerprint
    ctx.stats.bytesRead += n - from;
    ctx.delivered(t, sink, lines);
    budget -= n;
    if (budget <= 0 && pos < limit) {
      ctx.requeue(t);
      break;
    }
  }
  return true;
}
