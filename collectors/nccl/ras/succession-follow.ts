/**
 * The succession of the job's RAS querier (ras/peers.ts) as this node follows it: the agents ahead
 * of it are checked each half interval (±10 %), one check at a time, once the other agents' port is
 * known and the last report names the job's succession. A check that fails is a debug line.
 */
import type { Logger } from "pino";
import type { RasJobView } from "./job-view.js";
import { Succession, type ProbeResult } from "./peers.js";

export interface SuccessionFollowOptions {
  isLocal: (host: string) => boolean;
  probe: (node: string) => Promise<ProbeResult>;
  intervalMs: number;
  now: () => number;
  random: () => number;
  log: () => Logger;
}

export class SuccessionFollow {
  readonly succession: Succession;
  private check: Promise<void> | undefined;
  private nextCheckMs = 0;

  constructor(private readonly o: SuccessionFollowOptions) {
    this.succession = new Succession({
      isSelf: o.isLocal,
      intervalMs: o.intervalMs,
      now: o.now,
      probe: o.probe,
    });
  }

  /** Checks the agents ahead in the succession, when due (`peerPort` undefined: not followed). */
  follow(now: number, job: RasJobView | undefined, peerPort: number | undefined, intervalMs: number): void {
    if (peerPort === undefined || this.check !== undefined) return;
    if (job === undefined || job.succession.length === 0 || now < this.nextCheckMs) return;
    this.nextCheckMs = now + (intervalMs / 2) * (0.9 + 0.2 * this.o.random());
    this.check = this.succession
      .check()
      .catch((err: unknown) =>
        this.o.log().debug({ reason: err instanceof Error ? err.message : String(err) }, "nccl: checking the RAS querier's agent failed"),
      )
      .finally(() => (this.check = undefined));
  }
}
