/**
 * When a failed source is tried again: one restart pending at a time, after a delay that doubles
 * at each restart (1 s up to 60 s for the kmsg collector) and goes back to the first once the
 * source reads again (reset()).
 */
export class RestartBackoff {
  private delayMs: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.delayMs = minMs;
  }

  /** The delay the next schedule() waits. */
  get nextDelayMs(): number {
    return this.delayMs;
  }

  /** Runs `restart` after the current delay, unless a restart is pending already; doubles the delay. */
  schedule(restart: () => void): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      restart();
    }, this.delayMs);
    this.timer.unref();
    this.delayMs = Math.min(this.maxMs, this.delayMs * 2);
  }

  /** The source reads again: the next restart waits the first delay. */
  reset(): void {
    this.delayMs = this.minMs;
  }

  /** Cancels a pending restart (on stop). */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
  }
}
