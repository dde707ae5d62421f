/**
 * Bounds what a file system that stops answering can take from the agent (docs/security.md).
 *
 * Node runs every file-system call on libuv's small shared pool of threads (UV_THREADPOOL_SIZE, 4
 * by default). A call on a hard-mounted NFS whose server is gone, or on a FUSE file system whose
 * daemon hangs, holds its thread until the server answers: hours, maybe. Without a bound, the
 * follower's reads, stats and listings of one such mount took the whole pool, and every other
 * file the agent reads (the other log folders, sysfs, /proc) waited behind them: a new hang was
 * never seen, and the agent could not even exit.
 *
 * So every call on a path a job names runs through a gate:
 * - at most `perMount` calls in flight on one mount, and `total` on all: the threads one dead
 *   file system can hold, and the threads always left to the rest of the agent;
 * - a call still running after `stallMs` is abandoned: its caller gets an ESTALLED error at once
 *   (the call keeps its thread; its late result goes to `late`, so an fd is still closed), and its
 *   mount is *not answering*: calls there fail with ESTALLED at once, without a thread, until every
 *   abandoned call has returned;
 * - descriptors are closed through the gate too (a close on such a mount waits for the server as
 *   well), and on a mount that is not answering only once it answers again.
 */
import { close } from "node:fs";
import { performance } from "node:perf_hooks";
import { MountTable } from "./mount-table.js";

/** A call that did not return within stallMs, or was not run since its mount does not answer. */
export class StalledError extends Error {
  readonly code = "ESTALLED";
  constructor(
    readonly mount: string,
    path: string,
  ) {
    super(`${path}: the file system at ${mount} is not answering`);
  }
}

export function isStalled(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === "ESTALLED";
}

export interface FsGateOptions {
  /** Calls in flight on one mount. */
  perMount: number;
  /** Calls in flight on all mounts. */
  total: number;
  /** A call running this long is abandoned and its mount is not answering. */
  stallMs: number;
  mounts?: { mountOf(path: string): string };
}

/** A mount that does not answer: since when, and the path of the first call abandoned there. */
export interface NotAnswering {
  mount: string;
  path: string;
  sinceMs: number;
}

interface Mount {
  name: string;
  inFlight: number;
  /** Calls abandoned and not yet returned. */
  abandoned: number;
  stalled: NotAnswering | null;
  /** Descriptors to close once the mount answers again. */
  closeLater: number[];
}

interface Waiter {
  mount: Mount;
  path: string;
  start: () => void;
  refuse: (e: Error) => void;
}

/** The gate's size for a thread pool of `pool` threads: two always left to the rest of the agent. */
export function gateSizeFor(pool: number): Pick<FsGateOptions, "perMount" | "total"> {
  const total = Math.max(1, pool - 2);
  return { total, perMount: Math.max(1, Math.floor(total / 2)) };
}

/** libuv's pool size: UV_THREADPOOL_SIZE where it was set before the process started, else 4. */
export function threadPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.UV_THREADPOOL_SIZE);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, 1024) : 4;
}

export class FsGate {
  private readonly mounts = new Map<string, Mount>();
  private readonly waiting: Waiter[] = [];
  private inFlight = 0;
  private readonly table: { mountOf(path: string): string };
  private readonly listeners: ((mount: string, now: NotAnswering | null) => void)[] = [];

  constructor(private readonly o: FsGateOptions) {
    this.table = o.mounts ?? new MountTable();
  }

  /**
   * Runs op, a file-system call on path, when its mount has room. Rejects with StalledError at once
   * where the mount does not answer, or once op has run stallMs; op's late value then goes to late.
   */
  run<T>(path: string, op: () => Promise<T>, late?: (value: T) => void): Promise<T> {
    const m = this.mount(path);
    if (m.stalled !== null) return Promise.reject(new StalledError(m.name, path));
    return new Promise<T>((resolve, reject) => {
      const start = (): void => this.start(m, path, op, late, resolve, reject);
      if (this.hasRoom(m)) start();
      else this.waiting.push({ mount: m, path, start, refuse: reject });
    });
  }

  /** Closes fd (opened on path) through the gate; on a mount that does not answer, once it answers again. */
  close(path: string, fd: number): void {
    const m = this.mount(path);
    if (m.stalled !== null) {
      m.closeLater.push(fd);
      return;
    }
    let started = false;
    this.run(path, () => {
      started = true;
      return closeAsync(fd);
    }).catch(() => {
      // Refused before it ran (the mount stopped answering while it waited): closed once it answers.
      if (!started) m.closeLater.push(fd);
    });
  }

  /** Whether path's mount does not answer now. */
  notAnswering(path: string): NotAnswering | undefined {
    return this.mounts.get(this.table.mountOf(path))?.stalled ?? undefined;
  }

  /** The mounts that do not answer now. */
  stalledMounts(): NotAnswering[] {
    return [...this.mounts.values()].flatMap((m) => (m.stalled !== null ? [m.stalled] : []));
  }

  /** Calls running now, abandoned or not: exit() waits for each (one may hang before it counts as abandoned). */
  get busy(): number {
    return this.inFlight;
  }

  /** Calls abandoned that still hold a thread: the process cannot end by exit() while any does. */
  get abandoned(): number {
    let n = 0;
    for (const m of this.mounts.values()) n += m.abandoned;
    return n;
  }

  /** Called when a mount stops answering (now: what) and when it answers again (now: null). */
  onChange(listener: (mount: string, now: NotAnswering | null) => void): void {
    this.listeners.push(listener);
  }

  private mount(path: string): Mount {
    const name = this.table.mountOf(path);
    let m = this.mounts.get(name);
    if (m === undefined) {
      m = { name, inFlight: 0, abandoned: 0, stalled: null, closeLater: [] };
      this.mounts.set(name, m);
    }
    return m;
  }

  private hasRoom(m: Mount): boolean {
    return m.inFlight < this.o.perMount && this.inFlight < this.o.total;
  }

  private start<T>(
    m: Mount,
    path: string,
    op: () => Promise<T>,
    late: ((value: T) => void) | undefined,
    resolve: (v: T) => void,
    reject: (e: unknown) => void,
  ): void {
    m.inFlight++;
    this.inFlight++;
    let abandoned = false;
    const timer = setTimeout(() => {
      abandoned = true;
      m.abandoned++;
      this.stall(m, path);
      reject(new StalledError(m.name, path));
    }, this.o.stallMs);
    timer.unref();
    let p: Promise<T>;
    try {
      p = op();
    } catch (e) {
      p = Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    p.then(
      (v) => {
        if (!abandoned) resolve(v);
        else late?.(v);
      },
      (e: unknown) => {
        if (!abandoned) reject(e);
      },
    ).finally(() => {
      clearTimeout(timer);
      m.inFlight--;
      this.inFlight--;
      if (abandoned) {
        m.abandoned--;
        if (m.abandoned === 0) this.answered(m);
      }
      this.pump();
    });
  }

  private stall(m: Mount, path: string): void {
    if (m.stalled !== null) return;
    m.stalled = { mount: m.name, path, sinceMs: performance.now() };
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i] as Waiter;
      if (w.mount !== m) continue;
      this.waiting.splice(i, 1);
      w.refuse(new StalledError(m.name, w.path));
    }
    for (const l of this.listeners) l(m.name, m.stalled);
  }

  private answered(m: Mount): void {
    if (m.stalled === null) return;
    m.stalled = null;
    for (const l of this.listeners) l(m.name, null);
    const fds = m.closeLater;
    m.closeLater = [];
    for (const fd of fds) this.close(m.name, fd);
  }

  private pump(): void {
    for (let i = 0; i < this.waiting.length && this.inFlight < this.o.total;) {
      const w = this.waiting[i] as Waiter;
      if (!this.hasRoom(w.mount)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      w.start();
    }
  }
}

function closeAsync(fd: number): Promise<void> {
  return new Promise((resolve) => close(fd, () => resolve()));
}

/**
 * How long one call may run before its mount counts as not answering. A local disk answers in
 * milliseconds and a busy NFS server in well under a second; NFS's own first retransmission of a
 * hard mount comes after 60 s (timeo=600).
 */
export const STALL_MS = 10_000;

/** The process's one gate for the files jobs name: libuv's pool is one per process. */
export const jobFsGate = new FsGate({ ...gateSizeFor(threadPoolSize()), stallMs: STALL_MS });
