/**
 * Folds parser events into per-process, per-communicator and per-rank state. Pure apart from the
 * time passed in with each line; no I/O. Bounded: communicators beyond maxComms are dropped (and
 * counted), per-communicator windows keep the last SEQ_WINDOW indexes, warnings the last few.
 */
import { splitCommKey } from "../parse/init.js";
import type { CollEvent, InitEvent, NcclEvent, PtBarrierEvent, PtMismatchEvent, TeardownEvent, WarnEvent } from "../parse/types.js";
import type { CommState, ProcessState, RankState, WarningRecord } from "./model.js";
import { gdrOffText, noteFailureFacts } from "./failures.js";
import { SeqWindow } from "./seq-window.js";
import { ncclTimestampMs } from "./times.js";

export interface LineContext {
  /** File the line came from. */
  source: string;
  /** 1-based line number in that file as far as ringwatch read it (for evidence `file:line`). */
  lineNo: number;
  /** When the line was read (live), or undefined (offline: only line timestamps count). */
  readMs?: number;
  /** Read from the head of a file that existed before ringwatch started: time unknown. */
  historical?: boolean;
  /** The file's mtime, the latest time a historical line can have been written. */
  mtimeMs?: number;
}

/** What a COLL line of a known process and comm pointer counts towards (see collTarget). */
export interface CollTarget {
  proc: ProcessState;
  rank: RankState;
  comm: CommState;
  epoch: number;
}

export interface TrackerLimits {
  maxComms: number;
  maxProcesses: number;
}

const SEQ_WINDOW = 256;
const ARRIVAL_WINDOW = 64;
const GAP_WINDOW = 128;
const WARN_WINDOW = 32;
const MAX_UNRESOLVED = 16;

/** Which PyTorch process group a line speaks for: its GUID, else its id; the default group when absent. */
export function pgKeyOf(ev: { pgGuid?: string; pgId?: number }): string {
  return ev.pgGuid ?? (ev.pgId !== undefined ? String(ev.pgId) : "0");
}

/** `PG 5`, `PG 0 (default_pg)`. */
export function pgLabelOf(ev: { pgGuid?: string; pgId?: number; pgName?: string }): string {
  const id = ev.pgGuid ?? (ev.pgId !== undefined ? String(ev.pgId) : "0");
  return ev.pgName !== undefined && ev.pgName !== id ? `PG ${id} (${ev.pgName})` : `PG ${id}`;
}

export interface WatchdogRecord {
  rank?: number;
  pgRank?: number;
  /** pgKeyOf, pgLabelOf. */
  pg: string;
  pgLabel: string;
  opType?: string;
  seq?: number;
  timeoutMs?: number;
  ranForMs?: number;
  processKey?: string;
  where: string;
}

export interface WorkStatusRecord {
  rank?: number;
  pg: string;
  pgLabel: string;
  /** A watchdog's status line, or the last-work numbers of a dump-signal line. */
  from: "status" | "dump_signal";
  lastEnqueued?: number;
  lastCompleted?: number;
  failedSeq?: number;
  processKey?: string;
  where: string;
}

/** `Heartbeat monitor timed out`, `watchdog got stuck for N seconds`, and dump signals from another rank. */
export interface HangSignRecord {
  what: "monitor_timeout" | "watchdog_stuck" | "dump_signal";
  rank?: number;
  pg: string;
  pgLabel: string;
  stuckSeconds?: number;
  workMetaListSize?: number;
  /** dump_signal: the rank whose timeout raised it (undefined: this local rank). */
  fromRank?: number;
  processKey?: string;
  where: string;
}

/** PyTorch records kept per kind: enough for every rank of a large job's burst of timeouts. */
const PT_WINDOW = 4096;

export class Tracker {
  readonly processes = new Map<string, ProcessState>();
  readonly comms = new Map<string, CommState>();
  /** WARN lines by kind since start (for ringwatch_nccl_warnings_total). */
  readonly warningCounts = new Map<string, number>();
  /** PyTorch watchdog timeouts by (rank, op type) since start. */
  readonly watchdogCounts = new Map<string, { rank: string; opType: string; count: number }>();
  /** PyTorch hang signs by (rank, sign) since start: heartbeat_timeout, watchdog_stuck, dump_signal. */
  readonly hangSignCounts = new Map<string, { rank: string; sign: string; count: number }>();
  readonly watchdogs: WatchdogRecord[] = [];
  readonly workStatus: WorkStatusRecord[] = [];
  readonly hangSigns: HangSignRecord[] = [];
  /** TORCH_DISTRIBUTED_DEBUG=DETAIL mismatches and monitoredBarrier failures. */
  readonly ptDebug: ((PtMismatchEvent | PtBarrierEvent) & { where: string })[] = [];
  /** WARN lines that name no process (a line quoted alone, or a prefix without host:pid). */
  readonly orphanWarnings: WarningRecord[] = [];
  /** `GPU Direct RDMA Disabled for GPU ...` lines that name no process: where each was. */
  readonly orphanGdrDisabled: string[] = [];
  /** What each of those lines said (where → `GPU ca000 / HCA 0 (distance 7 > 4)`). */
  readonly orphanGdrWhy = new Map<string, string>();
  readonly desync: { what: string; ranks?: number[]; seq?: number; nextSeq?: number; where: string }[] = [];
  readonly ptErrors: { what: string; rank?: number; text?: string; peer?: string; processKey?: string; where: string }[] = [];
  droppedComms = 0;
  /** Bumps whenever a rank record is added or removed: CollTargets from an older epoch are stale. */
  epoch = 0;
  droppedProcesses = 0;
  private readonly lastProcessBySource = new Map<string, string>();
  private readonly versionBySource = new Map<string, string>();

  constructor(private limits: TrackerLimits = { maxComms: 1024, maxProcesses: 4096 }) {}

  /** New caps (a reload): what is tracked stays; only new communicators and processes are held to them. */
  setLimits(limits: TrackerLimits): void {
    this.limits = { ...limits };
  }

  ingest(ev: NcclEvent, ctx: LineContext): void {
    const proc = this.processFor(ev, ctx);
    if (ev.kind === "coll") {
      if (proc) {
        if (proc.lastEvent !== "other" || proc.chains.length > 0) noteFailureFacts(proc, ev, "");
        this.onColl(proc, ev, ctx);
      }
      return;
    }
    const where = `${ctx.source}:${ctx.lineNo}`;
    if (proc) noteFailureFacts(proc, ev, where);
    switch (ev.kind) {
      case "version":
        if (proc) proc.version = ev.version;
        else this.versionBySource.set(ctx.source, ev.version);
        return;
      case "init":
        if (proc && ev.phase === "complete") this.onInit(proc, ev, ctx, where);
        return;
      case "net":
        if (!proc) return;
        if (ev.what === "no_device") {
          proc.noIbDevice = true;
          note(proc, "no_ib", where);
        } else if (ev.what === "using") {
          const ll = ev.devices?.find((d) => d.linkLayer)?.linkLayer;
          proc.nets.add(ev.net === "IB" && ll === "RoCE" ? "RoCE" : ev.net);
          if (ev.net === "Socket" && ev.devices?.length) proc.socketIfs ??= ev.devices.map((d) => `${d.name}:${d.addr ?? ""}`).join(" ");
        }
        return;
      case "gdr":
        if (ev.enabled) {
          if (proc) proc.gdrEnabled++;
        } else this.onGdrOff(proc, gdrOffText(ev), where);
        return;
      case "channel":
        if (!proc || (ev.transport !== "NET" && ev.transport !== "COLLNET")) return;
        proc.netLinks.set(ev.net ?? "NET", (proc.netLinks.get(ev.net ?? "NET") ?? 0) + 1);
        note(proc, (ev.net ?? "").startsWith("Socket") ? "socket_link" : "net_link", where);
        if (ev.gdr) {
          proc.gdrLinks++;
          note(proc, "gdrdma", where);
        }
        return;
      case "warn":
        this.onWarn(proc, ev, ctx, where);
        return;
      case "teardown":
        if (proc && ev.phase === "complete") this.onTeardown(proc, ev, ctx);
        return;
      case "pt_watchdog_timeout": {
        const rank = ev.launcherRank ?? ev.pgRank;
        const opType = ev.opType ?? "unknown";
        const key = `${rank ?? ""}|${opType}`;
        const c = this.watchdogCounts.get(key) ?? { rank: rank === undefined ? "" : String(rank), opType, count: 0 };
        c.count++;
        this.watchdogCounts.set(key, c);
        pushBounded(this.watchdogs, { rank, pgRank: ev.pgRank, pg: pgKeyOf(ev), pgLabel: pgLabelOf(ev), opType: ev.opType, seq: ev.seq, timeoutMs: ev.timeoutMs, ranForMs: ev.ranForMs, processKey: proc?.key, where }, PT_WINDOW);
        return;
      }
      case "pt_work_status":
        pushBounded(this.workStatus, { rank: ev.launcherRank ?? ev.pgRank, pg: pgKeyOf(ev), pgLabel: pgLabelOf(ev), from: "status", lastEnqueued: ev.lastEnqueued, lastCompleted: ev.lastCompleted, failedSeq: ev.failedSeq, processKey: proc?.key, where }, PT_WINDOW);
        return;
      case "pt_heartbeat":
        this.countSign(ev.launcherRank ?? ev.pgRank, ev.what === "monitor_timeout" ? "heartbeat_timeout" : "watchdog_stuck");
        pushBounded(this.hangSigns, { what: ev.what, rank: ev.launcherRank ?? ev.pgRank, pg: pgKeyOf(ev), pgLabel: pgLabelOf(ev), stuckSeconds: ev.stuckSeconds, workMetaListSize: ev.workMetaListSize, processKey: proc?.key, where }, PT_WINDOW);
        return;
      case "pt_dump": {
        if (ev.what !== "dump_signal") return;
        const rank = ev.launcherRank ?? ev.pgRank;
        const pg = pgKeyOf(ev);
        const pgLabel = pgLabelOf(ev);
        if (ev.lastEnqueued !== undefined) pushBounded(this.workStatus, { rank, pg, pgLabel, from: "dump_signal", lastEnqueued: ev.lastEnqueued, lastCompleted: ev.lastCompleted, processKey: proc?.key, where }, PT_WINDOW);
        this.countSign(rank, "dump_signal");
        if (ev.fromRank !== undefined || ev.fromLocal === true) pushBounded(this.hangSigns, { what: "dump_signal", rank, pg, pgLabel, fromRank: ev.fromLocal === true ? rank : ev.fromRank, processKey: proc?.key, where }, PT_WINDOW);
        return;
      }
      case "pt_error":
        pushBounded(
          this.ptErrors,
          { what: ev.what, rank: ev.launcherRank ?? ev.pgRank, text: ev.ncclError ?? ev.reason, peer: ev.lastError?.peer, processKey: proc?.key, where },
          WARN_WINDOW,
        );
        return;
      case "pt_mismatch":
      case "pt_barrier":
        pushBounded(this.ptDebug, { ...ev, where }, WARN_WINDOW);
        return;
      case "pt_desync":
      case "pt_flight_recorder":
        pushBounded(this.desync, { what: ev.what, ranks: ev.ranks, seq: ev.seq, nextSeq: ev.kind === "pt_desync" ? ev.nextSeq : undefined, where }, WARN_WINDOW);
        return;
      default:
        return;
    }
  }

  private countSign(rank: number | undefined, sign: string): void {
    const key = `${rank ?? ""}|${sign}`;
    const c = this.hangSignCounts.get(key) ?? { rank: rank === undefined ? "" : String(rank), sign, count: 0 };
    c.count++;
    if (this.hangSignCounts.size < 4096 || this.hangSignCounts.has(key)) this.hangSignCounts.set(key, c);
  }

  /**
   * The live fast path's handle for a COLL line of a known process and comm pointer: undefined
   * when the process is unknown or the pointer has no current Init (such lines go through
   * ingest(), which keeps what they said). Valid while `epoch` is unchanged.
   */
  collTarget(processKey: string, ptr: string): CollTarget | undefined {
    const proc = this.processes.get(processKey);
    if (!proc) return undefined;
    const rank = this.rankOf(proc, ptr);
    if (rank === undefined) return undefined;
    return { proc, rank, comm: this.comms.get(rank.commKey) as CommState, epoch: this.epoch };
  }

  /** Counts one COLL line for a target from collTarget() (same epoch). */
  countTarget(t: CollTarget, op: string, opCount: number, ctx: LineContext): void {
    if (ctx.readMs !== undefined) t.proc.lastSeenMs = ctx.readMs;
    this.countColl(t.comm, t.rank, op, opCount, undefined, ctx);
  }

  /**
   * The head read of `source` did not reach its end (ringwatch started while the job ran): the COLL
   * lines counted so far are a fragment. Counting restarts for the ranks of its processes (marked
   * countFromInit = false, so "behind" falls back to opCount), and sequence-indexed windows of
   * their communicators are cleared so they cannot misalign.
   */
  markResumed(source: string): void {
    const procs = new Set<string>();
    for (const p of this.processes.values()) if (p.sources.has(source)) procs.add(p.key);
    for (const c of this.comms.values()) {
      let touched = false;
      for (const r of c.ranks.values()) {
        if (!procs.has(r.processKey)) continue;
        // Before the first scrape (the collector publishes nothing until this is settled): the
        // exported counter starts here too, comparable with other nodes' counts.
        r.countedBefore = 0;
        r.collectives = 0;
        r.countFromInit = false;
        touched = true;
      }
      if (!touched) continue;
      c.allCountedFromInit = false;
      c.seqOps.clear();
      c.pendingArrivals.clear();
      c.arrivals.length = 0;
      c.maxCollectives = Math.max(0, ...[...c.ranks.values()].map((r) => r.collectives));
    }
  }

  /** Removes a communicator and the rank records under it. */
  retireComm(key: string): void {
    this.comms.delete(key);
    this.epoch++;
  }

  /** Removes one rank record of a communicator. */
  retireRank(commKey: string, rank: number): void {
    this.comms.get(commKey)?.ranks.delete(rank);
    this.epoch++;
  }

  /** Removes a process (its ranks go with retireRank / when their comm empties). */
  retireProcess(key: string): void {
    const p = this.processes.get(key);
    if (!p) return;
    for (const commKey of p.comms.values()) {
      const c = this.comms.get(commKey);
      if (!c) continue;
      for (const [r, st] of c.ranks) if (st.processKey === key) c.ranks.delete(r);
      if (c.ranks.size === 0) this.comms.delete(commKey);
    }
    this.processes.delete(key);
    this.epoch++;
    for (const [src, k] of this.lastProcessBySource) if (k === key) this.lastProcessBySource.delete(src);
  }

  private processFor(ev: NcclEvent, ctx: LineContext): ProcessState | undefined {
    let key: string | undefined;
    if (ev.host !== undefined && ev.pid !== undefined) key = `${ev.host}:${ev.pid}`;
    else key = this.lastProcessBySource.get(ctx.source);
    if (key === undefined) return undefined;
    let p = this.processes.get(key);
    if (!p) {
      if (ev.host === undefined || ev.pid === undefined) return undefined;
      if (this.processes.size >= this.limits.maxProcesses) {
        this.droppedProcesses++;
        return undefined;
      }
      p = {
        key,
        host: ev.host,
        pid: ev.pid,
        sources: new Map(),
        comms: new Map(),
        ranksByPtr: new Map(),
        nets: new Set(),
        noIbDevice: false,
        netLinks: new Map(),
        gdrLinks: 0,
        gdrEnabled: 0,
        gdrDisabled: 0,
        warnings: [],
        chains: [],
        evidence: new Map(),
        lastSeenMs: ctx.readMs ?? 0,
        unresolvedColl: 0,
        unresolved: new Map(),
      };
      const v = this.versionBySource.get(ctx.source);
      if (v) p.version = v;
      this.processes.set(key, p);
    }
    p.sources.set(ctx.source, ctx.lineNo);
    if (ctx.readMs !== undefined) p.lastSeenMs = ctx.readMs;
    this.lastProcessBySource.set(ctx.source, key);
    return p;
  }

  private commKeyFor(proc: ProcessState, ev: InitEvent): string | undefined {
    if (ev.commId) return ev.commId;
    if (ev.parent !== undefined && ev.splitCount !== undefined && ev.color !== undefined) {
      const parentKey = proc.comms.get(ev.parent) ?? `${proc.key}/${ev.parent}`;
      return splitCommKey(parentKey, ev.splitCount, ev.color);
    }
    // Old NCCL (< 2.1x) prints no commId: the ranks of one process's comm cannot be grouped
    // across processes, so key it by process and pointer.
    return ev.comm ? `${proc.key}/${ev.comm}` : undefined;
  }

  private onInit(proc: ProcessState, ev: InitEvent, ctx: LineContext, where: string): void {
    if (ev.comm === undefined || ev.rank === undefined) return;
    const key = this.commKeyFor(proc, ev);
    if (key === undefined) return;
    let comm = this.comms.get(key);
    if (!comm) {
      if (this.comms.size >= this.limits.maxComms) {
        this.droppedComms++;
        return;
      }
      comm = {
        key,
        commId: ev.commId,
        nranks: ev.nranks,
        ranks: new Map(),
        seqOps: new SeqWindow(SEQ_WINDOW),
        pendingArrivals: new SeqWindow(SEQ_WINDOW),
        arrivals: [],
        gaps: [],
        allCountedFromInit: true,
        maxCollectives: 0,
        createdMs: lineTime(ev, ctx) ?? 0,
      };
      this.comms.set(key, comm);
    }
    proc.comms.set(ev.comm, key);
    const replaced = comm.ranks.get(ev.rank);
    const rank: RankState = {
      rank: ev.rank,
      processKey: proc.key,
      commKey: key,
      commPtr: ev.comm,
      nranks: ev.nranks,
      cudaDev: ev.commCudaDev ?? ev.cudaDev,
      nvmlDev: ev.nvmlDev,
      busId: ev.busId,
      collectives: 0,
      // A second Init of this rank (the same commId) starts its sequence again; the exported
      // counter goes on from what the record it replaces counted.
      countedBefore: replaced === undefined ? 0 : replaced.countedBefore + replaced.collectives,
      countFromInit: true,
      initWhere: where,
    };
    comm.ranks.set(ev.rank, rank);
    this.epoch++;
    proc.ranksByPtr.set(ev.comm, rank);
  }

  private onColl(proc: ProcessState, ev: CollEvent, ctx: LineContext): void {
    const st = this.rankOf(proc, ev.comm);
    if (st === undefined) {
      proc.unresolvedColl++;
      this.noteUnresolved(proc, ev, `${ctx.source}:${ctx.lineNo}`);
      return;
    }
    this.countColl(this.comms.get(st.commKey) as CommState, st, ev.op, opCountValue(ev.opCount), ev.ts, ctx);
  }

  /** The rank a process's comm pointer stands for, when its Init was seen and it is still current. */
  private rankOf(proc: ProcessState, ptr: string): RankState | undefined {
    const st = proc.ranksByPtr.get(ptr);
    if (st === undefined) return undefined;
    const comm = this.comms.get(st.commKey);
    return comm !== undefined && comm.ranks.get(st.rank) === st ? st : undefined;
  }

  private countColl(comm: CommState, st: RankState, op: string, opCount: number | undefined, ts: string | undefined, ctx: LineContext): void {
    const at = lineTimeOf(ts, ctx);
    st.collectives++;
    st.lastOp = op;
    st.lastOpCount = opCount;
    st.lastCollSource = ctx.source;
    st.lastCollLine = ctx.lineNo;
    if (at !== undefined) st.lastProgressMs = at;
    const seq = st.collectives;
    if (seq > comm.maxCollectives) {
      if (at !== undefined && comm.lastAdvanceMs !== undefined && !ctx.historical) pushBounded(comm.gaps, at - comm.lastAdvanceMs, GAP_WINDOW);
      comm.maxCollectives = seq;
      if (at !== undefined) comm.lastAdvanceMs = at;
    }
    // Sequence indexes line up across ranks only when every rank was counted from its Init line.
    if (!comm.allCountedFromInit) return;
    this.noteOp(comm, seq, st.rank, op, ctx);
    if (at !== undefined && !ctx.historical) this.noteArrival(comm, seq, st.rank, at);
  }

  private noteUnresolved(proc: ProcessState, ev: CollEvent, where: string): void {
    let u = proc.unresolved.get(ev.comm);
    if (!u) {
      if (proc.unresolved.size >= MAX_UNRESOLVED) return;
      u = { ptr: ev.comm, nranks: ev.nranks, cudaDev: ev.cudaDev, count: 0, opsByOpCount: new Map() };
      proc.unresolved.set(ev.comm, u);
    }
    u.count++;
    u.lastOp = ev.op;
    u.lastOpCount = ev.opCount;
    u.lastWhere = where;
    if (!u.opsByOpCount.has(ev.opCount)) {
      u.opsByOpCount.set(ev.opCount, { op: ev.op, where });
      if (u.opsByOpCount.size > SEQ_WINDOW) {
        const first = u.opsByOpCount.keys().next();
        if (!first.done) u.opsByOpCount.delete(first.value);
      }
    }
  }

  private noteOp(comm: CommState, seq: number, rank: number, op: string, ctx: LineContext): void {
    const seen = comm.seqOps.get(seq);
    if (!seen) {
      // The record of seq - SEQ_WINDOW leaves the window now: its object is reused (one per line otherwise).
      const old = comm.seqOps.displaced(seq);
      if (old === undefined) comm.seqOps.set(seq, { op, rank });
      else {
        old.op = op;
        old.rank = rank;
        old.mismatch = undefined;
        comm.seqOps.set(seq, old);
      }
      return;
    }
    if (seen.op !== op && !seen.mismatch) {
      seen.mismatch = { rank, op };
      if (!comm.mismatch) comm.mismatch = { seq, rankA: seen.rank, opA: seen.op, rankB: rank, opB: op, where: `${ctx.source}:${ctx.lineNo}` };
    }
  }

  private noteArrival(comm: CommState, seq: number, rank: number, at: number): void {
    const local = comm.ranks.size;
    if (local < 2) return;
    let a = comm.pendingArrivals.get(seq);
    if (!a) {
      a = { firstMs: at, lastMs: at, lastRank: rank, seen: 0 };
      comm.pendingArrivals.set(seq, a);
      comm.pendingArrivals.delete(seq - SEQ_WINDOW);
    }
    a.seen++;
    if (at >= a.lastMs) {
      a.lastMs = at;
      a.lastRank = rank;
    }
    if (a.seen >= local) {
      pushBounded(comm.arrivals, { lastRank: a.lastRank, spreadMs: a.lastMs - a.firstMs }, ARRIVAL_WINDOW);
      comm.pendingArrivals.delete(seq);
    }
  }

  /** GPUDirect RDMA said to be off (`GPU Direct RDMA Disabled ...`, a plugin's GDR-off line), `why` in its words. */
  private onGdrOff(proc: ProcessState | undefined, why: string, where: string): void {
    if (!proc) {
      pushBounded(this.orphanGdrDisabled, where, WARN_WINDOW);
      if (this.orphanGdrWhy.size < WARN_WINDOW) this.orphanGdrWhy.set(where, why);
      return;
    }
    proc.gdrDisabled++;
    proc.gdrOff ??= why;
    note(proc, "gdr_disabled", where);
  }

  private onWarn(proc: ProcessState | undefined, ev: WarnEvent, ctx: LineContext, where: string): void {
    this.warningCounts.set(ev.warnKind, (this.warningCounts.get(ev.warnKind) ?? 0) + 1);
    if (ev.gdrDisabled === true) this.onGdrOff(proc, ev.message.slice(0, 200), where);
    // A WARN of the NET/Socket plugin: this process moves data over sockets.
    if (proc && ev.message.startsWith("NET/Socket")) note(proc, "socket_warn", where);
    const rank = ev.launcher?.kind === "mpi" || ev.launcher?.kind === "rank" ? ev.launcherRank : undefined;
    pushBounded(
      proc?.warnings ?? this.orphanWarnings,
      {
        kind: ev.warnKind,
        message: ev.message.slice(0, 300),
        cudaDev: ev.cudaDev,
        rank,
        sizeMismatch: ev.sizeMismatch,
        localSize: ev.localSize,
        remoteSize: ev.remoteSize,
        error: ev.error,
        rc: ev.rc,
        peer: ev.peer,
        peerPort: ev.peerPort,
        ibStatus: ev.ibStatus,
        vendorErr: ev.vendorErr,
        mismatchRank: ev.mismatchRank,
        atMs: lineTime(ev, ctx) ?? 0,
        where,
      },
      WARN_WINDOW,
    );
  }

  private onTeardown(proc: ProcessState, ev: TeardownEvent, ctx: LineContext): void {
    const at = lineTime(ev, ctx) ?? ctx.readMs ?? 0;
    const mark = (commKey: string, ptr: string | undefined): void => {
      const c = this.comms.get(commKey);
      if (!c) return;
      for (const r of c.ranks.values()) if (r.processKey === proc.key && (ptr === undefined || r.commPtr === ptr)) {
          r.tornDownMs = at;
          r.tornDownHow = ev.what;
        }
    };
    if (ev.comm !== undefined) {
      const key = proc.comms.get(ev.comm);
      if (key !== undefined) mark(key, ev.comm);
      return;
    }
    // No pointer printed (old versions): every communicator of the process ends.
    for (const key of new Set(proc.comms.values())) mark(key, undefined);
  }
}

/** When a line was written: its own timestamp, else the read time; history: the file's mtime at most. */
function lineTime(ev: NcclEvent, ctx: LineContext): number | undefined {
  return lineTimeOf(ev.ts, ctx);
}

function lineTimeOf(printed: string | undefined, ctx: LineContext): number | undefined {
  const ts = ncclTimestampMs(printed);
  if (ctx.historical) return ts ?? ctx.mtimeMs;
  return ctx.readMs ?? ts;
}

/** opCount as printed (hex) → number; undefined when it is not hex. */
function opCountValue(hex: string): number | undefined {
  if (hex.length === 0 || hex.length > 16) return undefined;
  const v = Number.parseInt(hex, 16);
  return Number.isFinite(v) && /^[0-9a-fA-F]+$/.test(hex) ? v : undefined;
}

function note(p: ProcessState, fact: string, where: string): void {
  if (!p.evidence.has(fact)) p.evidence.set(fact, where);
}

function pushBounded<T>(arr: T[], item: T, max: number): void {
  arr.push(item);
  if (arr.length > max) arr.splice(0, arr.length - max);
}
