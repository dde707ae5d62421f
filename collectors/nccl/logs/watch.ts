/**
 * The logs source's watcher: follows the files of --collector.nccl.path (collectors/follow/), gives
 * each file its sink (ingest/file-sink.ts: COLL lines on bytes, the rest through parse/line.ts) and
 * folds what they say into the tracker; retires the processes and ranks that are gone. It keeps no
 * verdict: those are the pure functions of detect/, asked by the collector with the tracker.
 *
 * Nothing is published before the heads of existing files are read and settled (`started`): a
 * count from a head that did not reach the file's end would be withdrawn right after. Whether each
 * configured path is there is looked at before the follower starts and at every housekeeping
 * (path-state.ts).
 */
import { stat } from "node:fs/promises";
import type { Logger } from "pino";
import { Follower, type FollowedFile, type ResumePoint } from "../../follow/follower.js";
import { DEFAULT_MAX_FILES } from "../../follow/options.js";
import type { FollowerStats } from "../../follow/types.js";
import { REFUSAL_WORDS } from "../../untrusted-open.js";
import { CapWarnings } from "./cap-warnings.js";
import type { NodeView } from "./detect/verdict.js";
import { FileSink } from "./ingest/file-sink.js";
import { LogPaths, type LogPathState } from "./path-state.js";
import { ReadErrorLog } from "./read-error-log.js";
import { Tracker } from "./state/tracker.js";
import { jobFsGate } from "../../job-fs-gate.js";

export interface LogsWatchOptions {
  /** Directories or globs to follow (--collector.nccl.path). */
  paths: string[];
  usePolling: boolean | "auto";
  /** How much of an existing file's end is read at start. */
  headBytes: number;
  /** Processes whose liveness cannot be checked are retired after this long without a line (ms). */
  retireAfterMs: number;
  /** How long a dead or torn-down rank is kept before its series go (ms). */
  retireGraceMs: number;
  maxComms: number;
  /** Follower sweep/poll intervals (tests). */
  sweepIntervalMs?: number;
  pollIntervalMs?: number;
  now: () => number;
  log: Logger;
  /** Configured paths whose absence from the start is normal (the default): logged at info. */
  quietWhenMissing?: ReadonlySet<string>;
  /** Each look at the configured paths: their states (ringwatch_nccl_log_path_state). */
  onPathStates?: (states: ReadonlyMap<string, LogPathState>) => void;
}

/** The tracker's bounds for a communicator cap. */
function trackerLimits(maxComms: number): { maxComms: number; maxProcesses: number } {
  return { maxComms, maxProcesses: Math.max(4096, maxComms * 8) };
}

export class LogsWatch {
  readonly tracker: Tracker;
  private follower: Follower | undefined;
  /** Why following failed (no log directory, ...); undefined while it works. */
  private failure: string | undefined;
  private startedMs: number | undefined;
  private stopped = false;
  private refollowing: Promise<void> = Promise.resolve();
  /** Per followed file (dev:ino:generation): its sink, which knows its writer and line count. */
  private readonly sinks = new Map<string, FileSink>();
  /** Files read from their head at start, to settle once the start is done. */
  private readonly historicalFiles = new Set<string>();
  private readonly caps: CapWarnings;
  private readonly readErrors: ReadErrorLog;
  /** Whether each configured path is there. */
  readonly logPaths: LogPaths;

  constructor(private readonly o: LogsWatchOptions) {
    this.tracker = new Tracker(trackerLimits(o.maxComms));
    this.caps = new CapWarnings(o.log);
    this.readErrors = new ReadErrorLog(o.log, o.now);
    this.logPaths = new LogPaths({
      paths: o.paths,
      log: o.log,
      quietWhenMissing: o.quietWhenMissing ?? new Set(),
      onLook: (states) => o.onPathStates?.(states),
    });
  }

  /** The heads of the files found at start are read and settled. */
  get started(): boolean {
    return this.startedMs !== undefined;
  }

  get failed(): string | undefined {
    return this.failure;
  }

  stats(): FollowerStats | undefined {
    return this.follower?.stats();
  }

  /** Other settings (a reload): paths or polling changed start a new follower that goes on where the old one stood in every file. */
  setOptions(n: Pick<LogsWatchOptions, "paths" | "usePolling" | "retireAfterMs" | "maxComms">): boolean {
    const refollow = n.paths.join("\n") !== this.o.paths.join("\n") || n.usePolling !== this.o.usePolling;
    if (n.paths.join("\n") !== this.o.paths.join("\n")) this.logPaths.setPaths(n.paths);
    this.o.paths = [...n.paths];
    this.o.usePolling = n.usePolling;
    this.o.retireAfterMs = n.retireAfterMs;
    this.o.maxComms = n.maxComms;
    this.tracker.setLimits(trackerLimits(n.maxComms));
    if (refollow) this.refollow();
    return refollow;
  }

  async start(resume?: ReadonlyMap<string, ResumePoint>): Promise<void> {
    await this.logPaths.look();
    const follower = this.makeFollower(resume);
    this.follower = follower;
    try {
      await follower.start();
      await this.settleHistory();
      this.failure = undefined;
      this.startedMs = this.o.now();
      this.o.log.info({ paths: this.o.paths, files: follower.stats().files, polling: follower.stats().polling }, "nccl: following logs");
    } catch (err) {
      this.failure = `cannot follow ${this.o.paths.join(", ")}: ${err instanceof Error ? err.message : String(err)}`;
      this.o.log.warn({ reason: this.failure }, "nccl: log follower failed");
    }
  }

  /** `--once`: every file read to its end, then stopped. */
  async once(): Promise<void> {
    await this.start();
    await this.follower?.flush();
    await this.follower?.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.refollowing;
    await this.follower?.stop();
  }

  /** Processes gone (or silent for retire-after where liveness is unknown) and ranks torn down are forgotten after the grace; owners of dropped communicators are logged once. */
  housekeep(now: number, view: NodeView): void {
    void this.logPaths.look();
    const { tracker } = this;
    for (const p of [...tracker.processes.values()]) {
      const alive = view.alive(p);
      if (alive === true) p.goneSinceMs = undefined;
      else if (alive === false) p.goneSinceMs ??= now;
      const gone = p.goneSinceMs !== undefined && now - p.goneSinceMs >= this.o.retireGraceMs;
      const stale = alive === undefined && now - p.lastSeenMs >= this.o.retireAfterMs;
      if (gone || stale) {
        this.o.log.info({ process: p.key, reason: gone ? "process exited" : "no line for the retire-after period" }, "nccl: retiring process");
        tracker.retireProcess(p.key);
      }
    }
    for (const c of [...tracker.comms.values()]) {
      for (const [r, st] of [...c.ranks]) if (st.tornDownMs !== undefined && now - st.tornDownMs >= this.o.retireGraceMs) tracker.retireRank(c.key, r);
      if (c.ranks.size === 0) tracker.retireComm(c.key);
    }
    this.caps.commsDropped(tracker.droppedCommsByOwner, this.o.maxComms);
  }

  private refollow(): void {
    this.refollowing = this.refollowing.then(async () => {
      const old = this.follower;
      if (old === undefined || this.stopped) return;
      await old.stop();
      const resume = old.positions();
      this.follower = undefined;
      if (this.stopped) return;
      await this.start(resume);
    });
  }

  /** Files whose head read did not reach their end: counting restarts for their ranks. */
  private async settleHistory(): Promise<void> {
    for (const path of this.historicalFiles) {
      try {
        if ((await jobFsGate.run(path, () => stat(path))).size > this.o.headBytes) this.tracker.markResumed(path);
      } catch {
        // gone meanwhile
      }
    }
    this.historicalFiles.clear();
  }

  private openSink(file: FollowedFile, meta: { historical: boolean; mtimeMs: number }): FileSink {
    const key = fileKey(file);
    let sink = this.sinks.get(key);
    if (sink === undefined) {
      sink = new FileSink(this.tracker, (err, where) => {
        this.o.log.warn({ where, reason: err instanceof Error ? err.message : String(err) }, "nccl: line could not be processed");
      });
      this.sinks.set(key, sink);
    }
    if (meta.historical) this.historicalFiles.add(file.path);
    return sink.open(file.path, this.o.now(), meta.historical, meta.mtimeMs, file.uid);
  }

  private makeFollower(resume?: ReadonlyMap<string, ResumePoint>): Follower {
    const o = this.o;
    const forget = (f: FollowedFile): boolean => this.sinks.delete(fileKey(f));
    return new Follower(
      {
        paths: o.paths,
        headBytes: o.headBytes,
        usePolling: o.usePolling,
        ...(resume !== undefined ? { resume } : {}),
        ...(o.sweepIntervalMs !== undefined ? { sweepIntervalMs: o.sweepIntervalMs } : {}),
        ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
        now: o.now,
      },
      {
        openSink: (file, meta) => this.openSink(file, meta),
        // A configured directory that cannot be listed is said by its path state, once, not per sweep.
        onReadError: (path, code) => {
          if (!this.logPaths.isRoot(path)) this.readErrors.failed(path, code, (REFUSAL_WORDS as Readonly<Record<string, string>>)[code]);
        },
        onFileDropped: (path, uid) => this.caps.fileDropped(path, uid, DEFAULT_MAX_FILES),
        onLook: (f) => this.sinks.get(fileKey(f))?.looked(o.now()),
        onTruncated: forget,
        onFileRemoved: forget,
      },
    );
  }
}

function fileKey(f: FollowedFile): string {
  return `${f.dev}:${f.ino}:${f.generation}`;
}
