/**
 * Log lines for files the follower cannot read or refuses (EACCES, ENOTREG, EFOREIGN): one per
 * path every READ_ERROR_LOG_MS, and at most LINES_PER_MINUTE in all. A job user who plants 10,000
 * FIFOs gets a few lines and a count, not 10,000 lines at every sweep
 * (ringwatch_nccl_log_read_errors_total counts every one).
 */
import type { Logger } from "pino";

const READ_ERROR_LOG_MS = 10 * 60_000;
const LINES_PER_MINUTE = 20;
/** Paths remembered; the oldest goes first. */
const MAX_PATHS = 4096;

export class ReadErrorLog {
  private readonly logged = new Map<string, number>();
  private minuteStart = -Infinity;
  private lines = 0;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  failed(path: string, code: string, words?: string): void {
    const t = this.now();
    const last = this.logged.get(path);
    if (last !== undefined && t - last < READ_ERROR_LOG_MS) return;
    if (t - this.minuteStart >= 60_000) {
      if (this.suppressed > 0)
        this.log.warn(
          { suppressed: this.suppressed },
          `nccl: ${this.suppressed} more log files could not be read or were refused in the last minute (not logged one by one)`,
        );
      this.minuteStart = t;
      this.lines = 0;
      this.suppressed = 0;
    }
    if (this.lines >= LINES_PER_MINUTE) {
      this.suppressed++;
      return;
    }
    this.lines++;
    this.logged.delete(path);
    this.logged.set(path, t);
    if (this.logged.size > MAX_PATHS) this.logged.delete(this.logged.keys().next().value as string);
    this.log.warn({ path, code }, `nccl: cannot read ${path}: ${code}${words !== undefined ? ` (${words})` : ""}; retrying`);
  }
}
