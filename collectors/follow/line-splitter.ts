/**
 * Raw bytes -> complete lines, for one file. Hot path: newlines are found with Buffer.indexOf(10)
 * on the bytes, each line is decoded once (UTF-8, invalid bytes become U+FFFD) straight from the
 * read buffer, and no regex or per-line object is involved. A chunk that is all ASCII (NCCL logs
 * are) is decoded as Latin-1, which gives the same string and is about 35% faster. A sink with a
 * bytes() fast path sees each line as bytes first and most lines are never decoded at all
 * (the nccl collector's COLL lines, see coll-bytes.ts). Only a line cut by the end of a read
 * is copied (into `pending`, at most maxLineBytes + 1 bytes); a longer line switches to skipping
 * until its newline, so it is never held whole.
 */

import { isAscii } from "node:buffer";

type Slicers = {
  utf8Slice?: (start: number, end: number) => string;
  latin1Slice?: (start: number, end: number) => string;
};
// Buffer#utf8Slice / #latin1Slice are what toString(enc, s, e) calls after its argument checks;
// calling them directly is about 30% faster per line. Fall back to toString if a runtime lacks them.
const P = Buffer.prototype as Slicers;
const FAST = typeof P.utf8Slice === "function" && typeof P.latin1Slice === "function";

/** buf[s, e) as text: Latin-1 when known ASCII (faster, same result), else UTF-8. */
export function decode(b: Buffer, s: number, e: number, ascii: boolean): string {
  if (!FAST) return b.toString(ascii ? "latin1" : "utf8", s, e);
  const f = b as unknown as Required<Slicers>;
  return ascii ? f.latin1Slice(s, e) : f.utf8Slice(s, e);
}

const ZEROS = Buffer.alloc(4096);

/** Where a splitter delivers lines, in order. */
export interface LineSink {
  /**
   * Optional fast path: a complete line in buf[s, e) (no newline, CR stripped), before any decoding.
   * Return true when it was handled; false hands it to line() as text. buf ends at the chunk's end.
   */
  bytes?(buf: Buffer, s: number, e: number): boolean;
  /**
   * Optional, ahead of bytes() for lines inside one read: the line that starts at s, in a buffer
   * whose data ends at `end`. When the sink handles it and finds its end itself (a sink that
   * validates every byte of the line anyway), returns the index of its newline (`\n`, after an
   * optional `\r`); else -1 and the splitter finds the end and hands the line to line() as text.
   * It must decline a line longer than `max` bytes without its CR (the splitter counts those).
   */
  lineAt?(buf: Buffer, s: number, end: number, max: number): number;
  line(text: string): void;
}

/** Index of the first non-NUL byte in buf[i, end), or end. */
export function firstNonZero(buf: Buffer, i: number, end: number): number {
  while (end - i >= ZEROS.length && buf.compare(ZEROS, 0, ZEROS.length, i, i + ZEROS.length) === 0) i += ZEROS.length;
  while (i < end && buf[i] === 0) i++;
  return i;
}

/** Pending buffers larger than this are released once their line is complete. */
const KEEP_PENDING = 16 * 1024;

export class LineSplitter {
  private pending: Buffer | null = null;
  private pendingLen = 0;
  /** Discarding up to the next newline: an over-long line, or a line we joined in the middle. */
  skipping = false;
  /** Discarding NUL bytes before the first data: the hole a non-append writer leaves after copytruncate. */
  skipNul = false;
  /** Lines skipped for being longer than the limit (monotonic). */
  tooLong = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Appends the complete lines in buf[start, end) (after what earlier calls left) to out. */
  push(buf: Buffer, start: number, end: number, out: string[]): void {
    this.pushTo(buf, start, end, { line: (text) => out.push(text) });
  }

  /**
   * Hands the complete lines in buf[start, end) (after what earlier calls left) to sink, in order:
   * each to sink.bytes first when it has one, decoded to sink.line when that declines. Returns how
   * many lines were handed over.
   */
  pushTo(buf: Buffer, start: number, end: number, sink: LineSink): number {
    let i = start;
    if (this.skipNul) {
      i = firstNonZero(buf, i, end);
      if (i === end) return 0;
      this.skipNul = false;
    }
    // indexOf has no end bound: a view keeps it off stale bytes past `end` in a reused buffer.
    const view = end === buf.length ? buf : buf.subarray(0, end);
    if (this.skipping) {
      const nl = view.indexOf(10, i);
      if (nl === -1) return 0;
      this.skipping = false;
      i = nl + 1;
    }
    let n = 0;
    if (this.pendingLen > 0) {
      const nl = view.indexOf(10, i);
      if (nl === -1) {
        this.keep(view, i, end);
        return 0;
      }
      n += this.finishPending(view, i, nl, sink);
      i = nl + 1;
    }
    const max = this.maxLineBytes;
    const ascii = i < end && isAscii(view.subarray(i, end));
    const fast = sink.bytes !== undefined && sink.lineAt === undefined ? (sink as Required<LineSink>) : undefined;
    const scan = sink.lineAt !== undefined ? (sink as Required<LineSink>) : undefined;
    while (i < end) {
      if (scan !== undefined) {
        const at = scan.lineAt(view, i, end, max);
        if (at >= 0) {
          n++;
          i = at + 1;
          continue;
        }
      }
      const nl = view.indexOf(10, i);
      if (nl === -1) break;
      let e = nl;
      if (e > i && view[e - 1] === 13) e--;
      if (e - i > max) this.tooLong++;
      else {
        n++;
        if (fast === undefined || !fast.bytes(view, i, e)) sink.line(decode(view, i, e, ascii));
      }
      i = nl + 1;
    }
    if (i < end) this.keep(view, i, end);
    return n;
  }

  /** A copy of the incomplete line buffered (empty when there is none or it is being skipped). */
  partial(): Buffer {
    return this.pending === null || this.skipping ? Buffer.alloc(0) : Buffer.from(this.pending.subarray(0, this.pendingLen));
  }

  /** Starts with `bytes` as the beginning of the next line (the partial() of another splitter). */
  preload(bytes: Buffer): void {
    this.reset();
    if (bytes.length > 0) this.keep(bytes, 0, bytes.length);
  }

  /** Whether an incomplete line is buffered. */
  hasPartial(): boolean {
    return this.pendingLen > 0;
  }

  /** Forgets any partial line and skip state (truncation, jump to the end). */
  reset(): void {
    this.pending = null;
    this.pendingLen = 0;
    this.skipping = false;
    this.skipNul = false;
  }

  private keep(buf: Buffer, from: number, to: number): void {
    const need = this.pendingLen + (to - from);
    // +1: the line may still end in a CR that is not part of it.
    if (need > this.maxLineBytes + 1) {
      this.tooLong++;
      this.pending = this.pending !== null && this.pending.length > KEEP_PENDING ? null : this.pending;
      this.pendingLen = 0;
      this.skipping = true;
      return;
    }
    this.ensure(need);
    buf.copy(this.pending as Buffer, this.pendingLen, from, to);
    this.pendingLen = need;
  }

  private finishPending(buf: Buffer, from: number, nl: number, sink: LineSink): number {
    let len = this.pendingLen + (nl - from);
    let n = 0;
    if (len <= this.maxLineBytes + 1) {
      this.ensure(len);
      const p = this.pending as Buffer;
      buf.copy(p, this.pendingLen, from, nl);
      if (len > 0 && p[len - 1] === 13) len--;
      if (len > this.maxLineBytes) this.tooLong++;
      else {
        n = 1;
        // The pending buffer may be longer than the line: bytes() gets a view that ends with it.
        if (sink.bytes === undefined || !sink.bytes(p.subarray(0, len), 0, len)) sink.line(decode(p, 0, len, false));
      }
    } else {
      this.tooLong++;
    }
    this.pendingLen = 0;
    if (this.pending !== null && this.pending.length > KEEP_PENDING) this.pending = null;
    return n;
  }

  private ensure(n: number): void {
    const p = this.pending;
    if (p !== null && p.length >= n) return;
    const grown = Buffer.allocUnsafe(Math.min(Math.max(n, 256, (p?.length ?? 0) * 2), this.maxLineBytes + 1));
    if (p !== null) p.copy(grown, 0, 0, this.pendingLen);
    this.pending = grown;
  }
}
