/**
 * Asks NCCL's RAS service (NCCL 2.24+, on by default in every job process) for the job-wide status.
 * In production jobs (no COLL lines) RAS is the live source of the hang verdict. A STATUS query makes
 * every process of the job report to the one asked, so who asks, and when, is decided with care
 * (ras/schedule.ts): one querier per job, elected from the job's own report (ras/job-view.ts) and
 * succeeded when its agent or node is gone (ras/peers.ts); the other nodes ask on local suspicion
 * only; nothing while no service listens or while it is young (ras/listener.ts); on NCCL versions
 * with a known RAS defect (ras/defects.ts), nothing on a timer. One query at a time; JSON where the
 * job's NCCL has it (2.28.7+), text otherwise. The reports feed ras/progress.ts; ras/verdict.ts
 * turns them into verdicts. Where the job's NCCL has monitor mode (2.29+), a subscription
 * (ras/monitor.ts) hears a dead peer the moment RAS declares it: it is published at once and a
 * query follows (as suspicion).
 * With `owner`, an answer counts only when a process of a rank the logs know (or root) holds the
 * socket that answered (ras/socket-owner.ts); any other is counted as `untrusted`, logged once, and
 * treated as no job here: a local user listening on the RAS port cannot forge a verdict.
 */
import type { Logger } from "pino";
import { rasFindings } from "./findings.js";
import type { Finding } from "../verdict/report.js";
import { queryRas, RAS_OUTCOMES, type RasAddress, type RasQueryOutcome, type RasQueryResult } from "./client.js";
import { looksLikeJson, rasReportFromJson } from "./parse-json.js";
import { RasMonitor, type RasMonitorState } from "./monitor.js";
import type { RasEvent } from "./parse-event.js";
import { RasReader, type RasReport } from "./parse-text.js";
import { deadProcesses, observe, RasProgress, type ProgressOptions, type RasCommProgress } from "./progress.js";
import { belief, refusal, socketOwner, type RasConnection, type SocketOwner } from "./socket-owner.js";
import { AskSchedule, ASK_REASONS, type AskReason } from "./schedule.js";
import { jobViewFromLogs, jobViewOf, type LoggedComm, type RasJobView, type RasRole } from "./job-view.js";
import { Succession, type ProbeResult } from "./peers.js";
import { accepts, listenerOf, type ListenerSeen } from "./listener.js";
import type { RasDefect } from "./defects.js";
import { DiagnosticsEpisode, hasDiagnostics } from "./diagnostics.js";
import type { DiagReport } from "./parse-diag.js";
import { ProfilerSwitch, type SwitchTo } from "./profiler-switch.js";
import { askDiagnostics, switchInspector, type ExchangeContext } from "./escalation.js";

export { RAS_OUTCOMES, type RasQueryOutcome } from "./client.js";

/** Where the owner of a RAS socket is looked up, and which processes are the job's (ras/socket-owner.ts). */
export interface RasOwnerSource {
  /** <path.procfs>, read at each check (a reload may change it). */
  procfsRoot: () => string;
  /** Node pids (in procfsRoot) of the live processes of the ranks the followed logs know, now. */
  rankPids: () => readonly number[];
}

export interface RasWatchOptions {
  address: RasAddress;
  intervalMs: number;
  now: () => number;
  log: Logger;
  /** Hang threshold and its stretch (ras/progress.ts). */
  progress: ProgressOptions;
  /** NCCL's per-peer wait (the TIMEOUT command), seconds. Default 5, NCCL's own. */
  legTimeoutSeconds?: number;
  /** Deadline of one query. Default: twice the leg timeout plus 3 s (NCCL gathers in two legs). */
  deadlineMs?: number;
  /** Default 4 MiB: a 32-rank text report is about 1 KiB, a 1,000-rank JSON report about 600 KiB. */
  maxBytes?: number;
  /** Subscribe to monitor mode where the job's NCCL has it (default true). */
  monitor?: boolean;
  /** Believe only a socket held by a rank process (or root); undefined: believe any answer. */
  owner?: RasOwnerSource;
  /** One querier per job (ras/job-view.ts, ras/peers.ts); undefined: this node asks on its timer, as every node does. */
  election?: RasElection;
  /** No query in this long after a RAS service appears, or after a report showed a rank in init. Default 0. */
  settleMs?: number;
  /** The known RAS defects of an NCCL version (ras/defects.ts): none on a timer for those. Default: none known. */
  knownDefects?: (version: string) => readonly RasDefect[];
  /** The NCCL version of this node's rank processes, where the logs tell it before any report. */
  versionHint?: () => string | undefined;
  /** Where the kernel's socket tables are (<procfs>/net/tcp): whether a service listens. Default /proc. */
  procfsRoot?: () => string;
  /** Switch NCCL Inspector on job-wide for this long when a hang begins (ras/profiler-switch.ts); undefined: never. */
  inspectorWindowMs?: number;
}

/** `to|result` of Inspector switches: result ok (NCCL answered OK), refused (another answer), failed (no answer). */
export const SWITCH_RESULTS = ["ok", "refused", "failed"] as const;

export interface RasElection {
  /** Is this address one of this node's (RAS names each rank's node by an address). */
  isLocal: (host: string) => boolean;
  /** The port of the other nodes' agents, to follow the succession; undefined: not followed (no takeover). */
  peerPort?: number;
  /** Checks another node's agent (ras/peer-probe.ts); injected by tests. */
  probe: (node: string) => Promise<ProbeResult>;
  /** The communicators this node's logs know with their live ranks here: the role where a text report does not tell. */
  loggedComms?: () => readonly LoggedComm[];
}

/** Which NCCL version the timed queries are decided for, and the decision (ringwatch_nccl_ras_version_gate). */
/** RasGate.defect while no version is known. */
export const UNKNOWN_VERSION = "unknown_version";

export interface RasGate {
  /** Empty while no version is known. */
  version: string;
  decision: "periodic" | "suspicion_only";
  /** The first known defect of that version (its id), when there is one. */
  defect: string | undefined;
}

/** Monitor events counted by type; any other type counts as `other`. */
export const RAS_EVENT_TYPES = ["PEER_DEAD", "PEER_NEW", "other"] as const;

/** What the last answer holds. */
export interface RasSnapshot {
  queries: ReadonlyMap<RasQueryOutcome, number>;
  lastReportMs: number | undefined;
  /** The last report, while the job answers. */
  report: RasReport | undefined;
  format: "json" | "text" | undefined;
  /** `node:pid` of processes RAS cannot reach (dead, or their node cut off). */
  dead: readonly string[];
  progress: readonly RasCommProgress[];
  /** Findings of the last report (ringwatch analyze's words). */
  findings: readonly Finding[];
  /** The monitor subscription (NCCL 2.29+). */
  monitor: RasMonitorState;
  /** Monitor events received, by type (RAS_EVENT_TYPES). */
  events: ReadonlyMap<string, number>;
  /** Queries by result, then by reason. */
  queriesBy: ReadonlyMap<RasQueryOutcome, ReadonlyMap<AskReason, number>>;
  /** The job as the last report (or the logs) show it. */
  job: RasJobView | undefined;
  role: RasRole;
  /** The backoff now, ms (0: none). */
  backoffMs: number;
  gate: RasGate | undefined;
  listener: ListenerSeen["kind"];
  /** Where the tables do not show it: a bare connection was accepted. */
  listenerAccepts: boolean;
  /** Checks of other nodes' agents, by result (ras/peers.ts). */
  peerChecks: ReadonlyMap<string, number>;
  /** Inspector switches sent, by `to|result`; whether this agent holds Inspector on (undefined: the switch is off). */
  inspectorSwitches: ReadonlyMap<string, number>;
  inspectorOn: boolean | undefined;
  /** The RAS diagnostics of this hang episode, when this node asked them (ras/diagnostics.ts). */
  diagnostics: { report: DiagReport; atMs: number } | undefined;
}

/** What /nccl/ras-role answers while RAS is not asked at all. */
export const NO_RAS_ROLE: RasRoleAnswer = { job: null, role: "undetermined", last_report_age_seconds: null, interval_seconds: 0, nccl_version: null };

/** What /nccl/ras-role answers other nodes' agents (ras/peers.ts). */
export interface RasRoleAnswer {
  job: string | null;
  role: RasRole;
  last_report_age_seconds: number | null;
  interval_seconds: number;
  nccl_version: string | null;
}

/** The last report in a text answer. */
export function lastTextReport(text: string): RasReport | undefined {
  const reader = new RasReader();
  let start = 0;
  let lineNo = 1;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    reader.line(text.slice(start, end), lineNo++);
    start = end + 1;
  }
  const all = reader.reports();
  return all[all.length - 1];
}

/** The report in an answer, JSON or text. */
export function reportOf(text: string, format: "json" | "text"): RasReport | undefined {
  // Told by the text itself too: a proxy or a wrapper may answer the format command for NCCL.
  return format === "json" || looksLikeJson(text) ? (rasReportFromJson(text) ?? lastTextReport(text)) : lastTextReport(text);
}

/** At most this many series per job-wide RAS metric (dead processes, ranks behind, mismatches). */
export const MAX_RAS_SERIES = 128;

/** NCCL 2.29+ has monitor mode; an unknown version is asked (it refuses if it has none). */
export function hasMonitorMode(version: string | undefined): boolean {
  if (version === undefined) return true;
  const [major, minor] = version.split(".").map(Number);
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) return true;
  return major > 2 || (major === 2 && minor >= 29);
}

/** How often the watch looks whether a service listens (a read of <procfs>/net/tcp: about 1 ms at 10,000 sockets). */
const LISTENER_CHECK_MS = 2000;
/** Deadline of a bare connection that tells whether a service in another network namespace listens. */
const ACCEPT_DEADLINE_MS = 2000;

export class RasWatch {
  private opts: RasWatchOptions;
  private readonly queries = new Map<RasQueryOutcome, number>(RAS_OUTCOMES.map((o) => [o, 0]));
  private readonly queriesBy = new Map<RasQueryOutcome, Map<AskReason, number>>(RAS_OUTCOMES.map((o) => [o, new Map(ASK_REASONS.map((r) => [r, 0]))]));
  private readonly progress: RasProgress;
  private lastReportMs: number | undefined;
  private report: RasReport | undefined;
  private format: "json" | "text" | undefined;
  private findings: readonly Finding[] = [];
  private inFlight: Promise<void> | undefined;
  private query: AbortController | undefined;
  /** The last outcome logged, so a repeated one is not logged again. */
  private loggedState: string | undefined;
  private suspicion = false;
  private paused = false;
  private closed = false;
  /** A query wanted at once while one was in flight (a monitor event). */
  private askAgain = false;
  private readonly monitor: RasMonitor | undefined;
  private readonly events = new Map<string, number>(RAS_EVENT_TYPES.map((t) => [t, 0]));
  /** Processes (node:pid) a PEER_DEAD event named, until the job goes. */
  private readonly deadByEvent = new Set<string>();
  /** Who held the socket of the last answer checked; the rank pid that did, looked at first next time. */
  private owner: SocketOwner | undefined;
  private ownerPid: number | undefined;
  /** The uid of the verified socket whose answer is the report now (undefined: none verified). */
  private reportOwnerUid: number | undefined;
  private readonly schedule: AskSchedule;
  private readonly succession: Succession | undefined;
  private job: RasJobView | undefined;
  private listener: ListenerSeen = { kind: "unknown" };
  private listenerInode: number | undefined;
  private listenerCheckedMs: number | undefined;
  private acceptCheck: Promise<void> | undefined;
  private acceptCheckedMs: number | undefined;
  private peerCheck: Promise<void> | undefined;
  private nextPeerCheckMs = 0;
  private timer: NodeJS.Timeout | undefined;
  /** A PEER_DEAD event asks at once, as suspicion. */
  private eventSuspicion = false;
  private readonly diag = new DiagnosticsEpisode();
  private readonly profiler: ProfilerSwitch | undefined;
  private readonly switches = new Map<string, number>((["on", "off"] as const).flatMap((to) => SWITCH_RESULTS.map((r) => [`${to}|${r}`, 0] as const)));

  constructor(
    opts: RasWatchOptions,
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...opts };
    this.progress = new RasProgress({ ...opts.progress });
    if (opts.inspectorWindowMs !== undefined) this.profiler = new ProfilerSwitch(opts.inspectorWindowMs);
    this.schedule = new AskSchedule({ intervalMs: opts.intervalMs, settleMs: opts.settleMs ?? 0, random, spreadStart: opts.election !== undefined });
    const e = opts.election;
    if (e !== undefined)
      this.succession = new Succession({
        isSelf: (node) => e.isLocal(node),
        intervalMs: opts.intervalMs,
        now: () => this.opts.now(),
        probe: (node) => e.probe(node),
      });
    if (opts.monitor !== false) {
      this.monitor = new RasMonitor({
        address: opts.address,
        onEvent: (e) => this.onEvent(e),
        onState: (s, reason) => this.onMonitorState(s, reason),
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
  setOptions(
    o: (Pick<RasWatchOptions, "address" | "intervalMs"> & Partial<Pick<RasWatchOptions, "settleMs" | "knownDefects" | "inspectorWindowMs">>) | undefined,
  ): void {
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
    this.succession?.setInterval(this.opts.intervalMs);
    if (o.inspectorWindowMs !== undefined) this.profiler?.setWindow(o.inspectorWindowMs);
    if (moved) {
      this.forget();
      this.monitor?.reset(o.address);
    }
  }

  setThreshold(ms: number): void {
    this.progress.setThreshold(ms);
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
    this.followSuccession(now);
    if (this.inFlight !== undefined) return;
    const role = this.role();
    const reason = this.schedule.due({
      now,
      role,
      querierServing: this.succession?.querierServing ?? false,
      suspicion,
      event: this.eventSuspicion,
      takeover: this.succession?.takeTakeover() ?? false,
      periodicAllowed: this.gate()?.decision !== "suspicion_only",
    });
    if (reason === undefined) {
      const mayControl = this.mayDiagnose(now, role);
      const to = this.profiler?.due(now, mayControl);
      if (to !== undefined) this.run(() => this.switchInspector(to));
      else if (this.diag.due(now, mayControl)) {
        this.diag.asked();
        this.run((signal) => this.askDiagnostics(signal));
      }
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
    this.diag.setHang(hang);
    this.profiler?.setHang(hang);
  }

  /** Diagnostics: the elected querier only (one node per job), on NCCL 2.31.2+, when RAS may be asked at all. */
  private mayDiagnose(now: number, role: RasRole): boolean {
    return this.opts.election !== undefined && role === "querier" && hasDiagnostics(this.report?.version) && !this.schedule.quiet(now);
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

  private exchange(): ExchangeContext {
    return {
      address: this.opts.address,
      log: this.opts.log,
      maxBytes: this.opts.maxBytes ?? 4 * 1024 * 1024,
      legTimeoutSeconds: this.opts.legTimeoutSeconds ?? 5,
      verify: (c) => this.verifyPeer(c, "query"),
    };
  }

  /** Inspector on or off (ras/escalation.ts), counted; the switch learns the answer. */
  private async switchInspector(to: SwitchTo, signal?: AbortSignal): Promise<void> {
    const result = await switchInspector(this.exchange(), to, signal);
    this.switches.set(`${to}|${result}`, (this.switches.get(`${to}|${result}`) ?? 0) + 1);
    this.profiler?.answered(to, result === "ok", this.opts.now(), this.opts.intervalMs);
  }

  /** RAS diagnostics (ras/escalation.ts), counted as a query for `diagnostics`; the episode learns the answer. */
  private async askDiagnostics(signal: AbortSignal): Promise<void> {
    const r = await askDiagnostics(this.exchange(), signal);
    if (r === undefined) return;
    const byReason = this.queriesBy.get(r.outcome);
    byReason?.set("diagnostics", (byReason.get("diagnostics") ?? 0) + 1);
    this.queries.set(r.outcome, (this.queries.get(r.outcome) ?? 0) + 1);
    const now = this.opts.now();
    if (r.report === undefined) this.diag.failed(now, this.opts.intervalMs);
    else this.diag.answered(r.report, now, this.opts.intervalMs);
  }

  /** This node's role for the job now. */
  private role(): RasRole {
    if (this.opts.election === undefined) return "querier";
    if (this.job !== undefined && this.job.succession.length > 0) return this.succession?.role ?? "undetermined";
    const logged = this.opts.election.loggedComms?.();
    const fromLogs = logged !== undefined ? jobViewFromLogs(logged, false) : undefined;
    if (fromLogs === undefined) return "undetermined";
    return fromLogs.hostsRankZero ? "querier" : "listener";
  }

  /** The job as this node's logs show it (a text report): its anchor, no succession. */
  private jobFromLogs(): RasJobView | undefined {
    const logged = this.opts.election?.loggedComms?.();
    return logged !== undefined ? jobViewFromLogs(logged, false)?.view : undefined;
  }

  /**
   * Timed queries for the job's NCCL version. Where known defects gate queries, a version not
   * known yet (no report, no log names it) is gated too: every NCCL whose RAS answers STATUS has
   * one (ras/defects.ts), and asking to learn it would be the very query that hurts. Undefined:
   * no gate (--collector.nccl.ras-poll-known-defective, and no version known).
   */
  private gate(): RasGate | undefined {
    const version = this.report?.version ?? this.opts.versionHint?.();
    if (version === undefined) return this.opts.knownDefects === undefined ? undefined : { version: "", decision: "suspicion_only", defect: UNKNOWN_VERSION };
    const defects = this.opts.knownDefects?.(version) ?? [];
    return { version, decision: defects.length > 0 ? "suspicion_only" : "periodic", defect: defects[0]?.id };
  }

  /** Whether a RAS service listens, and a new one (a new job) from its inode. */
  private watchListener(now: number): void {
    if (this.listenerCheckedMs !== undefined && now - this.listenerCheckedMs < LISTENER_CHECK_MS && now >= this.listenerCheckedMs) return;
    this.listenerCheckedMs = now;
    const isLocal = this.opts.election?.isLocal ?? (() => false);
    const seen = listenerOf(this.opts.procfsRoot?.() ?? "/proc", this.opts.address, isLocal);
    this.listener = seen;
    if (seen.kind === "listening") {
      if (seen.inode !== this.listenerInode) {
        if (this.listenerInode !== undefined) this.forget();
        this.listenerInode = seen.inode;
        this.schedule.listening(now);
      }
      return;
    }
    if (seen.kind === "none") {
      if (this.schedule.hasListener) {
        this.forget();
        this.monitor?.reset();
      }
      this.listenerInode = undefined;
      this.schedule.gone();
      this.profiler?.jobGone();
      this.logNoService("nothing listens there (the kernel's socket tables say so: no connection was made)");
      return;
    }
    // Not in this node's tables (another network namespace): a bare connection tells, once an interval.
    if (this.schedule.hasListener || this.acceptCheck !== undefined) return;
    if (this.acceptCheckedMs !== undefined && now - this.acceptCheckedMs < this.opts.intervalMs && now >= this.acceptCheckedMs) return;
    this.acceptCheckedMs = now;
    this.acceptCheck = accepts(this.opts.address, ACCEPT_DEADLINE_MS)
      .then((ok) => {
        if (ok && !this.schedule.hasListener) this.schedule.listening(this.opts.now());
      })
      .finally(() => (this.acceptCheck = undefined));
  }

  /** Checks the agents ahead in the succession, each half interval. */
  private followSuccession(now: number): void {
    const s = this.succession;
    if (s === undefined || this.opts.election?.peerPort === undefined || this.peerCheck !== undefined) return;
    if (this.job === undefined || this.job.succession.length === 0 || now < this.nextPeerCheckMs) return;
    this.nextPeerCheckMs = now + (this.opts.intervalMs / 2) * (0.9 + 0.2 * this.random());
    this.peerCheck = s
      .check()
      .catch((err: unknown) =>
        this.opts.log.debug({ reason: err instanceof Error ? err.message : String(err) }, "nccl: checking the RAS querier's agent failed"),
      )
      .finally(() => (this.peerCheck = undefined));
  }

  /** What /nccl/ras-role answers another node's agent. */
  roleAnswer(): RasRoleAnswer {
    const now = this.opts.now();
    return {
      job: this.job?.jobId ?? null,
      role: this.paused ? "undetermined" : this.role(),
      last_report_age_seconds: this.lastReportMs !== undefined ? Math.max(0, now - this.lastReportMs) / 1000 : null,
      interval_seconds: this.opts.intervalMs / 1000,
      nccl_version: this.report?.version ?? null,
    };
  }

  /** Asks now, or as soon as the query in flight ends (as suspicion). */
  private askNow(): void {
    this.eventSuspicion = true;
    if (this.inFlight !== undefined) this.askAgain = true;
    else this.tick(this.suspicion);
  }

  private onEvent(e: RasEvent): void {
    const type = (RAS_EVENT_TYPES as readonly string[]).includes(e.type) ? e.type : "other";
    this.events.set(type, (this.events.get(type) ?? 0) + 1);
    if (this.paused || this.closed) return;
    const who = e.host !== undefined && e.pid !== undefined ? `${e.host}:${e.pid}` : undefined;
    const gpus = e.nvmlDevs !== undefined && e.nvmlDevs.length > 0 ? ` (GPU ${e.nvmlDevs.join(",")})` : "";
    const fields = { event: e.type, process: who ?? null, ras_addr: e.addr ?? null, sent: e.timestamp, details: e.details || null };
    if (e.type === "PEER_DEAD") {
      if (who !== undefined && this.deadByEvent.size < MAX_RAS_SERIES) this.deadByEvent.add(who);
      this.opts.log.warn(fields, `nccl: NCCL RAS says process ${who ?? e.addr ?? "?"}${gpus} of the job is dead (PEER_DEAD); asking for the job's status now`);
      this.askNow();
    } else this.opts.log.debug(fields, `nccl: NCCL RAS event ${e.type} ${who ?? e.addr ?? ""}`.trimEnd());
  }

  private onMonitorState(state: RasMonitorState, reason: string): void {
    const where = `${this.opts.address.host}:${this.opts.address.port}`;
    if (state === "subscribed") this.opts.log.info({ ras_addr: where }, `nccl: following NCCL RAS monitor events at ${where} (a dead peer shows at once)`);
    else if (state === "unsupported")
      this.opts.log.info({ ras_addr: where, reason }, `nccl: the job's NCCL has no RAS monitor mode (2.29+); dead peers show at the next query`);
    else if (state === "off" && reason !== "reset") this.opts.log.debug({ ras_addr: where, reason }, `nccl: NCCL RAS monitor connection ended: ${reason}`);
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
    if (this.profiler?.isOn === true) await this.switchInspector("off");
  }

  /**
   * The uid of the socket that gave the report now, as socket-owner.ts verified it (rank, uid or
   * root); undefined when none was verified (no owner check). What the live stacks believe of a
   * pid the report names (stacks-inputs.ts).
   */
  verifiedOwnerUid(): number | undefined {
    return this.report !== undefined ? this.reportOwnerUid : undefined;
  }

  snapshot(): RasSnapshot {
    const dead = new Set(this.report === undefined ? [] : deadProcesses(this.report));
    for (const p of this.deadByEvent) dead.add(p);
    return {
      queries: this.queries,
      lastReportMs: this.lastReportMs,
      report: this.report,
      format: this.format,
      dead: [...dead].slice(0, MAX_RAS_SERIES),
      progress: [...this.progress.states()],
      findings: this.findings,
      monitor: this.monitor?.state ?? "off",
      events: this.events,
      queriesBy: this.queriesBy,
      job: this.job,
      role: this.paused ? "undetermined" : this.role(),
      backoffMs: this.schedule.backoffMs,
      // The unknown version's gate says something only while a job listens.
      gate: this.schedule.hasListener || this.gate()?.defect !== UNKNOWN_VERSION ? this.gate() : undefined,
      listener: this.listener.kind,
      listenerAccepts: this.listener.kind === "unknown" && this.schedule.hasListener,
      peerChecks: this.succession?.checks ?? new Map<string, number>(),
      inspectorSwitches: this.switches,
      inspectorOn: this.profiler?.isOn,
      diagnostics: this.diag.report !== undefined && this.diag.atMs !== undefined ? { report: this.diag.report, atMs: this.diag.atMs } : undefined,
    };
  }

  private forget(): void {
    this.job = undefined;
    this.succession?.setView(undefined);
    this.deadByEvent.clear();
    this.progress.clear();
    this.report = undefined;
    this.format = undefined;
    this.findings = [];
  }

  private async ask(signal: AbortSignal, reason: AskReason): Promise<void> {
    const leg = this.opts.legTimeoutSeconds ?? 5;
    const { host, port } = this.opts.address;
    const r: RasQueryResult = await queryRas({
      host,
      port,
      legTimeoutSeconds: leg,
      deadlineMs: this.opts.deadlineMs ?? leg * 2000 + 3000,
      maxBytes: this.opts.maxBytes ?? 4 * 1024 * 1024,
      signal,
      json: true,
      verify: (c) => this.verifyPeer(c, "query"),
    });
    if (signal.aborted) return;
    const report = r.ok ? reportOf(r.text, r.format) : undefined;
    const outcome: RasQueryOutcome = !r.ok ? r.result : report === undefined ? "error" : "ok";
    this.queries.set(outcome, (this.queries.get(outcome) ?? 0) + 1);
    const byReason = this.queriesBy.get(outcome);
    byReason?.set(reason, (byReason.get(reason) ?? 0) + 1);
    const now = this.opts.now();
    if (outcome === "timeout" || outcome === "error") this.schedule.failed(now);
    const where = `${host}:${port}`;
    if (report === undefined) {
      // No job answers (it ended, or none runs here), or one not believed answers: what the last one
      // said goes with it. A timeout or a garbled answer keeps it: the job may be too busy to answer in time.
      if (outcome === "unreachable" || outcome === "untrusted") {
        this.forget();
        this.monitor?.reset();
        this.schedule.jobForgotten(now);
      }
      // Nothing listens any more: the next service seen is a new job, and waits out the settle time.
      if (outcome === "unreachable" && this.listener.kind !== "listening") this.schedule.gone();
      const reason = r.ok ? `the answer holds no RAS report (it begins "${r.text.slice(0, 80).trim()}")` : r.reason;
      if (outcome === "untrusted") {
        this.logRefusal(reason, "answer");
        return;
      }
      if (outcome === "unreachable") this.logNoService(reason);
      else
        this.logOnce(`fail:${outcome}`, () => this.opts.log.warn({ ras_addr: where, reason, outcome }, `nccl: NCCL RAS at ${where} gave no report: ${reason}`));
      return;
    }
    const format = r.ok ? r.format : "text";
    this.lastReportMs = now;
    this.report = report;
    this.reportOwnerUid = this.opts.owner !== undefined && this.owner?.trusted === true ? this.owner.uid : undefined;
    this.format = report.full !== undefined ? "json" : format === "json" ? "json" : "text";
    const observed = observe(report);
    this.progress.record(now, observed);
    this.findings = rasFindings([{ source: "ras", reports: [report] }]);
    this.job = jobViewOf(report) ?? this.jobFromLogs();
    this.succession?.setView(this.job);
    this.schedule.answered(now, this.job?.initialising === true);
    if (hasMonitorMode(report.version)) this.monitor?.ensure();
    const owner = this.opts.owner !== undefined && this.owner?.trusted === true ? belief(this.owner) : null;
    this.logOnce(`ok:${this.format}`, () =>
      this.opts.log.info(
        {
          ras_addr: where,
          ms: Math.round(r.ms),
          format: this.format,
          nccl_version: report.version ?? null,
          communicators: observed.length,
          socket_owner: owner,
        },
        `nccl: NCCL RAS at ${where} answers (${this.format === "json" ? "every rank's counts" : "text: counts only where they differ"})`,
      ),
    );
  }

  /**
   * Checks who holds the socket that answered (ras/socket-owner.ts): undefined when it is believed,
   * else why not. A refused monitor subscription is counted and logged here; a refused query in ask().
   */
  private verifyPeer(c: RasConnection, via: "query" | "monitor"): string | undefined {
    const src = this.opts.owner;
    if (src === undefined) return undefined;
    const root = src.procfsRoot();
    const owner = socketOwner(root, c, src.rankPids(), this.ownerPid);
    this.owner = owner;
    if (owner.trusted) {
      if (owner.by !== "root") this.ownerPid = owner.pid;
      return undefined;
    }
    const reason = refusal(owner, root);
    if (via === "monitor") {
      this.queries.set("untrusted", (this.queries.get("untrusted") ?? 0) + 1);
      this.logRefusal(reason, "monitor subscription");
    }
    return reason;
  }

  /** One warning per episode (until another outcome is logged) and owner. */
  private logRefusal(reason: string, what: string): void {
    const o = this.owner;
    const who = o === undefined || o.trusted ? "?" : o.why === "unseen" ? "unseen" : `${o.why}:${o.uid}`;
    const where = `${this.opts.address.host}:${this.opts.address.port}`;
    this.logOnce(`untrusted:${who}`, () =>
      this.opts.log.warn(
        {
          ras_addr: where,
          reason,
          socket_uid: o !== undefined && !o.trusted && o.why !== "unseen" ? o.uid : null,
          rank_processes: o !== undefined && !o.trusted ? o.ranks : null,
        },
        `nccl: NCCL RAS ${what} at ${where} ignored, not this node's evidence: ${reason} (counted in ringwatch_nccl_ras_queries_total{result="untrusted"}; docs/nccl.md, "Who may answer")`,
      ),
    );
  }

  private logNoService(reason: string): void {
    const where = `${this.opts.address.host}:${this.opts.address.port}`;
    this.logOnce("fail:unreachable", () =>
      this.opts.log.info(
        { ras_addr: where, reason },
        `nccl: no NCCL RAS service at ${where} (no NCCL 2.24+ job on this node, NCCL_RAS_ENABLE=0, or NCCL_RAS_ADDR set elsewhere)`,
      ),
    );
  }

  private logOnce(key: string, write: () => void): void {
    if (key === this.loggedState) return;
    this.loggedState = key;
    write();
  }
}
