/**
 * The succession of a job's RAS querier (ras/job-view.ts), followed by asking the agents ahead of
 * this node in it. A listener checks the agent of the node ahead of it, over HTTP at that node's
 * address and the agents' port, each half interval: `/nccl/ras-role` says which job the agent asks
 * for, its role and how old its last report is. A node ahead has failed when its agent was gone (a
 * refused connection, or none within the probe's deadline) at 2 checks in a row, or answered for 2
 * intervals without serving (querier of this job with a report under 2 intervals old). Then the next
 * node is checked; a listener that finds every node ahead of it failed becomes the querier (a
 * takeover), and steps back when a node ahead serves again. Any answer, even 401 or a TLS
 * handshake, shows a live agent: only freshness is unknown then.
 */
import type { RasJobView, RasRole } from "./job-view.js";

/** What another node's agent says about its RAS role (the JSON of /nccl/ras-role). */
export interface PeerAnswer {
  job: string | null;
  role: RasRole;
  lastReportAgeSeconds: number | null;
}

export type ProbeResult = { kind: "gone"; reason: string } | { kind: "alive"; answer?: PeerAnswer };

/** Counted in ringwatch_nccl_ras_peer_checks_total{result}. */
export type PeerCheckResult = "serving" | "alive" | "stale" | "gone";
export const PEER_CHECK_RESULTS: readonly PeerCheckResult[] = ["serving", "alive", "stale", "gone"];

export interface SuccessionOptions {
  isSelf: (node: string) => boolean;
  intervalMs: number;
  now: () => number;
  probe: (node: string) => Promise<ProbeResult>;
}

interface Candidate {
  goneChecks: number;
  notServingSinceMs?: number;
  serving: boolean;
}

export class Succession {
  private view: RasJobView | undefined;
  private readonly candidates = new Map<string, Candidate>();
  private current: { role: RasRole; querier: string | undefined; fresh: boolean } = { role: "undetermined", querier: undefined, fresh: false };
  private tookOver = false;
  readonly checks = new Map<PeerCheckResult, number>(PEER_CHECK_RESULTS.map((r) => [r, 0]));

  constructor(private opts: SuccessionOptions) {}

  setInterval(ms: number): void {
    this.opts = { ...this.opts, intervalMs: ms };
  }

  /** A new view of the job (after a report); undefined: no job. Keeps what was learnt of the nodes still in it. */
  setView(view: RasJobView | undefined): void {
    if (view === undefined || view.jobId !== this.view?.jobId) this.candidates.clear();
    this.view = view;
    this.current = this.decide();
  }

  /** This node's role now: querier (first in the succession, or every node ahead failed), listener, or undetermined (no succession known). */
  get role(): RasRole {
    return this.current.role;
  }

  /** The node this one takes for the querier, when it is a listener. */
  get querier(): string | undefined {
    return this.current.querier;
  }

  /** The querier ahead serves: its agent said, at the last check, that it has a report under 2 intervals old. */
  get querierServing(): boolean {
    return this.current.fresh;
  }

  /** True once after this node became the querier by a takeover. */
  takeTakeover(): boolean {
    const t = this.tookOver;
    this.tookOver = false;
    return t;
  }

  /** Checks the nodes ahead of this one, in order, until one has not failed; then decides the role. */
  async check(): Promise<void> {
    const view = this.view;
    if (view === undefined || view.succession.length === 0) return;
    for (const node of view.succession) {
      if (this.opts.isSelf(node)) break;
      const r = await this.opts.probe(node);
      if (this.view !== view) return; // the job changed meanwhile
      this.note(node, r, view);
      if (!this.failed(node)) break;
    }
    const before = this.current.role;
    this.current = this.decide();
    if (before === "listener" && this.current.role === "querier") this.tookOver = true;
  }

  private note(node: string, r: ProbeResult, view: RasJobView): void {
    const c = this.candidates.get(node) ?? { goneChecks: 0, serving: false };
    this.candidates.set(node, c);
    const now = this.opts.now();
    let result: PeerCheckResult;
    if (r.kind === "gone") {
      c.goneChecks++;
      c.serving = false;
      result = "gone";
    } else {
      c.goneChecks = 0;
      const a = r.answer;
      const limitS = (2 * this.opts.intervalMs) / 1000;
      c.serving = a !== undefined && a.role === "querier" && a.job === view.jobId && a.lastReportAgeSeconds !== null && a.lastReportAgeSeconds <= limitS;
      // An unreadable answer (auth, TLS): alive, freshness unknown; it is given the benefit of the doubt.
      const stale = a !== undefined && !c.serving;
      result = c.serving ? "serving" : stale ? "stale" : "alive";
      if (!stale) c.notServingSinceMs = undefined;
      else c.notServingSinceMs ??= now;
    }
    this.checks.set(result, (this.checks.get(result) ?? 0) + 1);
  }

  private failed(node: string): boolean {
    const c = this.candidates.get(node);
    if (c === undefined) return false;
    if (c.goneChecks >= 2) return true;
    return c.notServingSinceMs !== undefined && this.opts.now() - c.notServingSinceMs >= 2 * this.opts.intervalMs;
  }

  private decide(): { role: RasRole; querier: string | undefined; fresh: boolean } {
    const view = this.view;
    if (view === undefined || view.succession.length === 0) return { role: "undetermined", querier: undefined, fresh: false };
    for (const node of view.succession) {
      if (this.opts.isSelf(node)) return { role: "querier", querier: node, fresh: true };
      if (!this.failed(node)) return { role: "listener", querier: node, fresh: this.candidates.get(node)?.serving === true };
    }
    // This node hosts no rank of the anchor and every node of it failed: it stays a listener.
    return { role: "listener", querier: undefined, fresh: false };
  }
}
