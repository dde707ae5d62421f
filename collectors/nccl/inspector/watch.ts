/**
 * NCCL Inspector, live: a second log follower on the job's NCCL_INSPECTOR_DUMP_DIR
 * (--collector.nccl.inspector.path), its `<hostname>-pid<pid>.log` files (JSON lines, one record
 * per completed collective per communicator) fed to one InspectorFeed (inspector/feed.ts). The
 * snapshot at scrape time holds per communicator and rank the completed collectives, recent GPU
 * execution time and bus bandwidth, the straggler with its delay, and bandwidth drops. A straggler
 * or a drop that begins, and one that ends, is logged once.
 */
import type { Logger } from "pino";
import { Follower } from "../../follow/follower.js";
import { InspectorFeed } from "./feed.js";
import { isInspectorJsonFile } from "./paths.js";
import type { InspectorSnapshot } from "./types.js";

export interface InspectorWatchOptions {
  /** Directories or globs of Inspector output. */
  paths: string[];
  usePolling: boolean | "auto";
  now: () => number;
  log: Logger;
  maxComms: number;
  /** Follower intervals (tests). */
  sweepIntervalMs?: number;
  pollIntervalMs?: number;
}

export class InspectorWatch {
  readonly feed: InspectorFeed;
  private follower: Follower | undefined;
  private failure: string | undefined;
  /** `comm_id rank` of stragglers, and comm_ids with a bandwidth drop, already logged. */
  private readonly logged = new Set<string>();

  constructor(private readonly opts: InspectorWatchOptions) {
    this.feed = new InspectorFeed({ now: opts.now, wallSkew: () => opts.now() - Date.now(), limits: { maxComms: Math.min(opts.maxComms, 128) } });
  }

  get problem(): string | undefined {
    return this.failure;
  }

  async start(): Promise<void> {
    const feed = this.feed;
    this.follower = new Follower(
      {
        paths: this.opts.paths,
        usePolling: this.opts.usePolling,
        accept: isInspectorJsonFile,
        now: this.opts.now,
        ...(this.opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: this.opts.sweepIntervalMs } : {}),
        ...(this.opts.pollIntervalMs !== undefined ? { pollIntervalMs: this.opts.pollIntervalMs } : {}),
      },
      { openSink: (file) => feed.sink(file.path, file.uid) },
    );
    try {
      await this.follower.start();
      this.failure = undefined;
      this.opts.log.info({ paths: this.opts.paths, files: this.follower.stats().files }, "nccl: following NCCL Inspector output");
    } catch (err) {
      this.failure = `cannot follow ${this.opts.paths.join(", ")}: ${err instanceof Error ? err.message : String(err)}`;
      this.opts.log.warn({ reason: this.failure }, "nccl: NCCL Inspector follower failed");
    }
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
    this.follower = undefined;
  }

  /** Waits until what is written now has been read (tests). */
  async flush(): Promise<void> {
    await this.follower?.flush();
  }

  snapshot(): InspectorSnapshot {
    return this.feed.snapshot();
  }

  /** Every evaluation: logs stragglers and bandwidth drops that begin or end. */
  logChanges(s: InspectorSnapshot): void {
    const now = new Set<string>();
    for (const c of s.comms) {
      if (!c.active) continue;
      if (c.straggler !== undefined) {
        const key = `straggler ${c.commId} ${c.straggler.rank}`;
        now.add(key);
        if (!this.logged.has(key)) {
          const r = c.ranks.find((x) => x.rank === c.straggler?.rank);
          const where = r?.hostname !== undefined ? ` (${r.hostname}${r.pid !== undefined ? `:${r.pid}` : ""})` : "";
          this.opts.log.warn(
            { comm_id: c.commId, rank: c.straggler.rank, delay_seconds: c.straggler.delaySeconds, share: c.straggler.share, compared: c.straggler.common },
            `nccl: NCCL Inspector: rank ${c.straggler.rank}${where} of communicator ${c.commId} arrives about ${(c.straggler.delaySeconds * 1000).toFixed(1)} ms after the other ranks here in ${Math.round(c.straggler.share * 100)} % of ${c.straggler.common} collectives: a straggler`,
          );
        }
      }
      if (c.bandwidthDrop) {
        const key = `drop ${c.commId}`;
        now.add(key);
        const d = c.drops[0];
        if (!this.logged.has(key) && d !== undefined) {
          this.opts.log.warn(
            {
              comm_id: c.commId,
              op: d.op,
              size_class_bytes: d.sizeClassBytes,
              recent_bytes_per_second: d.recentBytesPerSecond,
              baseline_bytes_per_second: d.baselineBytesPerSecond,
            },
            `nccl: NCCL Inspector: bus bandwidth of communicator ${c.commId} fell to ${(d.recentBytesPerSecond / 1e9).toFixed(1)} GB/s from ${(d.baselineBytesPerSecond / 1e9).toFixed(1)} GB/s (${d.op}, messages from ${d.sizeClassBytes} bytes)`,
          );
        }
      }
    }
    for (const k of this.logged) if (!now.has(k)) this.opts.log.info({ what: k }, `nccl: NCCL Inspector: ${k} ended`);
    this.logged.clear();
    for (const k of now) this.logged.add(k);
  }
}
