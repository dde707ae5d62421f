/**
 * Finds the files to follow: walks the patterns' root directories (readdir, as deep as the
 * patterns allow, through symlinked directories; a directory reached twice is walked once) and
 * reports files that appear and disappear. Each directory has a one-shot watch: its first event
 * closes it and schedules a rescan of that directory, which re-arms it first. (A persistent
 * directory watch would also fire on every write to every file in it.) Directories on file systems
 * without inotify, or whose watch failed, are rescanned by the poll loop; a root that does not
 * exist yet is looked for there too.
 */
import { watch, type Dir as Dir_, type FSWatcher, type Stats } from "node:fs";
import { lstat, opendir, stat } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { dirname, join } from "node:path";
import { isStalled, type FsGate } from "../job-fs-gate.js";
import { wanted, type PathPattern } from "./glob.js";

/**
 * Delay from a directory event to its rescan (plus a little per entry for big directories). An
 * entry created, deleted or renamed is looked at soon; a write to a file in the directory (which
 * a directory watch reports too) only means the watch must be re-armed, so that waits longer.
 */
const DIR_DELAY_MS = 100;
const DIR_BUSY_DELAY_MS = 1000;
const DIR_DELAY_PER_FILE_MS = 0.1;
/** New files stat()ed at once while a directory is walked. */
const STAT_BATCH = 32;
/**
 * A timed rescan (sweep, poll loop) of a directory waits this many times as long as its last scan
 * took: a folder flooded with 300,000 files is walked a few times a minute, not every sweep, and
 * costs the agent at most about 1/DUTY of a core. Events (a watch that fired) rescan as before.
 */
const DUTY = 20;
/** ... but never more than this apart (on a polled file system the timed rescans find new files). */
const MAX_GAP_MS = 60_000;
/** A listing that took longer than this is a costly one: a vanished file does not walk it again at once. */
const COSTLY_SCAN_MS = 50;

export interface DirSink {
  /** owner: whom the file is charged to for the file cap (a symlink's owner, not its target's). */
  added(path: string, st: Stats, owner: number): void;
  unlinked(path: string): void;
  known(path: string): boolean;
  /** Whether path is followed now (known, and not dropped for the file cap). */
  followed(path: string): boolean;
  /** Whether a known path now names another file than the one followed under it (st: what it names now). */
  replaced?(path: string, st: Stats): boolean;
  watchFailed(err: unknown): void;
  /** A directory could not be listed (EACCES...): it is looked at again on the next sweep. */
  unreadable?(path: string, code: string): void;
}

interface Dir {
  readonly path: string;
  readonly id: string;
  polled: boolean;
  watch: FSWatcher | null;
  timer: NodeJS.Timeout | null;
  /** The followed files found here (dropped ones are not kept: the registry remembers them). */
  files: Set<string>;
  /** Entries the last scan listed: an event's rescan waits longer for a big directory. */
  entries: number;
  subdirs: Set<string>;
  /** The scan in progress (a request meanwhile sets `again` and waits for the same promise). */
  running: Promise<void> | null;
  again: boolean;
  /** The next scan also stats the files it knows (a followed file may have been renamed over one). */
  statKnown: boolean;
  /** When the last scan ended, and how long its own listing took (performance.now() ms): timed rescans of a huge directory are spaced out. */
  scannedAtMs: number;
  scanCostMs: number;
  /**
   * Whom the files found here are charged to for the file cap: the owner of the symlink that led
   * here, if one did (a job user's link to a folder of root's files charges that user), else each
   * file's own owner (undefined).
   */
  owner: number | undefined;
}

export class DirWatcher {
  private readonly dirs = new Map<string, Dir>();
  /** dev:ino -> path of directories walked. */
  private readonly ids = new Map<string, string>();
  /** Roots and whether each is polled (file system without inotify). */
  private readonly roots = new Map<string, boolean>();
  private closed = false;

  constructor(
    private readonly patterns: readonly PathPattern[],
    private readonly accept: (path: string) => boolean,
    private readonly sink: DirSink,
    /** Every listing and stat goes through it (job-fs-gate.ts). */
    private readonly gate: FsGate,
  ) {}

  private stat(p: string): Promise<Stats | undefined> {
    return this.gate.run(p, () => stat(p)).catch(() => undefined);
  }

  /** Walks every root (polled: true = no watches below it). */
  async start(roots: ReadonlyMap<string, boolean>): Promise<void> {
    for (const [root, polled] of roots) {
      this.roots.set(root, polled);
      await this.scan(root, polled);
    }
  }

  /** Rescans every directory (sweep), or only those without a watch (poll loop); finds new roots. */
  async rescan(onlyPolled: boolean): Promise<void> {
    for (const [root, polled] of this.roots) if (!this.dirs.has(root)) await this.scan(root, polled);
    for (const d of [...this.dirs.values()]) {
      if (onlyPolled && !d.polled) continue;
      if (this.tooSoon(d)) continue;
      await this.scan(d.path, d.polled);
    }
  }

  /**
   * Rescans the directory holding path, if it is one we walk: a file there may have a new name,
   * possibly one that named another followed file (rename over it, as logrotate's `rotate 1`
   * does), so the known names are stat()ed too.
   */
  async rescanDirOf(path: string): Promise<void> {
    const d = this.dirs.get(dirname(path));
    if (d === undefined) return;
    d.statKnown = true;
    // A huge folder (a flood) is not walked again at every file that goes: its timed rescan comes.
    if (d.scanCostMs > COSTLY_SCAN_MS && this.tooSoon(d)) {
      this.fired(d, "rename");
      return;
    }
    await this.scan(d.path, d.polled);
  }

  /** Whether a timed rescan of d now would come sooner than its cost allows (DUTY). */
  private tooSoon(d: Dir): boolean {
    return performance.now() - d.scannedAtMs < Math.min(MAX_GAP_MS, DUTY * d.scanCostMs);
  }

  /** Whether path lies below a root on a file system without inotify. */
  isPolledPath(path: string): boolean {
    let best = -1;
    let polled = false;
    for (const [root, p] of this.roots) {
      if (root.length > best && (path === root || path.startsWith(root === "/" ? "/" : root + "/"))) {
        best = root.length;
        polled = p;
      }
    }
    return polled;
  }

  /** Whether some directory is polled for lack of inotify (stats). */
  get polling(): boolean {
    for (const d of this.dirs.values()) if (d.polled) return true;
    return false;
  }

  close(): void {
    this.closed = true;
    for (const d of this.dirs.values()) this.quiet(d);
    this.dirs.clear();
  }

  private async scan(path: string, polled: boolean, owner?: number): Promise<void> {
    let d = this.dirs.get(path);
    if (d === undefined) {
      const st = await this.stat(path);
      if (this.closed || st === undefined || !st.isDirectory() || this.dirs.has(path)) return;
      const id = `${st.dev}:${st.ino}`;
      if (this.ids.has(id)) return; // reached before under another name
      d = {
        path,
        id,
        polled,
        watch: null,
        timer: null,
        files: new Set(),
        entries: 0,
        subdirs: new Set(),
        running: null,
        again: false,
        statKnown: false,
        scannedAtMs: -Infinity,
        scanCostMs: 0,
        owner,
      };
      this.dirs.set(path, d);
      this.ids.set(id, path);
    }
    if (d.running !== null) {
      d.again = true;
      return d.running;
    }
    const dir = d;
    dir.running = (async () => {
      try {
        do {
          dir.again = false;
          await this.scanOnce(dir);
        } while (dir.again && !this.closed && this.dirs.get(path) === dir);
      } finally {
        dir.running = null;
      }
    })();
    return dir.running;
  }

  private async scanOnce(d: Dir): Promise<void> {
    if (!d.polled && d.watch === null) this.arm(d); // before readdir: nothing falls between
    // Streamed (opendir), and only followed paths are kept: a folder flooded with 300,000 names
    // costs a pass over them, not their Dirents and paths held at once.
    let handle: Dir_;
    try {
      handle = await this.gate.run(
        d.path,
        () => opendir(d.path, { bufferSize: 128 }),
        (late) => void late.close().catch(() => undefined),
      );
    } catch (e) {
      if (isStalled(e)) return; // its mount does not answer: what is known stays, looked at again later
      const code = (e as NodeJS.ErrnoException | null)?.code;
      if (code !== "ENOENT" && code !== "ENOTDIR") this.sink.unreadable?.(d.path, code ?? String(e));
      this.drop(d.path);
      return;
    }
    const statKnown = d.statKnown;
    d.statKnown = false;
    const files = new Set<string>();
    const subdirs = new Map<string, number | undefined>();
    const fresh: string[] = [];
    /** Owners of the symlinks among the entries (a link is charged to its owner, not its target's). */
    const linkOwner = new Map<string, number>();
    let entries = 0;
    let complete = true;
    const t0 = performance.now();
    const dir = handle;
    let stalled = false;
    try {
      for (;;) {
        const e = await this.gate.run(d.path, () => dir.read());
        if (e === null) break;
        entries++;
        const p = join(d.path, e.name);
        let isDir = e.isDirectory();
        let isFile = e.isFile();
        if (e.isSymbolicLink()) {
          if (!wanted(this.patterns, p, undefined)) continue;
          const [st, link] = await Promise.all([this.stat(p), this.gate.run(p, () => lstat(p)).catch(() => undefined)]);
          isDir = st?.isDirectory() ?? false;
          isFile = st?.isFile() ?? false;
          if (link !== undefined && d.owner === undefined) linkOwner.set(p, link.uid);
        }
        if (isDir && wanted(this.patterns, p, true)) subdirs.set(p, d.owner ?? linkOwner.get(p));
        else if (isFile && wanted(this.patterns, p, false) && this.accept(p)) {
          if (this.sink.followed(p)) {
            files.add(p);
            if (statKnown) fresh.push(p);
          } else if (!this.sink.known(p)) fresh.push(p);
        }
      }
    } catch (e) {
      // The listing broke off (the directory went, EIO, ESTALE): what it listed is added, and no
      // followed file counts as gone for not being listed; the directory is looked at again soon.
      complete = false;
      stalled = isStalled(e);
      const code = (e as NodeJS.ErrnoException | null)?.code;
      if (code !== "ENOENT" && code !== "ENOTDIR" && !stalled) this.sink.unreadable?.(d.path, code ?? String(e));
    }
    // After a read abandoned on a mount that does not answer, the close waits behind it: not awaited.
    const closed = dir.close().catch(() => undefined);
    if (!stalled) await closed;
    d.scanCostMs = performance.now() - t0;
    d.scannedAtMs = performance.now();
    if (this.closed) return;
    // New files are stat()ed STAT_BATCH at a time: one after the other, a directory of thousands
    // took seconds of thread-pool round trips before the first head read.
    for (let i = 0; i < fresh.length && !this.closed; i += STAT_BATCH) {
      const batch = fresh.slice(i, i + STAT_BATCH);
      const stats = await Promise.all(batch.map((p) => this.stat(p)));
      batch.forEach((p, k) => {
        const st = stats[k];
        if (st?.isFile() !== true || this.closed) return;
        if (!this.sink.known(p) || this.sink.replaced?.(p, st) === true) this.sink.added(p, st, d.owner ?? linkOwner.get(p) ?? st.uid);
        if (this.sink.followed(p)) files.add(p);
      });
    }
    for (const p of d.files) {
      if (files.has(p)) continue;
      if (complete) this.sink.unlinked(p);
      else if (this.sink.followed(p)) files.add(p);
    }
    d.files = files;
    d.entries = entries;
    if (complete) {
      for (const s of d.subdirs) if (!subdirs.has(s)) this.drop(s);
    }
    d.subdirs = complete ? new Set(subdirs.keys()) : new Set([...d.subdirs, ...subdirs.keys()]);
    for (const [s, owner] of subdirs) if (!this.dirs.has(s)) await this.scan(s, d.polled, owner);
    if (!complete) this.fired(d, "rename");
  }

  private arm(d: Dir): void {
    // inotify_add_watch looks the path up on the main thread: a mount that does not answer is polled.
    if (this.gate.notAnswering(d.path) !== undefined) {
      d.polled = true;
      return;
    }
    try {
      const w = watch(d.path, (event) => this.fired(d, event));
      w.on("error", () => this.fired(d, "rename"));
      d.watch = w;
    } catch (e) {
      d.polled = true;
      this.sink.watchFailed(e);
    }
  }

  private fired(d: Dir, event: string): void {
    if (d.watch !== null) d.watch.close();
    d.watch = null;
    if (d.timer !== null || this.closed) return;
    const delay = (event === "rename" ? DIR_DELAY_MS : DIR_BUSY_DELAY_MS) + d.entries * DIR_DELAY_PER_FILE_MS;
    d.timer = setTimeout(() => {
      d.timer = null;
      void this.scan(d.path, d.polled);
    }, delay);
  }

  /** A directory is gone: its files are unlinked, its subdirectories dropped too. */
  private drop(path: string): void {
    const d = this.dirs.get(path);
    if (d === undefined) return;
    this.quiet(d);
    this.dirs.delete(path);
    this.ids.delete(d.id);
    for (const p of d.files) this.sink.unlinked(p);
    for (const s of d.subdirs) this.drop(s);
  }

  private quiet(d: Dir): void {
    if (d.watch !== null) d.watch.close();
    if (d.timer !== null) clearTimeout(d.timer);
    d.watch = null;
    d.timer = null;
  }
}
