/**
 * Files waiting to be read. A file is queued at most once however many events arrive for it
 * (events coalesce while it waits), a file is never read by two slots at once, and a few slots
 * run in parallel so one slow file system (a stalled NFS server) does not stop every other file.
 */
export class WorkQueue<T> {
  private readonly dirty = new Set<T>();
  private readonly active = new Set<T>();
  private readonly free: number[] = [];
  private waiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    slots: number,
    private readonly work: (item: T, slot: number) => Promise<void>,
  ) {
    for (let i = slots - 1; i >= 0; i--) this.free.push(i);
  }

  add(item: T): void {
    if (this.stopped) return;
    this.dirty.add(item);
    this.pump();
  }

  get pending(): number {
    return this.dirty.size + this.active.size;
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops what is queued; idle() resolves once running work ends. */
  stop(): void {
    this.stopped = true;
    this.dirty.clear();
  }

  private pump(): void {
    while (this.free.length > 0) {
      const item = this.next();
      if (item === undefined) break;
      const slot = this.free.pop() as number;
      this.dirty.delete(item);
      this.active.add(item);
      void this.work(item, slot)
        .catch(() => undefined)
        .finally(() => {
          this.active.delete(item);
          this.free.push(slot);
          this.pump();
          if (this.pending === 0) {
            const w = this.waiters;
            this.waiters = [];
            for (const resolve of w) resolve();
          }
        });
    }
  }

  private next(): T | undefined {
    for (const item of this.dirty) if (!this.active.has(item)) return item;
    return undefined;
  }
}
