/**
 * Folds parser events into per-process, per-communicator and per-rank state. Pure apart from the
 * time passed in with each line; no I/O. Bounded: communicators beyond maxComms are dropped (and
 * counted), per-communicator windows keep the last SEQ_WINDOW indexes, warnings the last few.
 */
import { splitCommKey } from "../parse/init.js";
import type { CollEvent, InitEvent, NcclEvent, TeardownEvent, WarnEvent } from "../parse/types.js";
import { MAX_INIT_STARTS, sameCollective, type CommState, type ProcessState, type RankState, type WarningRecord } from "./model.js";
import { pushBounded } from "./bounded.js";
import { noteNetList, noteNetUse } from "./net-devices.js";
import { gdrOffText, noteFailureFacts } from "./failures.js";
import { PytorchLog } from "../pytorch/log.js";
import { SeqWindow } from "./seq-window.js";
import { ncclTimestampMs } from "./times.js";
import { idlest, OwnerShares } from "../../../owner-shares.js";

export interface LineContext {
  /** File the line came from. */
  source: string;
  /** 1-based line number in that file as far as ringwatch read it (for evidence `file:line`). */
  lineNo: number;
  /** When the line was read (live), or undefined (offline: only line timestamps count). */
  readMs?: number;
  /**
   * Live: the line was not there yet at this time (ms): the previous read of the file that found
   * new lines. With readMs it brackets when an untimestamped line was written; unknown (undefined,
   * -Infinity) for the first read of a file.
   */
  sinceMs?: number;
  /** Read from the head of a file that existed before ringwatch started: time unknown. */
  historical?: boolean;
  /** The file's mtime, the latest time a historical line can have been written. */
  mtimeMs?: number;
  /** The file's owner (uid), live; -1 or undefined offline (one owner). */
  owner?: number;
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
/** Aborted communicators kept, the first ones: a large job's ranks (what analyze reads of them; live never does). */
const MAX_ABORTS = 4096;
const MAX_UNRESOLVED = 16;
/** Socket channel peers kept per process: enough to name them in a finding. */
const MAX_SOCKET_PEERS = 64;

export type { HangSignRecord, WatchdogRecord, WorkStatusRecord } from "../pytorch/log.js";
export { pgKeyOf, pgLabelOf } from "../pytorch/log.js";

/** A channel through the network in a line that names no process. */
/** A rank whose communicator was aborted (PyTorch aborts them after a timeout or an error). */
export interface AbortRecord {
  rank: number;
  nranks?: number;
  processKey: string;
  where: string;
}

export interface OrphanNetLink {
  where: string;
  net: string;
  gdr: boolean;
}

export class Tracker {
  readonly processes = new Map<string, ProcessState>();
  readonly comms = new Map<string, CommState>();
  /** WARN lines by kind since start (for ringwatch_nccl_warnings_total). */
  readonly warningCounts = new Map<string, number>();
  /** What PyTorch's lines said (watchdogs, status, hang signs, DETAIL, errors). */
  readonly pt = new PytorchLog();
  /** WARN lines that name no process (a line quoted alone, or a prefix without host:pid). */
  readonly orphanWarnings: WarningRecord[] = [];
  /** `GPU Direct RDMA Disabled for GPU ...` lines that name no process: where each was. */
  readonly orphanGdrDisabled: string[] = [];
  /** What each of those lines said (where → `GPU ca000 / HCA 0 (distance 7 > 4)`). */
  readonly orphanGdrWhy = new Map<string, string>();
  /** Channels through the network in lines that name no process (`[0] NCCL INFO Ring 00 : ... via NET/IB/0`). */
  readonly orphanNetLinks: OrphanNetLink[] = [];
  /** Communicators whose abort completed (`comm 0x.. rank 11 nranks 16 ... - Abort COMPLETE`), latest last. */
  readonly aborts: AbortRecord[] = [];
  droppedComms = 0;
  /** Communicators dropped (or given up) for the cap, by the owner whose communicators filled it. */
  readonly droppedCommsByOwner = new Map<number, number>();
  /** Processes per owner (ProcessState.owner), for the process cap. */
  private readonly processShares = new OwnerShares();
  /** Communicators per owner (CommState.owner): the cap is shared among owners (owner-shares.ts). */
  private readonly commsPerOwner = new OwnerShares();
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
    // A channel line without its host:pid is no line of the process before it (another writer's, cut).
    const proc = ev.kind === "channel" && ev.headerless === true ? undefined : this.processFor(ev, ctx);
    if (ev.kind === "coll") {
      if (proc) {
        if (proc.lastEvent !== "other" || proc.chains.length > 0) noteFailureFacts(proc, ev, "");
        this.onColl(proc, ev, ctx);
      }
      return;
    }
    const where = `${ctx.source}:${ctx.lineNo}`;
    if (proc) noteFailureFacts(proc, ev, where);
    if (this.pt.ingest(ev, proc?.key, where, ctx.historical === true ? ctx.mtimeMs : ctx.readMs)) return;
    switch (ev.kind) {
      case "version":
        if (proc) proc.version = ev.version;
        else this.versionBySource.set(ctx.source, ev.version);
        return;
      case "init":
        if (!proc) return;
        if (ev.phase === "start") noteInitStart(proc, ev, where);
        else {
          if (ev.comm !== undefined) proc.initStarts.delete(ev.comm);
          this.onInit(proc, ev, ctx, where);
        }
        return;
      case "net":
        if (!proc) return;
        if (ev.what === "no_device") {
          proc.noIbDevice = true;
          note(proc, "no_ib", where);
        } else if (ev.what === "device") noteNetList(proc, ev);
        else if (ev.what === "using") {
          noteNetList(proc, ev);
          const ll = ev.devices?.find((d) => d.linkLayer)?.linkLayer;
          proc.nets.add(ev.net === "IB" && ll === "RoCE" ? "RoCE" : ev.net);
          if (ev.net === "Socket" && ev.devices?.length) proc.socketIfs ??= ev.devices.map((d) => `${d.name}:${d.addr ?? ""}`).join(" ");
        } else if (ev.what === "selected") {
          proc.selectedNet = ev.net;
          if (ev.net === "Socket") note(proc, "socket_picked", where);
        }
        return;
      case "gdr":
        if (ev.enabled) {
          if (proc) proc.gdrEnabled++;
          if (proc && ev.scope === "gpu") proc.gdrEnabledGpu++;
        } else this.onGdrOff(proc, gdrOffText(ev), where);
        return;
      case "channel":
        if (!proc) {
          if (ev.headerless === true && ev.transport === "NET") pushBounded(this.orphanNetLinks, { where, net: ev.net ?? "NET", gdr: ev.gdr }, WARN_WINDOW);
          return;
        }
        // The rank that printed it: the sender, or the receiver of a `[receive]` line, and of 2.2-2.3's
        // untagged NET line (`Ring 00 : 0 -> 1 via NET/IB/0`, printed by netRecvSetup: peer -> me).
        proc.lineRank ??= ev.dir === "receive" || (ev.dir === undefined && ev.transport === "NET") ? ev.to : ev.from;
        if (ev.transport !== "NET" && ev.transport !== "COLLNET") return;
        proc.netLinks.set(ev.net ?? "NET", (proc.netLinks.get(ev.net ?? "NET") ?? 0) + 1);
        note(proc, (ev.net ?? "").startsWith("Socket") ? "socket_link" : "net_link", where);
        // The other end of a socket channel moves data over sockets as well (its own line may be cut off).
        const peer = ev.dir === "receive" ? ev.from : ev.to;
        if ((ev.net ?? "").startsWith("Socket") && peer !== undefined && proc.socketPeers.size < MAX_SOCKET_PEERS) proc.socketPeers.add(peer);
        // NET/IB, and plugins built on it (IBext_v8): the index is into the NET/IB Using list.
        if (ev.netDev !== undefined && ev.transport === "NET" && (ev.net ?? "").startsWith("IB")) noteNetUse(proc, ev.cudaDev, ev.netDev);
        if (ev.gdr) {
          proc.gdrLinks++;
          note(proc, "gdrdma", where);
        }
        return;
      case "warn":
        this.onWarn(proc, ev, ctx, where);
        return;
      case "teardown":
        // The rank the line names is the process's own (`Destroyed comm 0x.. rank 4`).
        if (proc && ev.rank !== undefined) proc.lineRank ??= ev.rank;
        if (proc && ev.phase === "complete") this.onTeardown(proc, ev, ctx);
        if (proc && ev.phase === "complete" && ev.what === "abort" && ev.rank !== undefined && this.aborts.length < MAX_ABORTS)
          this.aborts.push({ rank: ev.rank, nranks: ev.nranks, processKey: proc.key, where });
        return;
      default:
        return;
    }
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
      c.stragglerHold.clear();
      c.maxCollectives = Math.max(0, ...[...c.ranks.values()].map((r) => r.collectives));
    }
  }

  /** Removes a communicator and the rank records under it. */
  retireComm(key: string): void {
    this.dropComm(key);
    this.epoch++;
  }

  private dropComm(key: string): void {
    const c = this.comms.get(key);
    if (c === undefined) return;
    this.comms.delete(key);
    this.commsPerOwner.remove(c.owner);
  }

  /**
   * The cap is full and owner's line makes a new communicator: an owner with at least two more
   * gives way (owner-shares.ts), its idlest one first (no collective counted, then the oldest). One
   * user's process announcing hundreds of communicators cannot push out another user's job.
   * Returns whether there is room now.
   */
  private makeRoomFor(owner: number): boolean {
    const heavy = this.commsPerOwner.yielderTo(owner);
    if (heavy === undefined) return false;
    const victim = idlest(this.comms.values(), (c) => c.owner === heavy, idler);
    if (victim === undefined) return false;
    this.noteDropped(heavy);
    this.retireComm(victim.key);
    return true;
  }

  /** The process cap is full: the heaviest owner's quietest process gives way (as for communicators). */
  private makeRoomForProcess(owner: number): boolean {
    const heavy = this.processShares.yielderTo(owner);
    if (heavy === undefined) return false;
    const victim = idlest(
      this.processes.values(),
      (p) => p.owner === heavy,
      (a, b) => a.lastSeenMs < b.lastSeenMs,
    );
    if (victim === undefined) return false;
    this.droppedProcesses++;
    this.retireProcess(victim.key);
    return true;
  }

  private noteDropped(owner: number): void {
    this.droppedComms++;
    this.droppedCommsByOwner.set(owner, (this.droppedCommsByOwner.get(owner) ?? 0) + 1);
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
      if (c.ranks.size === 0) this.dropComm(commKey);
    }
    this.processes.delete(key);
    this.processShares.remove(p.owner);
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
      const owner = ctx.owner ?? -1;
      if (this.processes.size >= this.limits.maxProcesses && !this.makeRoomForProcess(owner)) {
        this.droppedProcesses++;
        return undefined;
      }
      this.processShares.add(owner);
      p = {
        owner,
        key,
        host: ev.host,
        pid: ev.pid,
        sources: new Map(),
        comms: new Map(),
        ranksByPtr: new Map(),
        nets: new Set(),
        noIbDevice: false,
        netLinks: new Map(),
        socketPeers: new Set(),
        gdrLinks: 0,
        ibDevices: [],
        netDevUse: new Map(),
        gdrEnabled: 0,
        gdrEnabledGpu: 0,
        gdrDisabled: 0,
        warnings: [],
        chains: [],
        evidence: new Map(),
        lastSeenMs: ctx.readMs ?? 0,
        unresolvedColl: 0,
        unresolved: new Map(),
        initStarts: new Map(),
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
      const owner = ctx.owner ?? -1;
      if (this.comms.size >= this.limits.maxComms && !this.makeRoomFor(owner)) {
        this.noteDropped(owner);
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
        arrivalCount: 0,
        stragglerHold: new Map(),
        gaps: [],
        allCountedFromInit: true,
        maxCollectives: 0,
        createdMs: lineTime(ev, ctx) ?? 0,
        owner,
      };
      this.comms.set(key, comm);
      this.commsPerOwner.add(owner);
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
    if (!ctx.historical) this.noteArrival(comm, seq, st.rank, ts, ctx);
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
    if (!sameCollective(seen.op, op) && !seen.mismatch) {
      seen.mismatch = { rank, op };
      if (!comm.mismatch) comm.mismatch = { seq, rankA: seen.rank, opA: seen.op, rankB: rank, opB: op, where: `${ctx.source}:${ctx.lineNo}` };
    }
  }

  /**
   * Folds one rank's arrival at `seq` in. Its time is an interval, never a point: what the line
   * prints (NCCL_DEBUG_TIMESTAMP_LEVELS) to its resolution, else between the read that found it and
   * the read of the file before. The rank surely last is the one whose earliest possible time is
   * after every other rank's latest; its lead is the least it can have been late by. Read times
   * of two files read at different moments alone never make a lead (docs/nccl.md, "Stragglers").
   */
  private noteArrival(comm: CommState, seq: number, rank: number, ts: string | undefined, ctx: LineContext): void {
    const local = comm.ranks.size;
    if (local < 2) return;
    const printed = ncclTimestampMs(ts);
    let lo: number;
    let hi: number;
    if (printed !== undefined) {
      lo = printed;
      hi = printed + timestampResolutionMs(ts as string);
    } else if (ctx.readMs !== undefined) {
      lo = ctx.sinceMs ?? -Infinity;
      hi = ctx.readMs;
    } else return;
    let a = comm.pendingArrivals.get(seq);
    if (!a) {
      a = { lastRank: rank, lastLo: lo, lastHi: hi, othersHi: -Infinity, firstHi: hi, seen: 1 };
      comm.pendingArrivals.set(seq, a);
      comm.pendingArrivals.delete(seq - SEQ_WINDOW);
    } else {
      a.seen++;
      if (hi < a.firstHi) a.firstHi = hi;
      if (lo > a.lastLo) {
        a.othersHi = Math.max(a.othersHi, a.lastHi);
        a.lastRank = rank;
        a.lastLo = lo;
        a.lastHi = hi;
      } else a.othersHi = Math.max(a.othersHi, hi);
    }
    if (a.seen >= local) {
      const lead = a.lastLo - a.othersHi;
      const sure = Number.isFinite(lead) && lead > 0;
      pushBounded(comm.arrivals, { lastRank: sure ? a.lastRank : -1, leadMs: sure ? lead : 0, atMs: a.firstHi }, ARRIVAL_WINDOW);
      comm.arrivalCount++;
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
    const rank = (ev.launcher?.kind === "mpi" || ev.launcher?.kind === "rank" ? ev.launcherRank : undefined) ?? ev.selfRank;
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
        duplicateRank: ev.duplicateRank,
        sharedGpuRank: ev.sharedGpuRank,
        peerRank: ev.peerRank,
        source: ev.file,
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
      for (const r of c.ranks.values())
        if (r.processKey === proc.key && (ptr === undefined || r.commPtr === ptr)) {
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

/** How finely a printed timestamp tells time (ms): 1000 for whole seconds, 1 for ms or finer. */
function timestampResolutionMs(ts: string): number {
  if (ts.charCodeAt(19) !== 46) return 1000;
  let digits = 0;
  while (digits < 3 && ts.charCodeAt(20 + digits) >= 48 && ts.charCodeAt(20 + digits) <= 57) digits++;
  return 10 ** (3 - digits);
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

/** Whether a is a better communicator to give way than b: none counted before counted, then the older. */
function idler(a: CommState, b: CommState): boolean {
  const ea = a.maxCollectives === 0;
  const eb = b.maxCollectives === 0;
  if (ea !== eb) return ea;
  return (a.lastAdvanceMs ?? a.createdMs) < (b.lastAdvanceMs ?? b.createdMs);
}

/** A rank's Init START: kept until its Init COMPLETE, for "init never completed" (findings/init.ts). */
function noteInitStart(proc: ProcessState, ev: InitEvent, where: string): void {
  if (ev.comm === undefined || (proc.initStarts.size >= MAX_INIT_STARTS && !proc.initStarts.has(ev.comm))) return;
  proc.initStarts.set(ev.comm, { rank: ev.rank, nranks: ev.nranks, commId: ev.commId, cudaDev: ev.commCudaDev ?? ev.cudaDev, where });
}
