/**
 * The first HEAD_PRINT bytes of every followed file, to recognise a copy: logrotate's copytruncate
 * (and `cp`) make a new file in the followed directory (`nccl-h-12.log.1`) with bytes already read
 * from the original. A new file whose head equals a followed file's head, or the head a file had
 * before it was truncated (kept RECENT_MS), is such a copy: it is followed from its end, so its
 * collectives are not counted twice. NCCL logs start with `host:pid:tid`, so two ranks' files never
 * share a head.
 */
import { HEAD_PRINT } from "./tail-state.js";

const RECENT_MS = 10 * 60_000;
const MAX_RECENT = 256;

export class HeadIndex {
  /** Head text (latin1 of the full print) → followed files with it. */
  private readonly current = new Map<string, number>();
  /** Heads of files since truncated or removed → when. */
  private readonly recent = new Map<string, number>();

  /** A full head print of a followed file. */
  add(head: string): void {
    this.current.set(head, (this.current.get(head) ?? 0) + 1);
  }

  /** That file was truncated or removed: its head stays known for a while. */
  retire(head: string, nowMs: number): void {
    const n = this.current.get(head) ?? 0;
    if (n <= 1) this.current.delete(head);
    else this.current.set(head, n - 1);
    if (this.recent.size >= MAX_RECENT) this.recent.delete(this.recent.keys().next().value as string);
    this.recent.set(head, nowMs);
  }

  /** Whether bytes (at least HEAD_PRINT of them, from a new file's start) copy a known head. */
  isCopy(buf: Buffer, from: number, to: number, nowMs: number): boolean {
    if (to - from < HEAD_PRINT) return false;
    const head = buf.toString("latin1", from, from + HEAD_PRINT);
    if (this.current.has(head)) return true;
    const at = this.recent.get(head);
    return at !== undefined && nowMs - at <= RECENT_MS;
  }
}
