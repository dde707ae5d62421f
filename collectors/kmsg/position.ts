/**
 * Where reading stopped, kept in a small file so that a restarted agent reads no record twice:
 * the boot it belongs to, the last /dev/kmsg sequence number and the last journal cursor. A new
 * boot starts over (sequence numbers restart at 0). Saved by writing a temporary file and
 * renaming it over the old one, at most every few seconds and on stop.
 */
import { readFile, rename, writeFile } from "node:fs/promises";

export interface Position {
  bootId: string;
  /** Last kmsg record handled. */
  kmsgSeq?: number;
  /** Cursor of the last journal record handled. */
  journalCursor?: string;
  /** The driver's latest GPU recovery action (Xid 154) per GPU PCI address, where not 0. */
  recovery?: Record<string, number>;
}

/** Reads a saved position; undefined when there is none or it is unreadable (logged by the caller). */
export async function loadPosition(file: string): Promise<{ position?: Position; problem?: string }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? {} : { problem: `cannot read ${file}: ${code ?? String(err)}` };
  }
  try {
    const o = JSON.parse(text) as Partial<Record<keyof Position, unknown>>;
    if (typeof o.bootId !== "string" || o.bootId.length === 0) return { problem: `${file}: no boot id` };
    const p: Position = { bootId: o.bootId };
    if (typeof o.kmsgSeq === "number" && Number.isSafeInteger(o.kmsgSeq) && o.kmsgSeq >= 0) p.kmsgSeq = o.kmsgSeq;
    if (typeof o.journalCursor === "string" && o.journalCursor.length > 0) p.journalCursor = o.journalCursor;
    if (typeof o.recovery === "object" && o.recovery !== null) {
      const r = Object.entries(o.recovery).filter((e): e is [string, number] => typeof e[1] === "number" && Number.isInteger(e[1]) && e[1] > 0 && e[1] < 256);
      if (r.length > 0 && r.length <= 256) p.recovery = Object.fromEntries(r);
    }
    return { position: p };
  } catch {
    return { problem: `${file}: not a saved position (ignored)` };
  }
}

export async function savePosition(file: string, p: Position): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, JSON.stringify(p) + "\n", { mode: 0o600 });
  await rename(tmp, file);
}

/** Debounced saving: mark() after each handled record, flush() on stop. */
export class PositionKeeper {
  private current: Position;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> | undefined;

  constructor(
    private file: string | undefined,
    bootId: string,
    private readonly everyMs: number,
    private readonly onFailure: (message: string, code: string | undefined) => void,
    private readonly onSaved: () => void,
  ) {
    this.current = { bootId };
  }

  /** No more saves (the state file's directory is not there, and need not be). */
  stopKeeping(): void {
    this.file = undefined;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  get position(): Readonly<Position> {
    return this.current;
  }

  restore(p: Position): void {
    this.current = { ...p };
  }

  markKmsg(seq: number): void {
    this.current.kmsgSeq = seq;
    this.touch();
  }

  markJournal(cursor: string): void {
    this.current.journalCursor = cursor;
    this.touch();
  }

  /** The driver's recovery action for a GPU changed (0: none, forgotten). */
  markRecovery(pci: string, action: number): void {
    const r = { ...(this.current.recovery ?? {}) };
    if (action === 0) delete r[pci];
    else r[pci] = action;
    if (Object.keys(r).length > 0) this.current.recovery = r;
    else delete this.current.recovery;
    this.touch();
  }

  async flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.saving !== undefined) await this.saving;
    if (this.dirty) await this.save();
  }

  private touch(): void {
    this.dirty = true;
    if (this.file === undefined || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, this.everyMs);
    this.timer.unref();
  }

  private save(): Promise<void> {
    if (this.file === undefined) return Promise.resolve();
    const file = this.file;
    this.dirty = false;
    const snapshot = { ...this.current };
    this.saving = savePosition(file, snapshot)
      .then(
        () => this.onSaved(),
        (err: unknown) => {
          this.dirty = true;
          const code = (err as NodeJS.ErrnoException).code;
          this.onFailure(`cannot save the kernel log position to ${file}: ${code ?? String(err)}`, code);
        },
      )
      .finally(() => {
        this.saving = undefined;
      });
    return this.saving;
  }
}
