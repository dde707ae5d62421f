/**
 * InspectorFeed: the lines of every NCCL Inspector file on this node in, per communicator and
 * rank state out. Feed it each complete line of each file (line(path, text), or the LineSink
 * of sink(path) for the log follower); snapshot() gives what the metrics need and forgets
 * communicators with no record for retireAfterMs. Synchronous, never throws on input, bounded by
 * InspectorLimits (what does not fit is counted in stats().skipped).
 */
import { idlest, OwnerShares } from "../../owner-shares.js";
import { CommState } from "./comm-state.js";
import { parseInspectorLine } from "./parse.js";
import {
  DEFAULT_BANDWIDTH,
  DEFAULT_LIMITS,
  DEFAULT_STRAGGLER,
  type BandwidthOptions,
  type InspectorLimits,
  type InspectorRecord,
  type InspectorSnapshot,
  type InspectorStats,
  type SkipCounts,
  type StragglerOptions,
} from "./types.js";

export interface InspectorFeedOptions {
  limits?: Partial<InspectorLimits>;
  straggler?: Partial<StragglerOptions>;
  bandwidth?: Partial<BandwidthOptions>;
  /** Clock (epoch ms); default Date.now. */
  now?: () => number;
  /**
   * The agent's clock less the wall clock (ms), which the records' dump times are on: a step of
   * the system clock that the agent's steady clock has not bled off yet (agent/steady-clock.ts).
   * Default 0.
   */
  wallSkew?: () => number;
}

/** How far a record's dump time may be ahead of the agent's clock and still be taken as its time (ms). */
const CLOCK_SKEW_MS = 60_000;

export class InspectorFeed {
  private readonly limits: InspectorLimits;
  private readonly stragglerOpts: StragglerOptions;
  private readonly bwOpts: BandwidthOptions;
  private readonly now: () => number;
  private readonly wallSkew: () => number;
  private readonly comms = new Map<string, CommState>();
  private rankCount = 0;
  /** Communicators per owner of the files that named them. */
  private readonly owners = new OwnerShares();
  private readonly counts: InspectorStats = {
    lines: 0,
    records: 0,
    skipped: { garbage: 0, duplicate: 0, comm_limit: 0, rank_limit: 0 },
    commsRetired: 0,
  };

  constructor(opts: InspectorFeedOptions = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.stragglerOpts = { ...DEFAULT_STRAGGLER, ...opts.straggler };
    this.bwOpts = { ...DEFAULT_BANDWIDTH, ...opts.bandwidth };
    this.now = opts.now ?? Date.now;
    this.wallSkew = opts.wallSkew ?? ((): number => 0);
  }

  /** One complete line (no newline) of the Inspector file at `path`. */
  line(path: string, text: string, owner = -1): void {
    this.counts.lines++;
    const r = parseInspectorLine(text);
    if (r === undefined) {
      this.skip(path, "garbage");
      return;
    }
    this.record(r, path, owner);
  }

  /** A LineSink (collectors/follow) for one file, whose owner (uid) its communicators count against. */
  sink(path: string, owner = -1): { line(text: string): void } {
    return { line: (text: string) => this.line(path, text, owner) };
  }

  /**
   * One parsed record; `path` names its file in stats().lastSkip. The communicator cap is shared
   * per owner of the files (owner-shares.ts): another user's records cannot push a job's out.
   */
  record(r: InspectorRecord, path = "", owner = -1): void {
    const now = this.now();
    // The dump time is the wall clock's; the agent's clock is steady (agent/steady-clock.ts): the
    // difference of the two (a step of the system clock not yet bled off) is taken out.
    const dumped = r.dumpTimestampSeconds !== undefined ? r.dumpTimestampSeconds * 1000 + this.wallSkew() : NaN;
    // The writer runs on this node: its dump time is on the agent's clock (old for a file's head read at start).
    const t = dumped <= now + CLOCK_SKEW_MS ? dumped : now;
    let comm = this.comms.get(r.commId);
    if (comm === undefined) {
      if (this.comms.size >= this.limits.maxComms && !this.makeRoomFor(owner)) return this.skip(path, "comm_limit");
      comm = new CommState(r.commId, r.nranks, this.limits, owner);
      this.comms.set(r.commId, comm);
      this.owners.add(owner);
    }
    let st = comm.ranks.get(r.rank);
    if (st === undefined) {
      if (comm.ranks.size >= this.limits.maxRanksPerComm || (this.rankCount >= this.limits.maxRanks && !this.makeRoomFor(owner, comm))) {
        if (comm.ranks.size === 0) this.forget(comm);
        return this.skip(path, "rank_limit");
      }
      st = comm.addRank(r.rank, this.bwOpts);
      this.rankCount++;
    }
    if (r.kind === "coll" && st.seen(r.op, r.seq)) return this.skip(path, "duplicate");
    this.counts.records++;
    if (r.commName !== undefined) comm.commName = r.commName;
    if (r.nnodes !== undefined) comm.nnodes = r.nnodes;
    if (r.hostname !== undefined) st.hostname = r.hostname;
    if (r.pid !== undefined) st.pid = r.pid;
    comm.touch(t);
    if (t > st.lastRecordMs) st.lastRecordMs = t;
    if (r.kind === "p2p") {
      st.p2p++;
      return;
    }
    st.collectives++;
    st.lastSeq = r.seq;
    st.lastOp = r.op;
    // Only GPU-timed records are compared: CPU timings include launch and host delays.
    if (r.timingSource === undefined || r.timingSource === "kernel_gpu") comm.addTimed(st, r, t);
  }

  /** Per communicator, sorted by id; communicators silent for retireAfterMs are forgotten first. */
  snapshot(now = this.now()): InspectorSnapshot {
    for (const [id, c] of this.comms) {
      if (now - c.lastRecordMs <= this.limits.retireAfterMs || this.comms.get(id) !== c) continue;
      this.forget(c);
      this.counts.commsRetired++;
    }
    const comms = [...this.comms.values()]
      .sort((a, b) => (a.commId < b.commId ? -1 : a.commId > b.commId ? 1 : 0))
      .map((c) => c.snapshot(now, this.stragglerOpts));
    return { comms, stats: this.stats() };
  }

  stats(): InspectorStats {
    const c = this.counts;
    const out: InspectorStats = { lines: c.lines, records: c.records, skipped: { ...c.skipped }, commsRetired: c.commsRetired };
    if (c.lastSkip !== undefined) out.lastSkip = { ...c.lastSkip };
    return out;
  }

  /** Communicators and ranks held now (for tests of the bounds). */
  size(): { comms: number; ranks: number } {
    return { comms: this.comms.size, ranks: this.rankCount };
  }

  private forget(c: CommState): void {
    this.comms.delete(c.commId);
    this.rankCount -= c.ranks.size;
    this.owners.remove(c.owner);
  }

  /**
   * A cap is full (communicators, or ranks in all): an owner with at least two more communicators
   * gives way, its quietest one (never `keep`, the one a rank is being added to).
   */
  private makeRoomFor(owner: number, keep?: CommState): boolean {
    const heavy = this.owners.yielderTo(owner);
    if (heavy === undefined) return false;
    const victim = idlest(
      this.comms.values(),
      (c) => c.owner === heavy && c !== keep,
      (a, b) => a.lastRecordMs < b.lastRecordMs,
    );
    if (victim === undefined) return false;
    this.forget(victim);
    this.counts.skipped.comm_limit++;
    return true;
  }

  private skip(path: string, reason: keyof SkipCounts): void {
    this.counts.skipped[reason]++;
    this.counts.lastSkip = { path, reason };
  }
}
