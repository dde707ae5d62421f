/**
 * The kmsg collector's health, as the runner reads it, and its one log line per failure: a failure
 * is logged when it is new (info when the source is absent, else warn), not again while the same
 * one repeats (at each restart of journalctl), and again after the collector was healthy or
 * starting in between. Also when the source was last read (lastSuccessMs).
 */
import type { Logger } from "pino";
import type { CollectorHealth } from "../collector.js";

export class HealthLog {
  private current: CollectorHealth = { ok: false, starting: true, reason: "starting" };
  /** The failure last logged: the same one again is not logged again. */
  private loggedReason: string | undefined;
  /** When the source was last read to its end (kmsg) or last known running (journal). */
  private lastReadMs: number | undefined;

  constructor(private readonly logger: Logger) {}

  get ok(): boolean {
    return this.current.ok;
  }

  set(h: CollectorHealth): void {
    this.current = h;
    if (h.ok || h.starting) {
      this.loggedReason = undefined;
      return;
    }
    if (h.reason === this.loggedReason) return;
    this.loggedReason = h.reason;
    const msg = `kmsg: ${h.reason ?? "failed"}`;
    if (h.absent) this.logger.info(msg);
    else this.logger.warn(msg);
  }

  /** The source was read (or known running) at `atMs`. */
  read(atMs: number): void {
    this.lastReadMs = atMs;
  }

  /** The health as last set, with when the source was last read. */
  health(): CollectorHealth {
    return this.lastReadMs !== undefined ? { ...this.current, lastSuccessMs: this.lastReadMs } : this.current;
  }
}
