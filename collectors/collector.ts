import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { Exec } from "./exec.js";
import type { CommonSettings } from "./settings/common.js";

/**
 * A collector failed in an expected way (tool missing, device absent, tool error).
 * The runner logs `message` once (no stack) and sets ringwatch_collector_success to 0.
 */
export class CollectorError extends Error {
  override readonly name = "CollectorError";
  /** True when the data source is simply not present on this machine (normal, logged at info). */
  readonly absent: boolean;
  constructor(message: string, opts: { absent?: boolean; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.absent = opts.absent ?? false;
  }
}

/**
 * Whether a collector's source is on this machine and usable (ringwatch_collector_source_state):
 * `present`, `absent` (not on this machine: no GPU, no HCA, no log directory) or `failing` (there,
 * but the collector cannot read it).
 */
export const SOURCE_STATES = ["present", "absent", "failing"] as const;
export type SourceState = (typeof SOURCE_STATES)[number];

/** Health of a long-lived collector, read by the runner at scrape time. */
export interface CollectorHealth {
  ok: boolean;
  /** Why it is not ok (one stable line, for logs: logged once per change). */
  reason?: string;
  /** Not ok because the source is simply not present on this machine (logged at info). */
  absent?: boolean;
  /** Not ok yet because the source is still starting (not logged as a failure). */
  starting?: boolean;
  /** Unix ms of the last successful sample. */
  lastSuccessMs?: number;
  /** Seconds the last complete sample took to produce (optional). */
  durationSeconds?: number;
}

/** Everything a collector may use; given once at construction. */
export interface CollectorDeps {
  registry: Registry;
  logger: Logger;
  exec: Exec;
  /** Injected clock (ms since epoch). */
  now: () => number;
}

/**
 * Poll collectors implement `update()`: the runner schedules it (node-cron, never overlapping),
 * times it and records success. `update()` reads its source completely first and then replaces
 * its published series in one synchronous step, so a scrape never sees half an update and series
 * of things that vanished disappear.
 *
 * Stream collectors implement `start()`/`stop()`/`health()` and publish as data arrives.
 * Both implement `once()` for `--once`: produce one complete snapshot, then return.
 */
export interface Collector<S extends object = object> {
  /** Its module's name (collectors/index.ts). */
  readonly name: string;
  readonly mode: "poll" | "stream";
  /** Poll: gather and publish one snapshot; throw CollectorError on failure. */
  update?(): Promise<void>;
  /** Stream: begin background work (must not throw for a missing tool). */
  start?(): void;
  /** Stream: stop background work and any child processes. */
  stop?(): Promise<void>;
  /** Stream: current health. */
  health?(): CollectorHealth;
  /** One complete snapshot for --once; throw CollectorError on failure. */
  once(): Promise<void>;
  /**
   * SIGHUP: apply this collector's settings from a new, valid configuration without losing state.
   * Called only when one of the settings its module lists as reloadable changed. A throw is logged
   * and counts the reload as failed.
   */
  reconfigure?(settings: S, common: CommonSettings): void;
  /**
   * JSON documents the agent serves beside /metrics, by path (the nccl collector's /nccl/ras-role,
   * which other nodes' agents read: ras/peers.ts). Each is computed at the request.
   */
  documents?(): ReadonlyMap<string, () => unknown>;
  /**
   * Its source's state where a run that succeeds does not say it all (nccl: the follower runs, and
   * RAS is asked, while no configured log path exists); undefined: the runner's reading (a
   * successful run or healthy stream is `present`).
   */
  sourceState?(): SourceState | undefined;
}
