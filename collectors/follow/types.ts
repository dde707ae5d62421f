/**
 * Public types of the log follower. See follower.ts for the behaviour; README.md next to this
 * file for how each file-system case (append, rotation, copytruncate, delete, symlink) is handled.
 */
import type { FsGate } from "../job-fs-gate.js";
import type { LineSink } from "./line-splitter.js";

/** Line-by-line consumer of one file's lines (see FollowerHandlers.openSink). */
export type { LineSink };

export interface FollowedFile {
  /** A path the file is currently reachable under (the first one seen; updated on rename). */
  path: string;
  dev: number;
  ino: number;
  /** Bumps when the same path is a new file or was truncated. Starts at 0 per path. */
  generation: number;
  /**
   * Whom the file is charged to (uid) for the caps shared among owners: the file's owner, or the
   * owner of the symlink (to it or to a folder above it) through which it was found.
   */
  uid: number;
}

export interface FollowerHandlers {
  /**
   * Complete lines (no newline, CR stripped) read from one file, in order. `historical` = read
   * from the head of a file that already existed at start (its times are unknown); mtimeMs = the
   * file's mtime at read.
   */
  onLines?(file: FollowedFile, lines: string[], meta: { historical: boolean; mtimeMs: number }): void;
  /**
   * Extension, replaces onLines when given: the sink that one chunk of the file's lines goes to,
   * line by line and in order, with an optional bytes() fast path that sees each line before it
   * is decoded. Called once per chunk; the sink may be reused across chunks.
   */
  openSink?(file: FollowedFile, meta: { historical: boolean; mtimeMs: number }): LineSink;
  /** Extension: a file or directory could not be read (EACCES...); the follower retries it on its sweeps. */
  onReadError?(path: string, code: string): void;
  /**
   * Extension: a look at the file (after the head was read) found nothing new; nothing written
   * before this call is unread. Lets a handler bracket when a later line was written.
   */
  onLook?(file: FollowedFile): void;
  onFileAdded?(file: FollowedFile): void;
  /**
   * Extension: a file was left out, or given up, for the file cap (filesDropped): path, and the
   * owner (uid) whose files the cap was full of. Once per path until the cap has room again.
   */
  onFileDropped?(path: string, uid: number): void;
  onFileRemoved?(file: FollowedFile): void;
  onTruncated?(file: FollowedFile): void;
}

export interface FollowerOptions {
  /**
   * Directories (every regular file below, depth <= maxDepth), files, or globs (`*`, `?`, `**`,
   * `[abc]`, `{a,b}`). The static prefix directory of a glob is watched and matched here.
   */
  paths: string[];
  /** Bytes read from the head of each file that exists at start; then it continues from its end. Default 256 KiB. */
  headBytes?: number;
  /** Lines longer than this (bytes) are skipped and counted, never buffered whole. Default 64 KiB. */
  maxLineBytes?: number;
  /** "auto" (default): inotify, polling on network/FUSE file systems or when watches fail. */
  usePolling?: boolean | "auto";
  /** Default 1000. */
  pollIntervalMs?: number;
  /** Every N ms stat every known path and read what events missed. Default 5000. */
  sweepIntervalMs?: number;
  /** Cap on followed files; further files are counted in filesDropped. Default 10000. */
  maxFiles?: number;
  /** Directory levels below a watched directory (or a glob's `**`). Default 4. */
  maxDepth?: number;
  /** Which files to follow. Default: skip hidden files and .gz .xz .zst .bz2 .lz4. */
  accept?: (path: string) => boolean;
  /**
   * Accepted for API compatibility but not used: the only clock the follower needs is compared
   * with file times (birth vs. start), which are wall-clock, so an injected clock would mislead it.
   */
  now?: () => number;
  /**
   * Extension: how long a file that no followed path names any more is kept (and read through its
   * open descriptor) before onFileRemoved, so a rename seen as unlink + add is not a new file. Default 1000.
   */
  removeGraceMs?: number;
  /**
   * Extension: positions from an earlier follower (keyed `dev:ino`), so that following other
   * paths (a reload) neither reads a known file's head again nor loses a partial line.
   */
  resume?: ReadonlyMap<string, ResumePoint>;
  /**
   * Extension: the gate every file-system call goes through (job-fs-gate.ts), so that a mount that
   * stops answering holds a bounded number of libuv's threads. Default: the process's one gate.
   */
  fsGate?: FsGate;
}

/**
 * Where a follower stood in one file (Follower.positions()): a new follower given it as
 * FollowerOptions.resume goes on from there instead of reading the file's head again.
 */
export interface ResumePoint {
  offset: number;
  generation: number;
  /** Fingerprints (copies) and the partial line not yet ended. */
  tail: Buffer;
  head: Buffer;
  partial: Buffer;
}

export interface FollowerStats {
  files: number;
  bytesRead: number;
  linesRead: number;
  linesTooLong: number;
  truncations: number;
  rotations: number;
  filesDropped: number;
  readErrors: number;
  /** Extension: new files recognised as copies of followed ones (logrotate copytruncate) and followed from their end. */
  copiesSkipped: number;
  polling: boolean;
  /** Extension: files mostly made of holes (`truncate -s 1T`) read from near their end instead of their start. */
  sparseSkipped: number;
  /** Extension: exceptions thrown by a handler (caught; the follower goes on). */
  handlerErrors: number;
}
