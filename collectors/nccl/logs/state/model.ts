/**
 * What ringwatch knows about the NCCL processes, communicators and ranks it reads logs of.
 * Built by Tracker from parser events; read by the detectors (detect/) and the metrics.
 * Every map here is bounded: see Tracker's limits.
 */
import type { WarnKind } from "../parse/types.js";
import type { SeqWindow } from "./seq-window.js";

/** One writer of NCCL lines: `host:pid`. */
export interface ProcessState {
  key: string;
  host: string;
  pid: number;
  /** NCCL version (`2.21.5+cuda12.4`) once seen. */
  version?: string;
  /** Log files this process was read from (path → last line number read). */
  sources: Map<string, number>;
  /** comm pointer (process-local) → communicator key. */
  comms: Map<string, string>;
  /** comm pointer (process-local) → this process's rank in that communicator. */
  ranksByPtr: Map<string, RankState>;
  /** Networks NCCL said it uses: "IB", "RoCE", "Socket", a plugin name. */
  nets: Set<string>;
  /** `NET/IB : No device found` or libibverbs missing: NCCL fell back to sockets. */
  noIbDevice: boolean;
  /** The network `Using network Socket` (`IBext_v8`, ...) named: what NCCL picked between nodes. */
  selectedNet?: string;
  /** Channel links that went over the network, by transport (`IB`, `Socket`), and whether any used GDRDMA. */
  netLinks: Map<string, number>;
  /** The ranks at the other end of its NET/Socket channels (a few): they use sockets too. */
  socketPeers: Set<number>;
  gdrLinks: number;
  /** `GPU Direct RDMA Enabled|Disabled` lines. */
  gdrEnabled: number;
  /** `GPU Direct RDMA Enabled for GPU ...` lines: a GPU that uses it (`Enabled for HCA 0` says only that the HCA can). */
  gdrEnabledGpu: number;
  gdrDisabled: number;
  /** NET/IB's devices as its `Using` line listed them (bounded; net-devices.ts). */
  ibDevices: { index: number; device: string; port: number }[];
  /** NET device indexes the channel lines went through, by the CUDA device in their header (-1: none printed). */
  netDevUse: Map<number, Set<number>>;
  /** NET/Socket's interfaces as its `Using` line listed them: `lo:127.0.0.1`. */
  socketIfs?: string;
  /** What the first `GPU Direct RDMA Disabled` (or a plugin's GDR-off) line said: `GPU ca000 / HCA 0 (distance 7 > 4)`. */
  gdrOff?: string;
  warnings: WarningRecord[];
  /** NCCL's error-return chains (`misc/socket.cc:47 -> 3`) of this process, oldest first (bounded; failures.ts). */
  chains: RetcodeChain[];
  /** What the last event of this process was, to join retcode lines into one chain and tie a chain to its WARN. */
  lastEvent?: "warn" | "retcode" | "other";
  /** The global rank a launcher's prefix gave this process's lines (`[1,4]<stdout>:`, `[rank3]:`). */
  launcherRank?: number;
  /**
   * srun --label's task number on this process's lines (`201: `): SLURM_PROCID, the global rank where
   * srun starts a task per GPU, a node's number where each task starts a node's processes
   * (torchrun). Only analyze's ranksOf takes it for a rank, where the logs show it is one.
   */
  srunTask?: number;
  /** First `file:line` of a few transport facts: no_ib, socket_link, socket_warn, ib_link, gdr_disabled, gdrdma. */
  evidence: Map<string, string>;
  /** Last time a line of this process was read (ms). */
  lastSeenMs: number;
  /** The owner (uid) of the file of its first line; -1 offline. The process cap is shared among owners. */
  owner: number;
  /** COLL lines whose comm pointer had no Init COMPLETE line we saw (excerpts, init cut off). */
  unresolvedColl: number;
  /** Per unresolved comm pointer: what its COLL lines said (bounded), for offline grouping by opCount. */
  unresolved: Map<string, UnresolvedComm>;
  /** Set when <procfs>/<pid> was found gone (ms). */
  goneSinceMs?: number;
  /**
   * The rank the first line of its own that names one gave: a channel or ring line
   * (`Channel 00/0 : 1[0] -> 0[0] [receive]`: 0), a teardown (`Destroyed comm 0x.. rank 4`: 4).
   */
  lineRank?: number;
  /** Init START lines with no Init COMPLETE yet, by comm pointer (bounded: MAX_INIT_STARTS). */
  initStarts: Map<string, InitStart>;
}

/** A rank's `Init START` line: the communicator it is joining, until its `Init COMPLETE`. */
export interface InitStart {
  rank?: number;
  nranks?: number;
  commId?: string;
  cudaDev?: number;
  where: string;
}

/** Init STARTs kept per process: a process joins a few communicators at a time. */
export const MAX_INIT_STARTS = 64;

export interface UnresolvedComm {
  ptr: string;
  nranks?: number;
  cudaDev?: number;
  count: number;
  lastOp?: string;
  lastOpCount?: string;
  /** opCount (hex) → op, last SEQ_WINDOW. */
  opsByOpCount: Map<string, { op: string; where: string }>;
  lastWhere?: string;
}

export interface WarningRecord {
  kind: WarnKind;
  message: string;
  /** `[n]` of the line's header. */
  cudaDev?: number;
  /** The launcher's global rank, for a line of no known process (`[rank3]: NET/OFI ...`). */
  rank?: number;
  peer?: string;
  peerPort?: number;
  ibStatus?: number;
  vendorErr?: number;
  mismatchRank?: number;
  duplicateRank?: number;
  sharedGpuRank?: number;
  /** The rank whose end of the connection failed, where the line names it (PyTorch's ncclUniqueId fetch). */
  peerRank?: number;
  sizeMismatch?: "data" | "bootstrap";
  localSize?: number;
  remoteSize?: number;
  /** The system's or provider's words (`Connection reset by peer`, `UNDELIVERABLE`), and a plugin's error number. */
  error?: string;
  rc?: number;
  /** NCCL's source file that printed it (`ras/client_support.cc`), where the line names one. */
  source?: string;
  atMs: number;
  /** `file:line` where it was read. */
  where: string;
}

/**
 * One error-return chain: consecutive `file:line -> code` lines of a process, each a frame further
 * up NCCL's stack (a frame seen again starts a new chain).
 */
export interface RetcodeChain {
  /** ncclResult_t: 1 CUDA, 2 system, 3 internal, 4 invalid argument, 5 invalid usage, 6 remote, 7 in progress. */
  code: number;
  /** `misc/socket.cc:47`, ... first (deepest) to last; at most a few kept, `frameCount` counts all. */
  frames: string[];
  frameCount: number;
  cudaDev?: number;
  /** `[Proxy Thread]`, `[Async thread]` when the last frame has one. */
  context?: string;
  /** `file:line` of the log lines: first and last. */
  firstWhere: string;
  lastWhere: string;
  /** `file:line` (of the log) of the WARN of this process right before the chain. */
  afterWarn?: string;
  /** The process went on after it (Init COMPLETE, channels, collectives): NCCL handled the error. */
  recovered: boolean;
}

/** One rank of one communicator, as seen in one process's log. */
export interface RankState {
  rank: number;
  processKey: string;
  commKey: string;
  commPtr: string;
  nranks?: number;
  cudaDev?: number;
  nvmlDev?: number;
  busId?: string;
  /** COLL lines counted since ringwatch began reading this rank (the rank entered that many collectives). */
  collectives: number;
  /**
   * COLL lines counted before `collectives` started again (a second Init of the rank, counting
   * restarted after a resumed read): ringwatch_nccl_rank_progress counts the sum, so it never goes down.
   */
  countedBefore: number;
  /** True when counting began at the communicator's Init line (the count is the real sequence). */
  countFromInit: boolean;
  lastOp?: string;
  /** NCCL's opCount of the last COLL line (parsed from its hex). */
  lastOpCount?: number;
  /** When the last COLL line was written (ms): line timestamp, read time, or file mtime for history. */
  lastProgressMs?: number;
  tornDownMs?: number;
  /** How: `destroy` (clean end) or `abort` (an error or PyTorch's watchdog took it down). */
  tornDownHow?: "abort" | "destroy";
  /** Where the last COLL line was read (file and line number; see whereOf). */
  lastCollSource?: string;
  lastCollLine?: number;
  /** `file:line` of the Init COMPLETE line. */
  initWhere?: string;
}

/** `file:line` of a rank's last COLL line. */
export function lastCollWhere(r: RankState): string | undefined {
  return r.lastCollSource === undefined ? undefined : `${r.lastCollSource}:${r.lastCollLine ?? 0}`;
}

/** Ops seen at one sequence index of a communicator, for mismatch detection. */
export interface SeqOps {
  op: string;
  rank: number;
  mismatch?: { rank: number; op: string };
}

/**
 * The ranks' arrivals at one sequence index so far. Each arrival is an interval [lo, hi] of epoch
 * ms: when the line was written, as far as its clock can tell (a printed timestamp and its
 * resolution, or the read that found it and the read before: see Tracker.arrivalOf).
 */
export interface PendingArrival {
  /** The rank with the latest `lo` (the one most surely last), its lo and hi. */
  lastRank: number;
  lastLo: number;
  lastHi: number;
  /** Latest `hi` of every other rank. */
  othersHi: number;
  /** Earliest `hi` of any rank: when the collective had surely begun. */
  firstHi: number;
  seen: number;
}

export interface ArrivalRecord {
  /**
   * The rank surely last to arrive at this sequence index, or -1 when the clocks cannot tell
   * (the intervals overlap: ranks that wrote in the same ms, or lines read in the same pass).
   */
  lastRank: number;
  /** How much later than every other local rank it arrived, at least (ms): lo(last) - max hi(others); 0 with lastRank -1. */
  leadMs: number;
  /** When the first rank had surely arrived (epoch ms). */
  atMs: number;
}

/** What the straggler verdict keeps between evaluations (detect/straggler.ts), per rank. */
export interface StragglerHold {
  /** The window named the rank continuously since this evaluation time (ms) and arrival count. */
  sinceMs: number;
  sinceCount: number;
  raised: boolean;
  /** Raised, and the window has stopped naming it since (ms, arrival count). */
  offSinceMs?: number;
  offSinceCount?: number;
}

/** A communicator: the ranks of one commId (or split key) seen on this node. */
export interface CommState {
  key: string;
  /** `commId` as NCCL prints it, or undefined for split communicators keyed otherwise. */
  commId?: string;
  nranks?: number;
  ranks: Map<number, RankState>;
  /** Sequence index (1-based count) → op of the first rank there; bounded window. */
  seqOps: SeqWindow<SeqOps>;
  /** A collective-type mismatch seen: sequence index, ranks and ops. */
  mismatch?: { seq: number; rankA: number; opA: string; rankB: number; opB: string; where?: string };
  /** Arrivals at sequence indexes not yet reached by every local rank. */
  pendingArrivals: SeqWindow<PendingArrival>;
  /** Finished arrival records, newest last (bounded). */
  arrivals: ArrivalRecord[];
  /** Arrival records finished since the communicator was first seen (or counting restarted). */
  arrivalCount: number;
  /** The straggler verdict's hysteresis, per rank (detect/straggler.ts keeps it). */
  stragglerHold: Map<number, StragglerHold>;
  /** Gaps (ms) between advances of the communicator's furthest rank, newest last (bounded). */
  gaps: number[];
  /** Every rank was counted from its Init line: sequence indexes line up across ranks. */
  allCountedFromInit: boolean;
  /** Max collective count over ranks and when it last advanced. */
  maxCollectives: number;
  lastAdvanceMs?: number;
  createdMs: number;
  /** The owner (uid) of the file whose Init line made it; -1 offline. The communicator cap is shared among owners. */
  owner: number;
}

/**
 * Whether two ops logged at one sequence index agree: the same collective, or a Send and a Recv,
 * the two ends of one point-to-point exchange (they never mismatch each other).
 */
export function sameCollective(a: string, b: string): boolean {
  return a === b || ((a === "Send" || a === "Recv") && (b === "Send" || b === "Recv"));
}
