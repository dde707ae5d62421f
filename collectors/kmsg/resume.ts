/**
 * Reading resumes where it stopped. In the same boot (boot.ts), the position saved in the state
 * file (position.ts) is restored: kmsg records up to its sequence number are skipped, and
 * journalctl is started after its cursor. Every other record is handed on with its Unix time (the
 * boot's start plus the record's time since boot, or the journal's wall clock) and marked, so that
 * the keeper saves it. A journal record of another boot is skipped. A failed save is counted and
 * logged once per run of failures; where the default state file's directory does not exist, the
 * position is not kept (logged once, at info).
 */
import type { Logger } from "pino";
import { readBoot, type Boot } from "./boot.js";
import type { JournalRecord } from "./parse/journal-record.js";
import type { KmsgRecord } from "./parse/kmsg-record.js";
import { loadPosition, PositionKeeper, type Position } from "./position.js";

export interface ResumeOptions {
  procfsRoot: string;
  /** Where the position is kept; undefined: not kept (every start reads the whole buffer). */
  stateFile: string | undefined;
  /**
   * The state file's directory need not exist (the default, /var/lib/ringwatch, outside systemd's
   * StateDirectory= and the image): where it does not, the position is not kept, said once at info.
   */
  stateDirMayBeAbsent?: boolean;
  /** How often the position is saved while records arrive, ms. */
  saveEveryMs: number;
  now: () => number;
  logger: Logger;
  /** A kernel message to read, with its Unix time in ms. */
  onMessage(message: string, atMs: number): void;
  /** A write of the state file failed. */
  onSaveFailure(): void;
}

export class Resume {
  private boot: Boot = { id: "unknown", wallMs: 0 };
  private keeper: PositionKeeper | undefined;
  /** The position reading resumes from: restored from the state file, or kept at a source's restart. */
  private restored: Position | undefined;
  private loggedSaveFailure = false;

  constructor(private readonly o: ResumeOptions) {}

  /** Reads this boot and starts keeping the position. */
  async open(): Promise<void> {
    this.boot = await readBoot(this.o.procfsRoot, this.o.now);
    this.keeper = new PositionKeeper(
      this.o.stateFile,
      this.boot.id,
      this.o.saveEveryMs,
      (message, code) => {
        if (code === "ENOENT" && this.o.stateDirMayBeAbsent === true) {
          this.keeper?.stopKeeping();
          this.o.logger.info(
            { state_file: this.o.stateFile },
            `kmsg: ${message}: its directory does not exist, so the read position is not kept and a restart reads the kernel's buffer again (systemd's StateDirectory= and the image create it; --collector.kmsg.state-file names another file, or none)`,
          );
          return;
        }
        this.o.onSaveFailure();
        if (!this.loggedSaveFailure) this.o.logger.warn(`kmsg: ${message}; after a restart, records since the last good write are read again`);
        this.loggedSaveFailure = true;
      },
      () => {
        this.loggedSaveFailure = false;
      },
    );
  }

  /**
   * Loads the saved position (after open()); one of this boot is where reading resumes. Returns its
   * GPU recovery actions, to be published again; undefined when nothing was restored.
   */
  async restore(): Promise<Readonly<Record<string, number>> | undefined> {
    if (this.o.stateFile === undefined) return undefined;
    const { position, problem } = await loadPosition(this.o.stateFile);
    if (problem !== undefined) this.o.logger.warn(`kmsg: ${problem}; reading the whole kernel log buffer`);
    if (position === undefined || position.bootId !== this.boot.id || this.boot.id === "unknown") return undefined;
    this.restored = position;
    this.keeper?.restore(position);
    return position.recovery;
  }

  kmsgRecord(r: KmsgRecord): void {
    if (this.restored?.kmsgSeq !== undefined && r.seq <= this.restored.kmsgSeq) return;
    if (r.facility === 0) this.o.onMessage(r.message, this.boot.wallMs + r.usec / 1000);
    this.keeper?.markKmsg(r.seq);
  }

  journalRecord(r: JournalRecord): void {
    // journalctl -k shows this boot only; the check keeps a directory of another host's journal honest.
    const bootId = this.boot.id;
    if (r.bootId !== undefined && bootId !== "unknown" && r.bootId.replaceAll("-", "") !== bootId.replaceAll("-", "")) return;
    this.o.onMessage(r.message, r.realtimeMs ?? (r.usec !== undefined ? this.boot.wallMs + r.usec / 1000 : this.o.now()));
    this.keeper?.markJournal(r.cursor);
  }

  /** The journal cursor to start journalctl after, if any. */
  journalCursor(): string | undefined {
    return this.restored?.journalCursor ?? this.keeper?.position.journalCursor;
  }

  /** The driver's recovery action for a GPU changed: kept in the position. */
  markRecovery(pci: string, action: number): void {
    this.keeper?.markRecovery(pci, action);
  }

  /** Before a source is started again: what was read so far is not read again. */
  rewind(): void {
    this.restored = this.keeper?.position !== undefined ? { ...this.keeper.position } : this.restored;
  }

  /** --once: reads without keeping (or saving) a position. */
  forget(): void {
    this.keeper = undefined;
  }

  /** Saves the position now (on stop). */
  async flush(): Promise<void> {
    await this.keeper?.flush();
  }
}
