/**
 * Types of render.mjs: NCCL RAS reports (text, JSON), MONITOR events and DIAGNOSTICS answers rendered from a
 * job model, as the RAS service of NCCL 2.24 to 2.32 writes them. render.mjs explains how the model maps onto
 * NCCL's data.
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
  /** What DIAGNOSTICS finds (NCCL 2.31.2+); absent: a healthy job with the defaults below. */
  diag?: RasDiag;
  /** The profiler event mask the job's processes start with (CONTROL PROFILER_MASK's state). Default: 0x46 if `inspector`, else 0. */
  profilerMask?: number;
  /** NCCL Inspector is loaded (NCCL_PROFILER_PLUGIN, NCCL_INSPECTOR_ENABLE=1): its mask Coll|P2p|KernelCh = 0x46. */
  inspector?: boolean;
}

/** Per-rank overrides of the uniform RasDiag values (rank numbers are communicator ranks, in every communicator). */
export interface RasDiagRank {
  gpuModel?: string;
  gpusPerNode?: number;
  cudaDriver?: number;
  nvidiaDriver?: string;
  nvlinkLinks?: number;
}

/**
 * What each rank's NVML, drivers, environment and host kernel log report to DIAGNOSTICS (render.mjs
 * renderDiagnostics). Rank numbers are communicator ranks and apply in every communicator.
 */
export interface RasDiag extends RasDiagRank {
  /** nvmlDeviceGetName of every rank's GPU. Default "NVIDIA H100 80GB HBM3"; "" = unavailable ("unknown"). */
  gpuModel?: string;
  /** nvmlDeviceGetCount on every node (NCCL keeps it as uint8). Default 8; 0 = unavailable. */
  gpusPerNode?: number;
  /** cudaDriverGetVersion. Default job.cudaDriver, else job.cudaRuntime, else 12060; 0 = no driver. */
  cudaDriver?: number;
  /** nvmlSystemGetDriverVersion (2.32.3+). Default "570.133.20"; "" = unavailable via NVML. */
  nvidiaDriver?: string;
  /** rank -> volatile uncorrected ECC errors (SRAM + DRAM); absent ranks 0. */
  eccUncorrected?: Record<number, number>;
  /** Ranks whose GPU has one NVLink down. */
  nvlinkInactive?: number[];
  /** NVLinks per GPU. Default 18; 0 = PCIe only (no NVLink line). 2.31.2 scans at most 18. */
  nvlinkLinks?: number;
  /**
   * NCCL_* variable -> rank -> value; "*" is the value of the ranks not listed; a rank with no value has it
   * unset. Variables absent here are the same everywhere (never reported). Names not starting NCCL_ are ignored.
   */
  env?: Record<string, Partial<Record<number | "*", string>>>;
  /** Xid events in the kernel logs since the last scan (2.32.3+); host = the host name (see hostNames). */
  xids?: { host: string; xid: number; count: number; atLeast?: boolean }[];
  /** NVSwitch SXid summary events (2.32.3+); links printed as {32,33}. */
  sxids?: { host: string; sxid: number; count: number; classification: "Fatal" | "Non-fatal"; links: number[]; atLeast?: boolean }[];
  /** host name -> its kernel-log scan failed ("no kernel-log source") or was truncated (2.32.3+). */
  kernelLog?: Record<string, "unavailable" | "truncated">;
  /** A process address (the rank's `host`) -> its gethostname(), as the DIAG lines print it. Default: the address. */
  hostNames?: Record<string, string>;
  /** The process whose listener answers (the lines' "<host>:<pid>"). Default render.mjs diagnosticsSource. */
  answeredBy?: { host: string; pid: number };
  /**
   * `rdma_topo check` on every process (2.32.3+): "passed" or { failed } ran the tool (conclusive: no IOMMU/ATS
   * checks); a state name means it was not usable. Default "unavailable" (the tool is not installed).
   */
  rdmaTopo?: "passed" | "not applicable" | "needs root" | "inconclusive" | "unavailable" | { failed: number[]; exitCode?: number; sample?: string };
  /**
   * Every rank's channels use one NIC (2.32.3+, checked only when rdma_topo is not conclusive). Absent: no NIC
   * (no IOMMU/ATS lines). iommu default "passthrough", ats default "enabled", bdf default "0000:0c:00.0",
   * IOMMU group ids default 40 and 40 (the same group).
   */
  nic?: {
    iommu?: "disabled" | "passthrough" | "enabled (DMA remapping)";
    ats?: "enabled" | "disabled" | "needs root";
    bdf?: string;
    gpuGroup?: number;
    nicGroup?: number;
  };
  /** The Paths line's path types ("self+NVL+NET"). Default from the ranks' hosts: self, NVL (PHB without NVLink) to a rank on the same host, NET to another host. */
  paths?: string;
  /** Per-rank overrides (a rank's GPU, drivers, links). */
  ranks?: Record<number, RasDiagRank>;
}

export interface RasFeatures {
  perTypeCounts: boolean;
  json: boolean;
  jsonMissingCommaBug: boolean;
  monitor: boolean;
  timeDecimals: 2 | 3;
  /** DIAGNOSTICS (2.31.2+). */
  diagnostics: boolean;
  /** DIAGNOSTICS' Xid/SXid, rdma_topo, IOMMU, ATS, NVIDIA driver and Paths checks (2.32.3+). */
  diagXid: boolean;
  /** CONTROL PROFILER_MASK (2.31.2+). */
  control: boolean;
  /** TIMEOUT parsed with strtod (2.31.2+; strtol before). */
  timeoutStrtod: boolean;
}
export declare function rasFeatures(version: string): RasFeatures;
export declare function rasCountIsOutlier(count: number, verbose: boolean, totalCount?: number): boolean;

export declare function renderText(job: RasJob, opts?: { verbose?: boolean }): string;
/** head: what NCCL sends at once (version lines, Job summary, "\nCommunicators..."); tail: after gathering. */
export declare function renderTextParts(job: RasJob, opts?: { verbose?: boolean }): { head: string; tail: string };
/** NCCL >= 2.28.7 only (throws for older versions). */
export declare function renderJson(job: RasJob): string;

/** rasDiagnosticsFormatRankSet: "{1,2}", or the first 8 then ",...} (N=total)". */
export declare function diagRankSet(ranks: number[]): string;
/** The process whose listener answers DIAGNOSTICS by default (diag.answeredBy, else the lowest answering rank of the first communicator). */
export declare function diagnosticsSource(job: RasJob): { host: string; pid: number };
/**
 * The whole DIAGNOSTICS answer, "<host>:<pid> NCCL DIAG ..." lines (NCCL >= 2.31.2; throws for older versions):
 * header, checks, "RAS diagnostics completed in <ms> ms across <answering processes> RAS peers".
 */
export declare function renderDiagnostics(job: RasJob, opts?: { host?: string; pid?: number; ms?: number }): string;
/** CONTROL PROFILER_MASK's initial state: job.profilerMask, else 0x46 with `inspector`, else 0 (unsigned 32-bit). */
export declare function defaultProfilerMask(job: RasJob): number;

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
