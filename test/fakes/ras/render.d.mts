/**
 * Types of render.mjs: NCCL RAS reports (text, JSON) and MONITOR events rendered from a job model, as the
 * RAS service of NCCL 2.24 to 2.30 writes them. render.mjs explains how the model maps onto NCCL's data.
 */

/** NCCL's collective types (ncclFuncStr / ncclFuncToString, ncclFunc_t 0..4), in NCCL's order. */
export type RasFunc = "Broadcast" | "Reduce" | "AllGather" | "ReduceScatter" | "AllReduce";
export declare const FUNCS: readonly ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"];

/** A rank's communicator status (ncclComm fields NCCL reports). initState / asyncError: ncclResult_t 0..7. */
export interface RasRankStatus {
  initState?: number;
  asyncError?: number;
  finalizeCalled?: boolean;
  destroyFlag?: boolean;
  abortFlag?: boolean;
}

export interface RasRank {
  rank: number;
  /** The process's IP (IPv4 or IPv6 literal), as NCCL prints it. */
  host: string;
  pid: number;
  cudaDev: number;
  /** Defaults to cudaDev. */
  nvmlDev?: number;
  /** Collective operations launched per type (NCCL 2.26+). Absent types are 0. */
  counts?: Partial<Record<RasFunc, number>>;
  /** NCCL 2.24/2.25's single collOpCount; defaults to the sum of `counts`. */
  opCount?: number;
  status?: RasRankStatus;
}

/** A rank NCCL has no data for: its process did not answer (unresponsive/dead) or answered without this communicator. */
export interface RasMissingRank {
  rank: number;
  host: string;
  pid: number;
  cudaDev: number;
  nvmlDev?: number;
  unresponsive: boolean;
  dead: boolean;
}

export interface RasComm {
  /** commHash, hex ("0x49bbd7790311d5eb"). */
  hash: string;
  /** The JSON "secondary_hash" halves (commId.hostHash, commId.pidHash), hex; default "0x0". */
  hostHash?: string;
  pidHash?: string;
  /** commNRanks; defaults to ranks + missing. */
  size: number;
  /** In the order NCCL received them. */
  ranks: RasRank[];
  missing?: RasMissingRank[];
}

export interface RasProcess {
  host: string;
  pid: number;
  cudaDevs: number[];
  nvmlDevs?: number[];
}

export interface RasJob {
  /** "X.Y.Z": 2.24.3, 2.26.2, 2.28.9, 2.29.7, 2.30.7 or any other. */
  version: string;
  /** CUDA_MAJOR.CUDA_MINOR NCCL was compiled with; default from cudaRuntime (12060 -> "12.6"). */
  cudaCompiled?: string;
  /** Default 12060. */
  cudaRuntime?: number;
  /** Default cudaRuntime. */
  cudaDriver?: number;
  /** Seconds the communicator query took: "Communicators... (0.00s)", JSON collection_time_sec. Default 0. */
  gatherSeconds?: number;
  /** Communication timeouts while gathering (the TIMEOUT warning, JSON timeouts_count). Default 0. */
  timeouts?: number;
  /** JSON header timestamp ("%F %T"). Default "2026-01-01 00:00:00". */
  timestamp?: string;
  comms: RasComm[];
  /** Processes NCCL considers dead (rasDeadPeers). */
  deadPeers?: RasProcess[];
  /** Further processes of the job that are in no communicator. */
  processes?: (RasProcess & { unresponsive?: boolean; dead?: boolean })[];
}

export interface RasFeatures {
  perTypeCounts: boolean;
  json: boolean;
  jsonMissingCommaBug: boolean;
  monitor: boolean;
  timeDecimals: 2 | 3;
}
export declare function rasFeatures(version: string): RasFeatures;
export declare function rasCountIsOutlier(count: number, verbose: boolean, totalCount?: number): boolean;

export declare function renderText(job: RasJob, opts?: { verbose?: boolean }): string;
/** head: what NCCL sends at once (version lines, Job summary, "\nCommunicators..."); tail: after gathering. */
export declare function renderTextParts(job: RasJob, opts?: { verbose?: boolean }): { head: string; tail: string };
/** NCCL >= 2.28.7 only (throws for older versions). */
export declare function renderJson(job: RasJob): string;

export type RasEventGroup = "LIFECYCLE" | "TRACE";
export declare const EVENT_GROUPS: { readonly LIFECYCLE: 1; readonly TRACE: 2; readonly ALL: 255 };

export interface RasEvent {
  /** "PEER_DEAD", "PEER_NEW", or a TRACE event type such as "PEER_CONNECTING". */
  type: string;
  /** Default LIFECYCLE (PEER_NEW and PEER_DEAD are lifecycle events). */
  group?: RasEventGroup;
  /** A process NCCL knows. */
  peer?: RasProcess;
  /** Only an address (a process NCCL does not know): printed as "host<port>". */
  addr?: { host: string; port: number };
  details?: string;
  /** "%F %T"; default: now, local time. */
  time?: string;
}
export declare function renderEvent(event: RasEvent, opts?: { format?: "text" | "json"; time?: string }): string;
export declare function formatLocalTime(d: Date): string;

export interface UniformJobOptions {
  version: string;
  nodes: number;
  ranksPerNode: number;
  hash?: string;
  counts?: Partial<Record<RasFunc, number>>;
  countsOf?: (rank: number) => Partial<Record<RasFunc, number>> | undefined;
  /** Default: node n -> "10.0.0.<n+1>". */
  hostOf?: (node: number) => string;
  /** pid of rank r: pidBase + r (default pidBase 4000) unless pidOf is given. */
  pidBase?: number;
  pidOf?: (rank: number) => number;
  cudaRuntime?: number;
  cudaDriver?: number;
  cudaCompiled?: string;
  gatherSeconds?: number;
  timestamp?: string;
}
export declare function uniformJob(o: UniformJobOptions): RasJob;
/** A copy of `job` where communicator `commIdx`'s ranks `rankIds` are missing (unresponsive; dead if asked). */
export declare function withMissing(job: RasJob, commIdx: number, rankIds: number[], o?: { dead?: boolean }): RasJob;
