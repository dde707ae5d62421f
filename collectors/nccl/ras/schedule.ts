/**
 * When this node's agent asks NCCL RAS for a job's status, and why (the `reason` of
 * ringwatch_nccl_ras_queries_total). A STATUS query makes every process of the job send its
 * communicators to the one asked, so the job pays for each; the rules keep that to one node's
 * queries per interval in steady state and never ask in a way known to hurt a job:
 *
 * - no query while no RAS service listens, nor in the settle time after one appears (a job still
 *   creating its communicators: NCCL issue 1669), nor in the settle time after a report showed a
 *   rank still in init;
 * - the first query of a job comes at a random moment of the interval after the settle time, one per
 *   node, and tells each node its role (ras/job-view.ts);
 * - `periodic`: the querier asks every interval (±10 %), unless the job's NCCL is in the defect table
 *   (ras/defects.ts) and the operator did not opt in;
 * - `takeover`: at once, when this node became the querier because every node ahead failed;
 * - `suspicion`: on local evidence of a hang, at most once an interval, unless the querier ahead serves
 *   (its report would say the same). The querier itself asks at once when suspicion rises, unless its
 *   last query is under a quarter interval old;
 * - after a timeout or an answer with no report, nothing until a backoff has passed: one interval,
 *   doubling at each failure in a row, at most 10 minutes.
 */
import type { RasRole } from "./job-view.js";

export type AskReason = "periodic" | "suspicion" | "takeover" | "diagnostics";
export const ASK_REASONS: readonly AskReason[] = ["periodic", "suspicion", "takeover", "diagnostics"];

export const MAX_BACKOFF_MS = 10 * 60_000;

export interface ScheduleOptions {
  intervalMs: number;
  settleMs: number;
  random: () => number;
  /** The first query of a job at a random moment of the interval after the settle time (one querier per job); else at once. */
  spreadStart: boolean;
}

/** What the schedule is told at each check. */
export interface ScheduleInput {
  now: number;
  role: RasRole;
  /** The querier ahead of this listener serves (ras/peers.ts). */
  querierServing: boolean;
  /** Local evidence of a hang now. */
  suspicion: boolean;
  /** A monitor event (PEER_DEAD) asks at once, past the suspicion's spacing. */
  event: boolean;
  /** This node just became the querier by a takeover. */
  takeover: boolean;
  /** Timed queries are allowed for the job's NCCL version (ras/defects.ts and the opt-in). */
  periodicAllowed: boolean;
}

export class AskSchedule {
  private listenerSinceMs: number | undefined;
  private startAtMs: number | undefined;
  private jobKnown = false;
  private nextPeriodicMs: number | undefined;
  private lastAskMs: number | undefined;
  private lastSuspicionAskMs: number | undefined;
  private initHoldUntilMs: number | undefined;
  private suspicionBefore = false;
  private pendingTakeover = false;
  /** The backoff now (0: none) and until when it holds. */
  backoffMs = 0;
  private backoffUntilMs = 0;

  constructor(private opts: ScheduleOptions) {}

  setOptions(o: Partial<Pick<ScheduleOptions, "intervalMs" | "settleMs">>): void {
    this.opts = { ...this.opts, ...o };
    this.nextPeriodicMs = undefined;
  }

  /** A RAS service listens since `sinceMs` (a new one: a new job). */
  listening(sinceMs: number): void {
    this.listenerSinceMs = sinceMs;
    this.jobKnown = false;
    this.nextPeriodicMs = undefined;
    this.initHoldUntilMs = undefined;
    this.startAtMs = sinceMs + this.opts.settleMs + (this.opts.spreadStart ? this.opts.random() * this.opts.intervalMs : 0);
  }

  /** No RAS service listens (no job, or it ended). */
  gone(): void {
    this.listenerSinceMs = undefined;
    this.startAtMs = undefined;
    this.jobKnown = false;
    this.nextPeriodicMs = undefined;
    this.initHoldUntilMs = undefined;
    this.backoffMs = 0;
    this.backoffUntilMs = 0;
    // A takeover or the spacing of the job that ended says nothing of the next one.
    this.pendingTakeover = false;
    this.lastAskMs = undefined;
    this.lastSuspicionAskMs = undefined;
  }

  /** What was known of the job went (nothing, or no one believed, answered): its first query again, an interval on. */
  jobForgotten(now: number): void {
    this.jobKnown = false;
    this.startAtMs = now + this.opts.intervalMs;
  }

  get hasListener(): boolean {
    return this.listenerSinceMs !== undefined;
  }

  /** Nothing may be asked now: no service, its settle time, a backoff or an init hold. */
  quiet(now: number): boolean {
    if (this.listenerSinceMs === undefined || now < this.listenerSinceMs + this.opts.settleMs) return true;
    return now < this.backoffUntilMs || (this.initHoldUntilMs !== undefined && now < this.initHoldUntilMs);
  }

  /** Why to ask now; undefined: not now. */
  due(i: ScheduleInput): AskReason | undefined {
    const rising = i.suspicion && !this.suspicionBefore;
    this.suspicionBefore = i.suspicion;
    if (i.takeover) this.pendingTakeover = true;
    if (this.listenerSinceMs === undefined || i.now < this.listenerSinceMs + this.opts.settleMs) return undefined;
    if (i.now < this.backoffUntilMs) return undefined;
    if (this.initHoldUntilMs !== undefined && i.now < this.initHoldUntilMs) return undefined;
    if (this.pendingTakeover && i.role === "querier" && i.periodicAllowed) return "takeover";
    if (i.event) return "suspicion";
    if (!this.jobKnown) {
      if (i.periodicAllowed && this.startAtMs !== undefined && i.now >= this.startAtMs) return "periodic";
      return i.suspicion && this.suspicionRoom(i.now) ? "suspicion" : undefined;
    }
    const periodic = i.role === "querier" && i.periodicAllowed;
    if (periodic && i.now >= (this.nextPeriodicMs ?? i.now)) return "periodic";
    if (!i.suspicion) return undefined;
    if (periodic) {
      // The querier asks on its timer; a rising suspicion brings the next query forward.
      return rising && (this.lastAskMs === undefined || i.now - this.lastAskMs >= this.opts.intervalMs / 4) ? "suspicion" : undefined;
    }
    if (i.role === "listener" && i.querierServing) return undefined;
    return this.suspicionRoom(i.now) ? "suspicion" : undefined;
  }

  private suspicionRoom(now: number): boolean {
    return this.lastSuspicionAskMs === undefined || now - this.lastSuspicionAskMs >= this.opts.intervalMs;
  }

  /** A query for `reason` starts now. */
  asked(reason: AskReason, now: number): void {
    this.lastAskMs = now;
    // A first query that brings no report: the next one an interval later.
    if (!this.jobKnown) this.startAtMs = now + this.opts.intervalMs;
    if (reason === "takeover") this.pendingTakeover = false;
    if (reason === "suspicion") this.lastSuspicionAskMs = now;
    this.nextPeriodicMs = now + this.opts.intervalMs * (0.9 + 0.2 * this.opts.random());
  }

  /** A report came: the job is known; `initialising` holds timed queries for the settle time. */
  answered(now: number, initialising: boolean): void {
    this.jobKnown = true;
    this.backoffMs = 0;
    this.backoffUntilMs = 0;
    this.initHoldUntilMs = initialising ? now + this.opts.settleMs : undefined;
  }

  /** A timeout, a reset or an answer with no report: back off, doubling, up to MAX_BACKOFF_MS. */
  failed(now: number): void {
    this.backoffMs = this.backoffMs === 0 ? this.opts.intervalMs : Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
    this.backoffUntilMs = now + this.backoffMs;
  }

  /** The role no longer asks on a timer (a listener, or a gated version): forget the timer. */
  get jobIsKnown(): boolean {
    return this.jobKnown;
  }
}
