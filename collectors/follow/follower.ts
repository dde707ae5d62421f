/**
 * The NCCL log follower: configured paths -> complete lines per file, in order. Directories are
 * walked and watched by dir-watch.ts, files tracked by inode in registry.ts, told apart from idle
 * by change-watch.ts, and read by byte offset in reader.ts / line-splitter.ts; sweep.ts catches
 * what events missed. README.md explains how each file-system case is handled.
 */
import type { Stats } from "node:fs";
import { ChangeWatcher } from "./change-watch.js";
import { CollectingSink } from "./collecting-sink.js";
import { DirWatcher } from "./dir-watch.js";
import { FdCache } from "./fd-cache.js";
import { HeadIndex } from "./head-index.js";
import { needsPolling } from "./fs-type.js";
import { compilePaths, wanted } from "./glob.js";
import { resolveOptions, type ResolvedOptions } from "./options.js";
import { WorkQueue } from "./queue.js";
import { readTail, type ReadContext } from "./reader.js";
import { Registry, type RegistryHost } from "./registry.js";
import { checkPath, Sweeper } from "./sweep.js";
import { birthOf, idOf, type StartMode, type Tail } from "./tail-state.js";
import { TrustRoots } from "../untrusted-open.js";
import type { FollowerHandlers, FollowerOptions, FollowerStats, ResumePoint } from "./types.js";

export type { FollowedFile, FollowerHandlers, FollowerOptions, FollowerStats, LineSink, ResumePoint } from "./types.js";

/** Files read in parallel (one reused buffer each): a stalled NFS read does not stop the rest. */
const READ_SLOTS = 4;
/** Bytes per read() call. */
const READ_CHUNK = 512 * 1024;
/** A file found after start but born this long before it counts as existing (head, then its end). */
const BIRTH_SLACK_MS = 1000;

export class Follower {
  private readonly o: ResolvedOptions;
  private readonly counters: FollowerStats = {
    files: 0,
    bytesRead: 0,
    linesRead: 0,
    linesTooLong: 0,
    truncations: 0,
    rotations: 0,
    filesDropped: 0,
    readErrors: 0,
    copiesSkipped: 0,
    polling: false,
    handlerErrors: 0,
    sparseSkipped: 0,
  };
  private readonly fds: FdCache;
  private readonly registry: Registry;
  private readonly queue: WorkQueue<Tail>;
  private readonly ctx: ReadContext;
  private readonly sweeper: Sweeper;
  private readonly changes: ChangeWatcher;
  private dirs: DirWatcher | null = null;
  private buffers: Buffer[] = [];
  private timers: NodeJS.Timeout[] = [];
  private sweeping: Promise<void> | null = null;
  private polling: Promise<void> | null = null;
  /** Some file or directory has no watch (not counting usePolling: true). */
  private watchLost = false;
  private initial = true;
  private state: "new" | "started" | "stopped" = "new";
  private startedAt = 0;
  private headWaiters: (() => void)[] = [];
  private readonly heads = new HeadIndex();
  /** The patterns' roots, set by start(): what a symlinked file must lie in (or share its link's owner). */
  private readonly roots = new TrustRoots([]);
  /** FollowerOptions.resume entries not yet claimed by a file. */
  private readonly resumeLeft: Map<string, ResumePoint>;

  constructor(
    opts: FollowerOptions,
    private readonly handlers: FollowerHandlers,
  ) {
    this.o = resolveOptions(opts);
    this.fds = new FdCache(this.o.fsGate);
    this.resumeLeft = new Map(this.o.resume);
    this.registry = new Registry(this.host());
    this.queue = new WorkQueue(READ_SLOTS, (t, slot) => this.work(t, slot));
    this.ctx = this.readContext();
    this.sweeper = new Sweeper(this.registry, (t) => this.queue.add(t), this.o.fsGate);
    this.changes = this.changeWatcher(this.o.usePolling !== true);
  }

  /** Walks and watches the paths; resolves once every existing file's head has been read. */
  async start(): Promise<void> {
    if (this.state !== "new") throw new Error("Follower: start() can be called once");
    this.state = "started";
    // Wall clock, not opts.now: it is compared with file birth times, which are wall-clock.
    this.startedAt = Date.now();
    this.buffers = Array.from({ length: READ_SLOTS }, () => Buffer.allocUnsafe(READ_CHUNK));
    const patterns = await compilePaths(this.o.paths, this.o.maxDepth);
    const roots = new Map<string, boolean>();
    this.roots.set(
      patterns.map((p) => p.root),
      (p) => wanted(patterns, p, false),
    );
    for (const p of patterns) {
      roots.set(p.root, this.o.usePolling === "auto" ? await needsPolling(p.root, this.o.fsGate) : this.o.usePolling);
    }
    const reg = this.registry;
    this.dirs = new DirWatcher(
      patterns,
      this.o.accept,
      {
        added: (p, st) => reg.added(p, st),
        unlinked: (p) => reg.unlinked(p),
        known: (p) => reg.byPath.has(p) || reg.isDropped(p),
        followed: (p) => reg.byPath.has(p),
        replaced: (p, st) => {
          const t = reg.byPath.get(p);
          return t !== undefined && !t.sameFile(st);
        },
        watchFailed: () => (this.watchLost = true),
        unreadable: (path, code) => this.readFailed(path, code),
      },
      this.o.fsGate,
    );
    await this.dirs.start(roots);
    this.initial = false;
    if (this.registry.headsPending > 0 && this.state === "started") {
      await new Promise<void>((resolve) => this.headWaiters.push(resolve));
    }
    if (this.state !== "started") return;
    this.timers.push(setInterval(() => void this.sweep(), this.o.sweepIntervalMs));
    this.timers.push(setInterval(() => void this.poll(), this.o.pollIntervalMs));
  }

  async stop(): Promise<void> {
    if (this.state === "stopped") return;
    this.state = "stopped";
    for (const t of this.timers) clearInterval(t);
    this.dirs?.close();
    this.registry.quiesce();
    this.queue.stop();
    this.releaseHeadWaiters();
    await this.queue.idle();
    await Promise.all([this.sweeping, this.polling]);
    this.fds.closeAll();
  }

  /** Where it stands in every followed file (keyed `dev:ino`), for FollowerOptions.resume. */
  positions(): Map<string, ResumePoint> {
    const out = new Map<string, ResumePoint>();
    for (const [id, t] of this.registry.byId) if (!t.removed && !t.headPending) out.set(id, t.resumePoint());
    return out;
  }

  stats(): FollowerStats {
    const polling = this.o.usePolling === true || this.watchLost || (this.dirs?.polling ?? false);
    return { ...this.counters, files: this.registry.byId.size, polling };
  }

  /** Reads pending data of every file now (tests, --once): a sweep, then until the queue is empty. */
  async flush(): Promise<void> {
    if (this.state !== "started") return;
    await this.sweeping;
    await this.sweep("full");
    await this.queue.idle();
  }

  /** Paths and directories: what events missed. */
  private sweep(kind: "all" | "full" = "all"): Promise<void> {
    this.sweeping ??= (async () => {
      await this.sweeper.run(kind);
      await this.dirs?.rescan(false);
    })().finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  /** Files and directories without a watch (and roots that do not exist yet). */
  private poll(): Promise<void> {
    this.polling ??= (async () => {
      await this.sweeper.run("polled");
      await this.dirs?.rescan(true);
    })().finally(() => (this.polling = null));
    return this.polling;
  }

  private async work(t: Tail, slot: number): Promise<void> {
    const offset = t.offset;
    const generation = t.file.generation;
    // A read abandoned on a mount that does not answer may still write into its buffer: a new one.
    if (await readTail(t, this.buffers[slot] as Buffer, this.ctx)) this.buffers[slot] = Buffer.allocUnsafe(READ_CHUNK);
    if (t.finalize && t.paths.size === 0) this.registry.remove(t);
    if (t.headCounted) {
      // First attempt done (read, or failed: an unreadable file must not hold start() up).
      t.headCounted = false;
      this.registry.headsPending--;
    }
    if (this.registry.headsPending <= 0) this.releaseHeadWaiters();
    if (this.state === "started") this.changes.afterRead(t, t.offset !== offset || t.file.generation !== generation);
  }

  private releaseHeadWaiters(): void {
    const w = this.headWaiters;
    this.headWaiters = [];
    for (const resolve of w) resolve();
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch {
      this.counters.handlerErrors++;
    }
  }

  private readFailed(path: string, code: string): void {
    this.counters.readErrors++;
    this.call(() => this.handlers.onReadError?.(path, code));
  }

  private startMode(st: Stats): StartMode {
    if (this.initial) return "head";
    const born = birthOf(st);
    return born > 0 && born < this.startedAt - BIRTH_SLACK_MS ? "head" : "start";
  }

  /** What t's paths name now (a rename or delete event, or a new path for a followed file). */
  private verify(t: Tail): void {
    for (const p of [...t.paths]) void checkPath(this.registry, p, (x) => this.queue.add(x), this.o.fsGate);
  }

  private changeWatcher(enabled: boolean): ChangeWatcher {
    return new ChangeWatcher(
      {
        enqueue: (t) => this.queue.add(t),
        verify: (t) => this.verify(t),
        watchFailed: () => (this.watchLost = true),
        notAnswering: (path) => this.o.fsGate.notAnswering(path) !== undefined,
      },
      enabled,
    );
  }

  private host(): RegistryHost {
    return {
      stats: this.counters,
      handlers: this.handlers,
      maxFiles: this.o.maxFiles,
      heads: this.heads,
      maxLineBytes: this.o.maxLineBytes,
      removeGraceMs: this.o.removeGraceMs,
      accept: this.o.accept,
      startMode: (st) => this.startMode(st),
      takeResume: (st) => {
        const id = idOf(st);
        const r = this.resumeLeft.get(id);
        this.resumeLeft.delete(id);
        return r;
      },
      onPollingFs: (p) => this.dirs?.isPolledPath(p) ?? false,
      enqueue: (t) => this.queue.add(t),
      watchFile: (t) => {
        if (this.state === "started") this.changes.arm(t);
      },
      forgetFile: (t) => {
        this.changes.forget(t);
        // A read in flight closes it itself (readTail's finally): closing under it could hand its
        // fd number to another file before the read runs.
        if (!t.busy) this.fds.close(t);
      },
      verify: (t) => this.verify(t),
      pathGone: (t, p) => this.changes.pathGone(t, p),
      orphaned: (p) => {
        if (this.state === "started") void this.dirs?.rescanDirOf(p);
      },
      orphanExpired: (t, p) => {
        void (async () => {
          await this.dirs?.rescanDirOf(p);
          if (t.paths.size > 0 || t.removed || this.state !== "started") return;
          t.finalize = true;
          this.queue.add(t); // last read through the fd, then removed (work())
        })();
      },
      call: (fn) => this.call(fn),
    };
  }

  private readContext(): ReadContext {
    const reg = this.registry;
    return {
      headBytes: this.o.headBytes,
      stats: this.counters,
      fds: this.fds,
      sinkFor: (t, historical, mtimeMs) => {
        const h = this.handlers;
        if (h.openSink !== undefined) return h.openSink(t.file, { historical, mtimeMs });
        return new CollectingSink(historical, mtimeMs);
      },
      delivered: (t, sink, n) => {
        this.counters.linesRead += n;
        if (!(sink instanceof CollectingSink) || sink.lines.length === 0) return;
        const file = t.file;
        this.call(() => this.handlers.onLines?.(file, sink.lines, { historical: sink.historical, mtimeMs: sink.mtimeMs }));
      },
      sinkFailed: () => {
        this.counters.handlerErrors++;
      },
      readFailed: (path, code) => this.readFailed(path, code),
      heads: this.heads,
      roots: this.roots,
      gate: this.o.fsGate,
      truncated: (t) => reg.truncated(t),
      pathGone: (p) => reg.unlinked(p),
      pathReplaced: (p, st) => reg.added(p, st),
      requeue: (t) => this.queue.add(t),
      looked: (t) => this.handlers.onLook?.(t.file),
      unlinked: (t) => this.verify(t),
    };
  }
}
