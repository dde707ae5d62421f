/**
 * Who asks NCCL RAS for a job, decided from the job's own data, with no coordinator: every node's
 * agent reads the same report and reaches the same answer. The job is named by its anchor, the
 * communicator with the most ranks (the world communicator; ties: the lowest commHash), and its
 * querier is the node that hosts the anchor's rank 0. The nodes that follow it, in the order of the
 * lowest anchor rank each hosts, are the succession: the first of them whose agent answers takes over
 * when the querier's agent or node is gone (ras/peers.ts).
 *
 * A JSON report (NCCL 2.28.7+) lists every rank with its node, so every node knows the querier and
 * the succession. A text report names the ranks of outlier groups only: there a node knows it is the
 * querier when its own logs show rank 0 of the largest communicator they know running here
 * (`fromLogs`), and it knows no succession.
 */
import type { RasReport } from "./parse-text.js";

export interface RasJobView {
  /** The anchor communicator as the comm_id label writes it (`0x` + commHash). */
  jobId: string;
  /** Ranks of the anchor. */
  size: number;
  /** Node addresses in the order of the lowest anchor rank each hosts: [0] is the querier. Empty when the report does not tell. */
  succession: readonly string[];
  /** A rank of any communicator reports its init as not complete (NCCL's INIT status). */
  initialising: boolean;
}

/** The job as a JSON report shows it; undefined for a text report or one without communicators. */
export function jobViewOf(report: RasReport): RasJobView | undefined {
  const full = report.full;
  if (full === undefined || full.length === 0) return undefined;
  let anchor = full[0];
  for (const c of full) if (anchor === undefined || c.size > anchor.size || (c.size === anchor.size && c.commHash < anchor.commHash)) anchor = c;
  if (anchor === undefined) return undefined;
  const lowest = new Map<string, number>();
  const note = (node: string | undefined, rank: number): void => {
    if (node === undefined || node === "") return;
    const seen = lowest.get(node);
    if (seen === undefined || rank < seen) lowest.set(node, rank);
  };
  for (const r of anchor.ranks) note(r.node, r.rank);
  for (const r of anchor.missing) note(r.node, r.rank);
  const succession = [...lowest].sort((a, b) => a[1] - b[1]).map(([node]) => node);
  const initialising = full.some((c) => c.ranks.some((r) => r.status === "INIT"));
  return { jobId: `0x${anchor.commHash}`, size: anchor.size, succession, initialising };
}

/** A communicator this node's logs know, with the ranks that live here. */
export interface LoggedComm {
  commId: string;
  nranks: number;
  /** Ranks of it whose process lives on this node. */
  localRanks: readonly number[];
}

/**
 * The job as this node's logs show it, for a text report: the anchor is the largest communicator
 * with a live rank here, and this node is the querier when it runs that communicator's rank 0.
 * Undefined when the logs know no live rank.
 */
export function jobViewFromLogs(comms: readonly LoggedComm[], initialising: boolean): { view: RasJobView; hostsRankZero: boolean } | undefined {
  let anchor: LoggedComm | undefined;
  for (const c of comms) {
    if (c.localRanks.length === 0) continue;
    if (anchor === undefined || c.nranks > anchor.nranks || (c.nranks === anchor.nranks && c.commId < anchor.commId)) anchor = c;
  }
  if (anchor === undefined) return undefined;
  return { view: { jobId: anchor.commId, size: anchor.nranks, succession: [], initialising }, hostsRankZero: anchor.localRanks.includes(0) };
}

export type RasRole = "querier" | "listener" | "undetermined";
