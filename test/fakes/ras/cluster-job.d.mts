/**
 * Types of cluster-job.mjs: a simulated NCCL job of several nodes in one process (`nccl-ras --cluster
 * <spec.json>`), one RAS client listener per node, counting every collection and its RAS-network messages.
 * cluster-job.mjs's header explains the model, the control lines and the message-count formula.
 */
import type { RasDiag, RasJob } from "./render.mjs";

export interface ClusterSpec {
  /** NCCL version "X.Y.Z" (render.mjs rasFeatures decides protocol and formats). */
  version: string;
  nodes: number;
  ranksPerNode: number;
  /** The RAS client port on every node address; 0 picks a free port per node (reported on "listening"). Default 0. */
  port?: number;
  /** Node n's address: nodeAddress[n], or a pattern with {n} / {n+1}. Default "127.0.1.{n+1}". */
  nodeAddress?: string | string[];
  /** Rank r's pid is pidBase + r. Default 4000. */
  pidBase?: number;
  /** A healthy job launches one AllReduce per rank every stepMs (every 5th step an AllGather too). Default 100. */
  stepMs?: number;
  /** One ClusterCollection JSON line appended per collection. */
  collectionsLog?: string;
  /** Gathering delay before each answer, ms. Default 0. */
  gatherDelayMs?: number;
  /** false: no listener opens until {"listen": true}. Default true. */
  listen?: boolean;
  /** The communicator's hash. Default DEFAULT_HASH. */
  hash?: string;
  cudaRuntime?: number;
  cudaDriver?: number;
  /** What DIAGNOSTICS finds (render.d.mts RasDiag; rank numbers are the communicator's ranks). */
  diag?: RasDiag;
  /** The job's initial profiler mask (CONTROL PROFILER_MASK state). Default 0x46 with `inspector`, else 0. */
  profilerMask?: number;
  /** NCCL Inspector is loaded (initial mask 0x46). */
  inspector?: boolean;
}

/** One collectionsLog line. */
export interface ClusterCollection {
  /** Epoch ms at which the STATUS started. */
  t: number;
  node: number;
  command: "STATUS" | "VERBOSE STATUS" | "DIAGNOSTICS";
  /** The client's format ("text" for every DIAGNOSTICS run: JSON ones are refused, no collection). */
  format: "json" | "text";
  /** RAS-network messages the collection cost (collectionMessages of the live processes). */
  messages: number;
}

/** The "stats <json>" line. */
export interface ClusterStats {
  collections: number;
  /** Collections per node ("0".."N-1"), every node listed. */
  byNode: Record<string, number>;
  messages: number;
  /** STATUS / VERBOSE STATUS collections by the client's format. */
  statusByFormat: { text: number; json: number };
  /** DIAGNOSTICS runs (counted in collections, byNode and messages too). */
  diagnostics: number;
  /** Accepted CONTROL PROFILER_MASK commands (job-wide broadcasts). */
  broadcasts: number;
  /** The job-wide profiler mask now (NCCL's int, as unsigned 32-bit). */
  profilerMask: number;
}

/** A control line (keys apply in the order: version, listen, initialising, hang, resume, kill, stats). */
export interface ClusterControl {
  version?: string;
  listen?: true;
  initialising?: boolean;
  hang?: { rank: number };
  resume?: true;
  kill?: { node: number };
  stats?: true;
}

export declare const DEFAULT_HASH: "0x49bbd7790311d5eb";
/** The RAS ring's connections among `live` processes: live for 3+, 1 for 2, 0 for 1. */
export declare function ringConnections(live: number): number;
/** COLLREQ + COLLRESP messages of one RAS_COLL_COMMS collective among `live` processes: 2 * (2E - L + 1). */
export declare function collectionMessages(live: number): number;
/** Counts after `steps` steps: an AllReduce each, an AllGather every 5th. */
export declare function countsAfter(steps: number): { AllGather: number; AllReduce: number };
export declare function nodeAddressOf(spec: Pick<ClusterSpec, "nodeAddress">, node: number): string;

/** The job's state on an injected clock (ms). */
export declare class ClusterState {
  constructor(spec: ClusterSpec, now: number);
  readonly spec: ClusterSpec;
  readonly nodes: number;
  readonly ranksPerNode: number;
  readonly size: number;
  readonly stepMs: number;
  readonly pidBase: number;
  version: string;
  hung: boolean;
  initialising: boolean;
  dead: Set<number>;
  readonly progressing: boolean;
  newJob(version: string, now: number): void;
  steps(rank: number, now: number): number;
  settle(now: number): void;
  nodeOf(rank: number): number;
  ranksOf(node: number): number[];
  pidOf(rank: number): number;
  block(stopped: number[], now: number): void;
  hang(rank: number, now: number): void;
  resume(now: number): void;
  setInitialising(on: boolean, now: number): void;
  kill(node: number, now: number): void;
  liveProcesses(): number;
  job(now: number): RasJob;
}

export declare function serveCluster(specFile: string): void;
