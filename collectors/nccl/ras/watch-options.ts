/**
 * What the RAS watch (ras/watch.ts) is given: the service's address and the interval, the clock and
 * the log, the hang threshold, the query's limits, the monitor subscription, who may answer
 * (ras/who-may-answer.ts), the election of one querier per job (ras/job-view.ts, ras/peers.ts), the
 * settle time, the version gate (ras/defects.ts) and Inspector's window. A reload (SIGHUP) replaces
 * the address, the interval and some of the rest (RasWatch.setOptions).
 */
import type { Logger } from "pino";
import type { RasAddress } from "./client.js";
import type { RasDefect } from "./defects.js";
import type { LoggedComm } from "./job-view.js";
import type { ProbeResult } from "./peers.js";
import type { ProgressOptions } from "./progress.js";
import type { RasOwnerSource } from "./who-may-answer.js";

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

/** What a reload (SIGHUP) may change: the address and the interval, and some of the rest. */
export type RasWatchReload = Pick<RasWatchOptions, "address" | "intervalMs"> &
  Partial<Pick<RasWatchOptions, "settleMs" | "knownDefects" | "inspectorWindowMs">>;
