/**
 * Asks NCCL's RAS service (NCCL 2.24+, on by default in every job process) for the job-wide status.
 * In production jobs (no COLL lines) RAS is the live source of the hang verdict. A STATUS query makes
 * every process of the job report to the one asked, so who asks, and when, is decided with care
 * (ras/schedule.ts): one querier per job, elected from the job's own report (ras/job-view.ts) and
 * succeeded when its agent or node is gone (ras/peers.ts, ras/succession-follow.ts); the other nodes
 * ask on local suspicion only; nothing while no service listens or while it is young
 * (ras/listener-watch.ts); on NCCL versions with a known RAS defect (ras/version-gate.ts), nothing on
 * a timer. One query at a time (ras/status-query.ts), and the exchanges of a hang episode
 * (ras/hang-escalation.ts) between them. The reports feed ras/last-report.ts; ras/verdict.ts turns
 * them into verdicts. Where the job's NCCL has monitor mode (2.29+), a subscription (ras/monitor.ts,
 * ras/monitor-events.ts) hears a dead peer the moment RAS declares it: it is published at once and a
 * query follows (as suspicion). With `owner`, an answer counts only when a rank process (or root)
 * holds the socket that answered (ras/who-may-answer.ts); any other is counted as `untrusted`,
 * logged once, and treated as no job here.
 */
import type { RasRole } from "./job-view.js";
import { RasMonitor } from "./monitor.js";
import { AskSchedule, type AskReason } from "./schedule.js";
import { hasDiagnostics } from "./diagnostics.js";
import type { RasConnection } from "./socket-owner.js";
import type { RasWatchOptions, RasWatchReload } from "./watch-options.js";
import type { RasSnapshot } from "./watch-snapshot.js";
import { queryStatus } from "./status-query.js";
import { LastReport } from "./last-report.js";
import { QueryCounts } from "./query-counts.js";
import { AnswerLog } from "./answer-log.js";
import { AnswerCheck } from "./who-may-answer.js";
import { ListenerWatch } from "./listener-watch.js";
import { UNKNOWN_VERSION, versionGate, type RasGate } from "./version-gate.js";
import { roleAnswer, roleOf, type RasRoleAnswer } from "./role-answer.js";
import { SuccessionFollow } from "./succession-follow.js";
import { HangEscalation } from "./hang-escalation.js";
import { hasMonitorMode, logMonitorState, MonitorEvents } from "./monitor-events.js";

export { RAS_OUTCOMES, type RasQueryOutcome } from "./client.js";
export { lastTextReport, reportOf } from "./status-query.js";
export { NO_RAS_ROLE, type RasRoleAnswer } from "./role-answer.js";
export type { RasOwnerSource } from "./who-may-answer.js";
export { UNKNOWN_VERSION, type RasGate } from "./version-gate.js";
export { hasMonitorMode, RAS_EVENT_TYPES } from "./monitor-events.js";
export { SWITCH_RESULTS } from "./hang-escalation.js";
export { MAX_RAS_SERIES, type RasSnapshot } from "./watch-snapshot.js";
export type { RasElection, RasWatchOptions, RasWatchReload } from "./watch-options.js";

export class RasWatch {
  private opts: RasWatchOptions;
  private readonly queries = new QueryCounts();
  private readonly known: LastReport;
  private inFlight: Promise<void> | undefined;
  private query: AbortController | undefined;
  private suspicion = false;
  private paused = false;
  private closed = false;
  /** A query wanted at once while one was in flight (a monitor event). */
  private askAgain = false;
  private readonly monitor: RasMonitor | undefined;
  private readonly events = new MonitorEvents();
  private readonly answers: AnswerCheck;
  private readonly answerLog = new AnswerLog(
    () => this.opts.log,
    () => `${this.opts.address.host}:${this.opts.address.port}`,
  );
  private readonly schedule: AskSchedule;
  private readonly peers: SuccessionFollow | undefined;
  private readonly listener: ListenerWatch;
  private timer: NodeJS.Timeout | undefined;
  /** A PEER_DEAD event asks at once, as suspicion. */
  private eventSuspicion = false;
  private readonly escalation: HangEscalation;

  constructor(
    opts: RasWatchOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...opts };
    this.known = new LastReport(opts.progress);
    this.escalation = new HangEscalation(opts.inspectorWindowMs, {
      options: () => this.opts,
      verify: (c) => this.verifyPeer(c, "query"),
      counted: (outcome) => this.queries.count(outcome, "diagnostics"),
    });
    this.answers = new AnswerCheck(() => this.opts.owner, this.answerLog);
    this.listener = new ListenerWatch(() => ({
      isLocal: this.opts.election?.isLocal ?? (() => false),
      procfsRoot: this.opts.procfsRoot?.() ?? "/proc",
      address: this.opts.address,
    }));
    this.schedule = new AskSchedule({ intervalMs: opts.intervalMs, settleMs: opts.settleMs ?? 0, random, spreadStart: opts.election !== undefined });
    const e = opts.election;
    if (e !== undefined) {
      const [now, log] = [() => this.opts.now(), () => this.opts.log];
      this.peers = new SuccessionFollow({ isLocal: (n) => e.isLocal(n), probe: (n) => e.probe(n), intervalMs: opts.intervalMs, now, random, log });
    }
    if (opts.monitor !== false) {
      this.monitor = new RasMonitor({
        address: opts.address,
        onEvent: (e) => {
          this.events.count(e);
          if (!this.paused && !this.closed && this.events.heard(e, this.opts.log)) this.askNow();
        },
        onState: (s, reason) => logMonitorState(this.opts.log, this.opts.address, s, reason),
        verify: (c) => this.verifyPeer(c, "monitor"),
      });
    }
  }

  /** Looks every second whether to ask (the collector's evaluations also call tick with the suspicion). */
  start(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setInterval(() => this.tick(this.suspicion), Math.min(1000, this.opts.intervalMs / 4));
    this.timer.unref();
  }

  /** New settings (SIGHUP); undefined pauses: the query in flight ends, what was known goes, counts stay. */
  setOptions(o: RasWatchReload | undefined): void {
    if (o === undefined) {
      this.paused = true;
      this.query?.abort();
      this.forget();
      this.monitor?.reset();
      return;
    }
    const moved = o.address.host !== this.opts.address.host || o.address.port !== this.opts.address.port;
    this.paused = false;
    this.opts = { ...this.opts, ...o };
    this.schedule.setOptions({ intervalMs: this.opts.intervalMs, settleMs: this.opts.settleMs ?? 0 });
    this.peers?.succession.setInterval(this.opts.intervalMs);
    if (o.inspectorWindowMs !== undefined) this.escalation.setWindow(o.inspectorWindowMs);
    if (moved) {
      this.forget();
      this.monitor?.reset(o.address);
    }
  }

  setThreshold(ms: number): void {
    this.known.progress.setThreshold(ms);
  }

  /**
   * Looks whether to ask now (ras/schedule.ts). `suspicion`: local evidence of a hang (the logs, the
   * GPUs, PyTorch's lines); a rising one is looked at at once.
   */
  tick(suspicion = false): void {
    this.suspicion = suspicion;
    if (this.paused || this.closed) return;
    const now = this.opts.now();
    this.watchListener(now);
    this.peers?.follow(now, this.known.job, this.opts.election?.peerPort, this.opts.intervalMs);
    if (this.inFlight !== undefined) return;
    const role = this.role();
    const reason = this.schedule.due({
      now,
      role,
      querierServing: this.peers?.succession.querierServing ?? false,
      suspicion,
      event: this.eventSuspicion,
      takeover: this.peers?.succession.takeTakeover() ?? false,
      periodicAllowed: this.gate()?.decision !== "suspicion_only",
    });
    if (reason === undefined) {
      const exchange = this.escalation.due(now, this.mayDiagnose(now, role));
      if (exchange !== undefined) this.run(exchange);
      return;
    }
    this.eventSuspicion = false;
    this.schedule.asked(reason, now);
    const ac = new AbortController();
    this.query = ac;
    this.inFlight = this.ask(ac.signal, reason)
      .catch((err: unknown) => this.opts.log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: NCCL RAS query failed"))
      .finally(() => {
        this.inFlight = undefined;
        this.query = undefined;
        if (this.askAgain) {
          this.askAgain = false;
          this.tick(this.suspicion);
        }
      });
  }

  /** Whether a hang is suspected on this node now, by any evidence: a new episode may ask RAS diagnostics. */
  setHang(hang: boolean): void {
    this.escalation.setHang(hang);
  }

  /** Diagnostics: the elected querier only (one node per job), on NCCL 2.31.2+, when RAS may be asked at all. */
  private mayDiagnose(now: number, role: RasRole): boolean {
    return this.opts.election !== undefined && role === "querier" && hasDiagnostics(this.known.report?.version) && !this.schedule.quiet(now);
  }

  /** Runs one exchange with the service as the connection in flight. */
  private run(exchange: (signal: AbortSignal) => Promise<void>): void {
    const ac = new AbortController();
    this.query = ac;
    this.inFlight = exchange(ac.signal)
      .catch((err: unknown) => this.opts.log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: NCCL RAS exchange failed"))
      .finally(() => {
        this.inFlight = undefined;
        this.query = undefined;
      });
  }

  /** This node's role for the job now (ras/role-answer.ts). */
  private role(): RasRole {
    return roleOf({ election: this.opts.election, job: this.known.job, succession: this.peers?.succession });
  }

  /** Timed queries for the job's NCCL version (ras/version-gate.ts); undefined: no gate. */
  private gate(): RasGate | undefined {
    return versionGate(this.known.report?.version ?? this.opts.versionHint?.(), this.opts.knownDefects);
  }

  /** Whether a RAS service listens (ras/listener-watch.ts): a new one is a new job, none is no job. */
  private watchListener(now: number): void {
    const change = this.listener.look(now);
    if (change === "new" || change === "replaced") {
      if (change === "replaced") this.forget();
      this.schedule.listening(now);
    } else if (change === "none") {
      if (this.schedule.hasListener) {
        this.forget();
        this.monitor?.reset();
      }
      this.schedule.gone();
      this.escalation.jobGone();
      this.answerLog.noService("nothing listens there (the kernel's socket tables say so: no connection was made)");
    } else if (change === "unknown" && !this.schedule.hasListener) {
      // Not in this node's tables (another network namespace): a bare connection tells, once an interval.
      this.listener.knock(now, this.opts.address, this.opts.intervalMs, () => {
        if (!this.schedule.hasListener) this.schedule.listening(this.opts.now());
      });
    }
  }

  /** What /nccl/ras-role answers another node's agent. */
  roleAnswer(): RasRoleAnswer {
    return roleAnswer(this.opts.now(), this.paused ? "undetermined" : this.role(), this.opts.intervalMs, this.known);
  }

  /** Asks now, or as soon as the query in flight ends (as suspicion). */
  private askNow(): void {
    this.eventSuspicion = true;
    if (this.inFlight !== undefined) this.askAgain = true;
    else this.tick(this.suspicion);
  }

  /** Resolves when no query is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
  }

  /** Ends the query in flight, if any; no query starts after this. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.monitor?.close();
    this.query?.abort();
    await this.settled();
    // Inspector switched on by this agent is always switched off, the agent's stop included.
    if (this.escalation.inspectorOn === true) await this.escalation.switchOff();
  }

  /**
   * The uid of the socket that gave the report now, as socket-owner.ts verified it (rank, uid or
   * root); undefined when none was verified (no owner check). What the live stacks believe of a
   * pid the report names (stacks-inputs.ts).
   */
  verifiedOwnerUid(): number | undefined {
    return this.known.verifiedOwnerUid();
  }

  snapshot(): RasSnapshot {
    return {
      queries: this.queries.byResult,
      lastReportMs: this.known.atMs,
      report: this.known.report,
      format: this.known.format,
      dead: this.known.dead(this.events.dead),
      progress: [...this.known.progress.states()],
      findings: this.known.findings,
      monitor: this.monitor?.state ?? "off",
      events: this.events.counts,
      queriesBy: this.queries.byReason,
      job: this.known.job,
      role: this.paused ? "undetermined" : this.role(),
      backoffMs: this.schedule.backoffMs,
      // The unknown version's gate says something only while a job listens.
      gate: this.schedule.hasListener || this.gate()?.defect !== UNKNOWN_VERSION ? this.gate() : undefined,
      listener: this.listener.seen.kind,
      listenerAccepts: this.listener.seen.kind === "unknown" && this.schedule.hasListener,
      peerChecks: this.peers?.succession.checks ?? new Map<string, number>(),
      inspectorSwitches: this.escalation.switches,
      inspectorOn: this.escalation.inspectorOn,
      diagnostics: this.escalation.diagnostics,
    };
  }

  /** The job is gone: what its reports and events said goes. */
  private forget(): void {
    this.known.forget();
    this.peers?.succession.setView(undefined);
    this.events.dead.clear();
  }

  private async ask(signal: AbortSignal, reason: AskReason): Promise<void> {
    const answer = await queryStatus(this.opts, signal, (c) => this.verifyPeer(c, "query"));
    if (answer === undefined) return;
    const { where, r, report, outcome } = answer;
    this.queries.count(outcome, reason);
    const now = this.opts.now();
    if (outcome === "timeout" || outcome === "error") this.schedule.failed(now);
    if (report === undefined) {
      // No job answers (it ended, or none runs here), or one not believed answers: what the last one
      // said goes with it. A timeout or a garbled answer keeps it: the job may be too busy to answer in time.
      if (outcome === "unreachable" || outcome === "untrusted") {
        this.forget();
        this.monitor?.reset();
        this.schedule.jobForgotten(now);
      }
      // Nothing listens any more: the next service seen is a new job, and waits out the settle time.
      if (outcome === "unreachable" && this.listener.seen.kind !== "listening") this.schedule.gone();
      const reason = r.ok ? `the answer holds no RAS report (it begins "${r.text.slice(0, 80).trim()}")` : r.reason;
      if (outcome === "untrusted") this.answers.refused(reason, "answer");
      else if (outcome === "unreachable") this.answerLog.noService(reason);
      else this.answerLog.noReport(where, outcome, reason);
      return;
    }
    const logged = () => this.opts.election?.loggedComms?.();
    const { format, communicators } = this.known.record(now, report, r.ok ? r.format : "text", this.answers.trustedUid(), logged);
    this.peers?.succession.setView(this.known.job);
    this.schedule.answered(now, this.known.job?.initialising === true);
    if (hasMonitorMode(report.version)) this.monitor?.ensure();
    const owner = this.answers.belief();
    this.answerLog.answers(where, { ms: Math.round(r.ms), format, nccl_version: report.version ?? null, communicators, socket_owner: owner });
  }

  /**
   * Checks who holds the socket that answered (ras/who-may-answer.ts): undefined when it is believed,
   * else why not. A refused monitor subscription is counted and logged here; a refused query in ask().
   */
  private verifyPeer(c: RasConnection, via: "query" | "monitor"): string | undefined {
    const reason = this.answers.check(c);
    if (reason !== undefined && via === "monitor") {
      this.queries.count("untrusted");
      this.answers.refused(reason, "monitor subscription");
    }
    return reason;
  }
}
