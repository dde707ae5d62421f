/**
 * How far `ringwatch analyze` has read, on stderr, for inputs of more than PROGRESS_MIN_BYTES in
 * all and only when stderr is a terminal: one line redrawn in place at most every
 * PROGRESS_EVERY_MS, erased before any other stderr line and at the end. Bytes are those of the
 * files as they lie on disk (compressed, for a .gz); standard input does not count.
 */

/** Inputs smaller than this in all show no progress. */
export const PROGRESS_MIN_BYTES = 100_000_000;
/** The least time between two redraws. */
export const PROGRESS_EVERY_MS = 250;

/** `812 kB`, `12.4 MB`, `3.1 GB` (powers of 1000, as `ls -h --si` and most people read them). */
export function formatBytes(n: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  const digits = u === 0 || v >= 100 ? 0 : 1;
  return `${v.toFixed(digits)} ${units[u] ?? "B"}`;
}

export interface ProgressState {
  bytes: number;
  totalBytes: number;
  file: number;
  totalFiles: number;
}

/** The progress line: `ringwatch: analyze: read 1.2 GB of 3.4 GB (35%), file 12 of 40`. */
export function formatProgress(s: ProgressState): string {
  const pct = s.totalBytes > 0 ? Math.min(100, Math.floor((100 * s.bytes) / s.totalBytes)) : 0;
  return `ringwatch: analyze: read ${formatBytes(s.bytes)} of ${formatBytes(s.totalBytes)} (${pct}%), file ${s.file} of ${s.totalFiles}`;
}

const ERASE = "\r\x1b[K";

/** The progress line of one run; does nothing unless enabled and the inputs are large enough. */
export class Progress {
  private on = false;
  private readonly state: ProgressState = { bytes: 0, totalBytes: 0, file: 0, totalFiles: 0 };
  private drawn = false;
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly write: (s: string) => void,
    private readonly tty: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  /** The inputs are known: their total size and number. */
  start(totalBytes: number, totalFiles: number): void {
    this.on = this.tty && totalBytes > PROGRESS_MIN_BYTES;
    this.state.totalBytes = totalBytes;
    this.state.totalFiles = totalFiles;
  }

  /** The next file is being read. */
  nextFile(): void {
    this.state.file++;
    this.draw();
  }

  /** n more bytes were read. */
  add(n: number): void {
    this.state.bytes += n;
    this.draw();
  }

  /** Erases the line, so that another may be written; the next update (PROGRESS_EVERY_MS after the last) draws it again. */
  clear(): void {
    if (!this.drawn) return;
    this.write(ERASE);
    this.drawn = false;
  }

  private draw(): void {
    if (!this.on) return;
    const t = this.now();
    if (t - this.last < PROGRESS_EVERY_MS) return;
    this.last = t;
    this.write(`${ERASE}${formatProgress(this.state)}`);
    this.drawn = true;
  }
}
