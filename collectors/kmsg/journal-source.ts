/**
 * The journal as the kmsg collector's source: one `journalctl -k -f` child at a time (journal.ts),
 * after the cursor where reading stopped. With -D, the system journal files there are checked
 * first (journal-files.ts): one journalctl would skip is a failure even while records come. The
 * source is published once journalctl reads (a record, or 2 s running), not while it may still
 * refuse and exit. Its exit withdraws the source, says why (failure-reasons.ts) and asks for a
 * restart, except where the device could not be opened and there is no journalctl either.
 */
import type { Exec, StreamExit, StreamHandle } from "../exec.js";
import { journalProblemReason, noSourceReason, skippedJournalsReason } from "./failure-reasons.js";
import type { HealthLog } from "./health-log.js";
import { unreadableSystemJournals } from "./journal-files.js";
import { followJournal, journalProblem } from "./journal.js";
import type { KmsgMetrics } from "./metrics.js";
import type { JournalRecord } from "./parse/journal-record.js";
import type { RestartBackoff } from "./restart-backoff.js";

/** How long journalctl must run before it counts as reading (when no record came). */
export const RUNNING_AFTER_MS = 2000;

export interface JournalSourceOptions {
  journalctl: string;
  /** journalctl -D directory; undefined: the system's journal. */
  directory?: string;
}

export interface JournalSourceHooks {
  onRecord(r: JournalRecord): void;
  /** The cursor to resume after, asked as journalctl starts. */
  cursor(): string | undefined;
  /** journalctl ended: start the sources again, later. */
  restart(): void;
  /** Whether the collector has been stopped. */
  stopped(): boolean;
}

export class JournalSource {
  private handle: StreamHandle | undefined;
  /** System journal files of the -D directory this process may not read: a failure even while records come. */
  private blocked: string | undefined;

  constructor(
    private readonly exec: Exec,
    private readonly o: JournalSourceOptions,
    private readonly metrics: KmsgMetrics,
    private readonly status: HealthLog,
    private readonly backoff: RestartBackoff,
    private readonly hooks: JournalSourceHooks,
  ) {}

  /** Whether a journalctl child is running. */
  get running(): boolean {
    return this.handle !== undefined;
  }

  /** Starts journalctl; `deviceReason`: why the device was not read, where it was tried first. */
  async start(deviceReason: string | undefined): Promise<void> {
    const dir = this.o.directory;
    const and = deviceReason !== undefined ? `; and ${deviceReason}` : "";
    this.blocked = undefined;
    if (dir !== undefined) {
      this.blocked = skippedJournalsReason(dir, await unreadableSystemJournals(dir), and);
      if (this.hooks.stopped()) return;
    }
    const cursor = this.hooks.cursor();
    let sourcePublished = false;
    const { handle } = followJournal(
      this.exec,
      {
        journalctl: this.o.journalctl,
        ...(dir !== undefined ? { directory: dir } : {}),
        ...(cursor !== undefined ? { afterCursor: cursor } : {}),
      },
      {
        onRecord: (r) => {
          if (this.handle === handle && !sourcePublished) {
            sourcePublished = true;
            this.metrics.setSource("journal");
          }
          if (!this.status.ok && this.blocked === undefined) {
            this.backoff.reset();
            this.status.set({ ok: true });
          }
          this.hooks.onRecord(r);
        },
        onExit: (exit) => this.exited(exit, deviceReason, and),
      },
    );
    this.handle = handle;
    // Healthy once a record arrives; the journal may hold none yet: treat a running child as ok.
    // Skipped system journal files are reported once journalctl runs: one that exits at once
    // (every file unreadable) says so itself.
    setTimeout(() => {
      if (this.handle !== handle) return;
      if (!sourcePublished) {
        sourcePublished = true;
        this.metrics.setSource("journal");
      }
      if (this.blocked !== undefined) this.status.set({ ok: false, reason: this.blocked });
      else if (!this.status.ok) this.status.set({ ok: true });
    }, RUNNING_AFTER_MS).unref();
  }

  /** Ends journalctl (on stop). */
  async kill(): Promise<void> {
    await this.handle?.kill();
  }

  private exited(exit: StreamExit, deviceReason: string | undefined, and: string): void {
    this.handle = undefined;
    this.metrics.setSource(undefined);
    if (this.hooks.stopped()) return;
    if (exit.notFound && deviceReason !== undefined) {
      this.status.set({ ok: false, ...noSourceReason(deviceReason, this.o.journalctl) });
      return;
    }
    const problem = journalProblem(exit.stderrTail);
    this.status.set({ ok: false, reason: problem !== undefined ? journalProblemReason(problem, this.o.directory) + and : exit.problem });
    this.hooks.restart();
  }
}
