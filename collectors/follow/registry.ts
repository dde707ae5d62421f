/**
 * Paths and inodes. A followed file is keyed by (dev, ino): a path that shows an inode already
 * followed is that file under a new name (rename, a symlink, a second matching pattern) and keeps
 * its offset; a path that shows a new inode is a new file, read from its start. A file no followed
 * path names any more is an orphan: it is still read through its open fd for removeGraceMs (a
 * rename may be seen as "old path gone" before "new path found"), then its directory is looked at
 * once more, and only then is it removed (onFileRemoved).
 */
import type { Stats } from "node:fs";
import { idlest, OwnerShares } from "../owner-shares.js";
import type { HeadIndex } from "./head-index.js";
import { idOf, Tail, type StartMode } from "./tail-state.js";
import type { FollowedFile, FollowerHandlers, FollowerStats, ResumePoint } from "./types.js";

export interface RegistryHost {
  readonly stats: FollowerStats;
  readonly handlers: FollowerHandlers;
  readonly maxFiles: number;
  readonly maxLineBytes: number;
  readonly removeGraceMs: number;
  /** Heads of followed files (copies are recognised by them). */
  readonly heads: HeadIndex;
  accept(path: string): boolean;
  /** How a file seen now starts: "head" (existed at start) or "start" (new). */
  startMode(st: Stats): StartMode;
  /** Where an earlier follower stood in this file, if it followed it (taken once). */
  takeResume(st: Stats): ResumePoint | undefined;
  /** path is below a root on a file system without inotify. */
  onPollingFs(path: string): boolean;
  enqueue(t: Tail): void;
  /** t is new: start watching it. */
  watchFile(t: Tail): void;
  /** t goes: stop its watch and timers, close its fd. */
  forgetFile(t: Tail): void;
  /** t gained a path while it has others: check that they still name it (rename vs alias). */
  verify(t: Tail): void;
  /** path no longer names t. */
  pathGone(t: Tail, path: string): void;
  /**
   * t has had no path for removeGraceMs (path was its last one): look for a new name once more
   * (its directory's rescan may still be pending), then set t.finalize and queue t for removal.
   */
  orphanExpired(t: Tail, path: string): void;
  /** t just lost its last path (path): its directory should be looked at soon. */
  orphaned?(path: string): void;
  call(fn: () => void): void;
}

export class Registry {
  readonly byPath = new Map<string, Tail>();
  readonly byId = new Map<string, Tail>();
  /** Last generation per path (also remembers paths that had a file: recreate = rotation). */
  private readonly gens = new Map<string, number>();
  /** Paths left out for the file cap, by keyed hash (DroppedPaths): not stat()ed again while it is full. */
  private readonly dropped = new DroppedPaths();
  /** Followed files per owner (uid): the cap is shared among owners, not taken by whoever writes first. */
  private readonly perOwner = new OwnerShares();
  /** Tails whose head read is still to do. */
  headsPending = 0;

  constructor(private readonly host: RegistryHost) {}

  /** A file is (or may be) at path now. */
  /** owner: whom the file is charged to for the cap (default: the file's owner; a symlink's owner where the walk found one). */
  added(path: string, st: Stats, owner = st.uid): void {
    if (!st.isFile() || !this.host.accept(path)) return;
    let t = this.byId.get(idOf(st));
    if (t !== undefined && !t.sameFile(st)) {
      this.remove(t); // its inode number was freed and reused: the old file is gone
      t = undefined;
    }
    const cur = this.byPath.get(path);
    if (cur !== undefined && cur !== t) this.detach(path, cur);
    if (t !== undefined) {
      if (cur !== t) {
        const others = t.paths.size > 0;
        this.attach(path, t);
        if (others) this.host.verify(t);
      }
      this.host.enqueue(t);
      return;
    }
    this.create(path, st, owner);
  }

  unlinked(path: string): void {
    const t = this.byPath.get(path);
    if (t !== undefined) this.detach(path, t);
  }

  truncated(t: Tail): void {
    this.unindex(t);
    t.rewind();
    t.splitter.skipNul = true;
    const generation = t.file.generation + 1;
    t.file = { ...t.file, generation };
    for (const p of t.paths) this.gens.set(p, generation);
    this.host.stats.truncations++;
    const file = t.file;
    this.host.call(() => this.host.handlers.onTruncated?.(file));
  }

  private unindex(t: Tail): void {
    if (t.indexedHead === null) return;
    this.host.heads.retire(t.indexedHead, Date.now());
    t.indexedHead = null;
  }

  /** Whether path was dropped for the maxFiles cap and there is still no room (no need to stat it). */
  isDropped(path: string): boolean {
    return this.byId.size >= this.host.maxFiles && this.dropped.has(path);
  }

  /** Forgets t now (onFileRemoved). A partial last line is dropped. */
  remove(t: Tail): void {
    if (t.removed) return;
    t.removed = true;
    if (t.headCounted) this.headsPending--;
    t.headCounted = false;
    if (t.orphanTimer !== null) clearTimeout(t.orphanTimer);
    for (const p of t.paths) this.byPath.delete(p);
    t.paths.clear();
    this.byId.delete(`${t.file.dev}:${t.file.ino}`);
    this.perOwner.remove(t.file.uid);
    this.unindex(t);
    this.host.forgetFile(t);
    const file = t.file;
    this.host.call(() => this.host.handlers.onFileRemoved?.(file));
  }

  /** Ends every timer and watch (stop). */
  quiesce(): void {
    for (const t of this.byId.values()) {
      if (t.orphanTimer !== null) clearTimeout(t.orphanTimer);
      t.orphanTimer = null;
      this.host.forgetFile(t);
    }
  }

  private create(path: string, st: Stats, owner: number): void {
    if (this.byId.size >= this.host.maxFiles && !this.makeRoomFor(owner)) {
      if (!this.dropped.has(path)) {
        this.host.stats.filesDropped++;
        this.dropped.add(path);
        this.host.call(() => this.host.handlers.onFileDropped?.(path, owner));
      }
      return;
    }
    const resume = this.host.takeResume(st);
    if (this.gens.has(path)) this.host.stats.rotations++;
    const generation = resume?.generation ?? (this.gens.get(path) ?? -1) + 1;
    this.setGen(path, Math.max(generation, this.gens.get(path) ?? -1));
    const file: FollowedFile = { path, dev: st.dev, ino: st.ino, generation, uid: owner };
    const mode = resume !== undefined ? "start" : this.host.startMode(st);
    const t = new Tail(file, st, mode, this.host.maxLineBytes, this.host.onPollingFs(path));
    if (resume !== undefined) t.resumeFrom(resume);
    else if (mode === "head") {
      t.headCounted = true;
      this.headsPending++;
    }
    this.byId.set(idOf(st), t);
    this.perOwner.add(owner);
    t.paths.add(path);
    this.byPath.set(path, t);
    this.dropped.delete(path);
    this.host.call(() => this.host.handlers.onFileAdded?.(file));
    this.host.watchFile(t);
    this.host.enqueue(t);
  }

  /**
   * The cap is full and a file of owner uid is new: an owner with at least two more files gives
   * way (owner-shares.ts), its least recently written file (empty ones first), counted as dropped.
   */
  private makeRoomFor(uid: number): boolean {
    const heavy = this.perOwner.yielderTo(uid);
    if (heavy === undefined) return false;
    const victim = idlest(this.byId.values(), (t) => t.file.uid === heavy && !t.busy, idler);
    if (victim === undefined) return false;
    const path = victim.paths.values().next().value ?? victim.file.path;
    this.host.stats.filesDropped++;
    this.dropped.add(path);
    this.host.call(() => this.host.handlers.onFileDropped?.(path, heavy));
    this.remove(victim);
    return true;
  }

  private attach(path: string, t: Tail): void {
    t.paths.add(path);
    this.byPath.set(path, t);
    this.setGen(path, Math.max(this.gens.get(path) ?? -1, t.file.generation));
    if (t.orphanTimer !== null) clearTimeout(t.orphanTimer);
    t.orphanTimer = null;
    t.finalize = false;
    if (!t.paths.has(t.file.path)) t.file = { ...t.file, path }; // renamed
  }

  private detach(path: string, t: Tail): void {
    t.paths.delete(path);
    this.byPath.delete(path);
    this.host.pathGone(t, path);
    const next = t.paths.values().next().value;
    if (next !== undefined) {
      if (t.file.path === path) t.file = { ...t.file, path: next };
      return;
    }
    if (t.orphanTimer !== null) clearTimeout(t.orphanTimer);
    t.orphanTimer = setTimeout(() => {
      t.orphanTimer = null;
      if (t.paths.size === 0 && !t.removed) this.host.orphanExpired(t, path);
    }, this.host.removeGraceMs);
    t.orphanTimer.unref();
    this.host.enqueue(t); // read what was appended before it went (through the fd, if open)
    // Renamed (rotation) rather than deleted? Look at its directory now rather than when the dir
    // watch next fires: on a busy directory that can be a second away, and a file renamed over
    // meanwhile (the next rotation) would take its unread lines with it.
    this.host.orphaned?.(path);
  }

  private setGen(path: string, g: number): void {
    this.gens.set(path, g);
    if (this.gens.size <= 4 * this.host.maxFiles) return;
    for (const p of this.gens.keys()) {
      if (this.gens.size <= 2 * this.host.maxFiles) break;
      if (!this.byPath.has(p)) this.gens.delete(p);
    }
  }
}

/** Whether a is a better file to give way than b: empty before written, then the older mtime. */
function idler(a: Tail, b: Tail): boolean {
  const ea = a.offset === 0;
  const eb = b.offset === 0;
  if (ea !== eb) return ea;
  return a.mtimeMs < b.mtimeMs;
}

/**
 * Paths dropped for the cap, remembered as 52-bit hashes keyed with a per-process random seed
 * (a job user cannot make a legitimate log's name collide with a dropped one, and 1,000,000 of
 * them collide with a new name about once in 4,500,000,000): 300,000 flooded names cost a few
 * MB, not their strings. At most MAX_DROPPED are kept; then the set starts anew.
 */
class DroppedPaths {
  static readonly MAX_DROPPED = 1_000_000;
  private readonly seeds = [(Math.random() * 0x100000000) >>> 0, (Math.random() * 0x100000000) >>> 0] as const;
  private readonly set = new Set<number>();

  has(path: string): boolean {
    return this.set.has(this.key(path));
  }

  add(path: string): void {
    if (this.set.size >= DroppedPaths.MAX_DROPPED) this.set.clear();
    this.set.add(this.key(path));
  }

  delete(path: string): void {
    this.set.delete(this.key(path));
  }

  /** Two seeded 32-bit hashes, 32 + 20 bits of them (a safe integer). */
  private key(path: string): number {
    return murmur(path, this.seeds[0]) * 0x100000 + (murmur(path, this.seeds[1]) & 0xfffff);
  }
}

/** murmur3's 32-bit mix over UTF-16 code units, seeded. */
function murmur(s: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= s.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
