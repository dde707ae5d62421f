/**
 * Which communicators a source calls hung, from one evaluation to the next: a hang that begins is
 * logged once (warn, with the source's own fields), one that ends once (info). Every source that
 * calls hangs logs its transitions through one of these.
 */
import type { Logger } from "pino";

/** A log line: its structured fields and its message. */
export interface HangLine {
  fields: Record<string, unknown>;
  message: string;
}

export class HangTransitions<V> {
  private readonly hung = new Set<string>();

  /**
   * @param began the line for a communicator whose hang begins, from the source's verdict
   * @param ended the line for one that is no longer hung
   */
  constructor(
    private readonly log: Logger,
    private readonly began: (verdict: V) => HangLine,
    private readonly ended: (key: string) => HangLine,
  ) {}

  /** The verdicts of one evaluation, by communicator, of the communicators hung now. */
  update(hungNow: ReadonlyMap<string, V>): void {
    for (const [key, v] of hungNow) {
      if (this.hung.has(key)) continue;
      const line = this.began(v);
      this.log.warn(line.fields, line.message);
    }
    for (const key of this.hung) {
      if (hungNow.has(key)) continue;
      const line = this.ended(key);
      this.log.info(line.fields, line.message);
    }
    this.hung.clear();
    for (const key of hungNow.keys()) this.hung.add(key);
  }

  /** Some communicator is hung (as of the last update). */
  get any(): boolean {
    return this.hung.size > 0;
  }
}
