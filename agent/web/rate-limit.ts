/** rate_limit of the web config: a token bucket, one token per interval, at most `burst` (Go's rate.Limiter). */
export class RateLimiter {
  private tokens: number;
  private lastMs: number;

  constructor(
    private readonly intervalMs: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.lastMs = now();
  }

  /** Takes a token if one is there. */
  allow(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.lastMs) / this.intervalMs);
    this.lastMs = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
