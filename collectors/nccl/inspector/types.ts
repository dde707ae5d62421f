/**
 * Types of the NCCL Inspector feed: one parsed record (parse.ts), the limits and detector knobs
 * (feed.ts, straggler.ts, bandwidth.ts) and what snapshot() returns for the metrics. No
 * prom-client here: the metrics are made from InspectorSnapshot elsewhere.
 *
 * The format these mirror is NCCL's own writer; README.md next to this file says which file of
 * which NCCL tag each field comes from.
 */

/** A collective (`coll_perf`) or, NCCL 2.30+, a point-to-point operation (`p2p_perf`). */
export type InspectorKind = "coll" | "p2p";

/** Where the execution time came from (`coll_timing_source`); NCCL prints "unknown" for none. */
export type TimingSource = "kernel_gpu" | "kernel_cpu" | "collective_cpu" | "unknown";

/** One line of an Inspector JSON file (one completed operation of one rank of one communicator). */
export interface InspectorRecord {
  kind: InspectorKind;
  /** header.id: the communicator hash as NCCL prints it (`0x%lx`: lowercase hex, no padding), as the COLL logs' commId. */
  commId: string;
  /** header.comm_name (NCCL 2.30+; "unknown" when the job gave none). */
  commName?: string;
  rank: number;
  nranks: number;
  /** header.nnodes: nodes the communicator spans. */
  nnodes?: number;
  /** metadata.hostname / metadata.pid: the process that wrote the record. */
  hostname?: string;
  pid?: number;
  /** metadata.inspector_output_format_version ("v4.0" in every NCCL from 2.28.3 to 2.30.7). */
  formatVersion?: string;
  /** coll_perf.coll / p2p_perf.p2p: ncclFuncToString() ("AllReduce", "AllGather", "Send", ...). */
  op: string;
  /**
   * coll_sn: NCCL's per-communicator, per-collective-type sequence number (comm->seqNumber[func]),
   * the same on every rank for the same collective. p2p_sn is the plugin's own per-rank counter and
   * does not match across ranks.
   */
  seq: number;
  /** p2p_peer (p2p records only). */
  peer?: number;
  /** coll_msg_size_bytes: type size x count (for AllGather/ReduceScatter the per-rank part). */
  msgBytes: number;
  /** coll_exec_time_us / 1e6. */
  execSeconds: number;
  timingSource?: TimingSource;
  /** coll_algobw_gbs x 1e9 and coll_busbw_gbs x 1e9 (NCCL's "GB/s" is 1e9 bytes/s); undefined when NCCL printed "nan". */
  algoBwBytesPerSecond?: number;
  busBwBytesPerSecond?: number;
  /** metadata.dump_timestamp_us / 1e6: wall-clock time (Unix s) the record was written, not when the operation ran. */
  dumpTimestampSeconds?: number;
  /**
   * Verbose mode (NCCL_INSPECTOR_DUMP_VERBOSE=1) only, Unix s from the host clock: event_trace_ts's
   * coll_start_ts / coll_stop_ts (p2p_*), and the earliest kernel_start_ts / latest kernel_stop_ts
   * over the channels.
   */
  startTimestampSeconds?: number;
  stopTimestampSeconds?: number;
  kernelStartTimestampSeconds?: number;
  kernelStopTimestampSeconds?: number;
}

/** Coarse message-size buckets of the exported bandwidth (size-bucket.ts). */
export type SizeBucket = "lt_64KiB" | "64KiB_1MiB" | "1MiB_16MiB" | "16MiB_256MiB" | "ge_256MiB";

export interface InspectorLimits {
  /** Communicators tracked at once; records of further ones are counted (skipped.comm_limit). */
  maxComms: number;
  /** Ranks of one communicator tracked on this node (skipped.rank_limit beyond). */
  maxRanksPerComm: number;
  /** Ranks over all communicators (skipped.rank_limit beyond). */
  maxRanks: number;
  /** Recent (op, seq) keys kept per communicator for the straggler comparison. */
  seqWindow: number;
  /** Recent records per rank behind the exported medians (exec time, bus bandwidth per size bucket). */
  statWindow: number;
  /** Bandwidth-drop series (op x size class) kept per rank, least recently used evicted. */
  maxBwSeriesPerRank: number;
  /** A communicator with no record for this long is forgotten (its series go). */
  retireAfterMs: number;
  /** Verdicts (straggler, bandwidth drop) only for communicators with a record this recent. */
  activeWithinMs: number;
}

export const DEFAULT_LIMITS: InspectorLimits = {
  maxComms: 128,
  maxRanksPerComm: 32,
  maxRanks: 1024,
  seqWindow: 64,
  statWindow: 32,
  maxBwSeriesPerRank: 8,
  retireAfterMs: 10 * 60_000,
  activeWithinMs: 2 * 60_000,
};

export interface StragglerOptions {
  /** Collectives that every active local rank reported, at least this many in the window... */
  minCommon: number;
  /** ...the same rank had the shortest execution time in at least this share of them... */
  share: number;
  /** ...and the others' executions were longer than its by a median of at least this (s). */
  minDelaySeconds: number;
}

export const DEFAULT_STRAGGLER: StragglerOptions = { minCommon: 20, share: 0.8, minDelaySeconds: 0.001 };

export interface BandwidthOptions {
  /** Recent records per series, most of which (their median) are compared... */
  recent: number;
  /** ...with the median of up to this many earlier ones (the baseline)... */
  baseline: number;
  /** ...once the baseline holds at least this many... */
  minBaseline: number;
  /** ...and called a drop below this fraction of it. */
  ratio: number;
}

export const DEFAULT_BANDWIDTH: BandwidthOptions = { recent: 8, baseline: 128, minBaseline: 32, ratio: 0.5 };

/** Why a line was not counted as a record. */
export interface SkipCounts {
  /** Not a complete Inspector record (garbage, truncated, a field missing or out of range). */
  garbage: number;
  /** A (rank, op, seq) already seen, or older than one seen. */
  duplicate: number;
  /** Over maxComms. */
  comm_limit: number;
  /** Over maxRanksPerComm or maxRanks. */
  rank_limit: number;
}

export interface InspectorStats {
  lines: number;
  records: number;
  skipped: SkipCounts;
  /** The last skipped line's file and reason, for a log line. */
  lastSkip?: { path: string; reason: keyof SkipCounts };
  /** Communicators forgotten after retireAfterMs without a record. */
  commsRetired: number;
}

export interface RankBandwidth {
  bucket: SizeBucket;
  /** Median bus bandwidth (bytes/s) of the rank's last statWindow GPU-timed collectives in the bucket. */
  bytesPerSecond: number;
}

export interface InspectorRankSnapshot {
  rank: number;
  hostname?: string;
  pid?: number;
  /** Collective records counted (every timing source) since ringwatch began reading. */
  collectives: number;
  /** Point-to-point records counted (NCCL 2.30+). */
  p2p: number;
  /** coll_sn and op of the last collective record. */
  lastSeq?: number;
  lastOp?: string;
  /** Agent clock (ms) of the last record. */
  lastRecordMs: number;
  /** Median execution time (s) of the last statWindow GPU-timed collectives, any size. */
  execSeconds?: number;
  busBw: RankBandwidth[];
  /**
   * Median over the common collectives of (median of the other local ranks' execution time - this
   * rank's): how much later than the others it arrives. Undefined below minCommon or alone here.
   */
  delaySeconds?: number;
  /** Share of the common collectives where this rank had the shortest execution time. */
  shortestShare?: number;
  straggler: boolean;
}

export interface StragglerVerdict {
  rank: number;
  delaySeconds: number;
  share: number;
  /** Collectives compared. */
  common: number;
}

export interface BandwidthDrop {
  op: string;
  /** Lower bound (bytes) of the power-of-two size class. */
  sizeClassBytes: number;
  /** Ranks here whose series dropped, of those with a baseline in it. */
  ranksDropped: number;
  ranksCompared: number;
  /** Medians (bytes/s) over those ranks of their recent and baseline medians. */
  recentBytesPerSecond: number;
  baselineBytesPerSecond: number;
}

export interface InspectorCommSnapshot {
  commId: string;
  commName?: string;
  nranks: number;
  nnodes?: number;
  /** Ranks of the communicator seen on this node (its files). */
  localRanks: number;
  /** True when some of its ranks are elsewhere: nranks > localRanks. */
  partial: boolean;
  lastRecordMs: number;
  /** Records in the last activeWithinMs: verdicts are made only then. */
  active: boolean;
  ranks: InspectorRankSnapshot[];
  straggler?: StragglerVerdict;
  /** Collectives compared for the straggler verdict (every active local rank reported them). */
  commonSeqs: number;
  bandwidthDrop: boolean;
  drops: BandwidthDrop[];
}

export interface InspectorSnapshot {
  comms: InspectorCommSnapshot[];
  stats: InspectorStats;
}
