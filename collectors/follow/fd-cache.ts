/**
 * A small LRU of open descriptors. Thousands of followed files must not hold thousands of fds,
 * but the few files being written are read many times a second: keeping their fd saves the
 * open/close pair per read, and lets the follower drain a file that was renamed away or deleted
 * (the writer keeps its own fd open too). Busy tails are never closed under a running read.
 */
import { close } from "node:fs";
import type { FsGate } from "../job-fs-gate.js";
import type { Tail } from "./tail-state.js";

export const MAX_OPEN_FDS = 64;

export function closeQuietly(fd: number): void {
  close(fd, () => undefined);
}

export class FdCache {
  /** Tails with an open fd, least recently used first. */
  private readonly open = new Set<Tail>();

  /** Closes go through gate (a close on a mount that does not answer would hold a thread). */
  constructor(
    private readonly gate?: FsGate,
    private readonly max = MAX_OPEN_FDS,
  ) {}

  /** Marks t (whose fd is open) as just used, then closes idle ones beyond the cap. */
  use(t: Tail): void {
    this.open.delete(t);
    this.open.add(t);
    if (this.open.size <= this.max) return;
    for (const old of this.open) {
      if (this.open.size <= this.max) break;
      if (old !== t && !old.busy) this.close(old);
    }
  }

  close(t: Tail): void {
    if (t.fd !== null) {
      if (this.gate !== undefined) this.gate.close(t.file.path, t.fd);
      else closeQuietly(t.fd);
    }
    t.fd = null;
    this.open.delete(t);
  }

  closeAll(): void {
    for (const t of this.open) this.close(t);
  }
}
