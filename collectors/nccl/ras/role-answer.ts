/**
 * This node's role for the job's RAS queries, and what `/nccl/ras-role` answers the other nodes'
 * agents (ras/peers.ts follows the succession with it). Without an election every node asks for
 * itself (`querier`); with one, the succession of the last report decides (ras/peers.ts), else the
 * logs do: the node of rank 0 of the communicators they know is the querier, the others listen.
 */
import { jobViewFromLogs, type LoggedComm, type RasJobView, type RasRole } from "./job-view.js";
import type { Succession } from "./peers.js";

/** What /nccl/ras-role answers other nodes' agents (ras/peers.ts). */
export interface RasRoleAnswer {
  job: string | null;
  role: RasRole;
  last_report_age_seconds: number | null;
  interval_seconds: number;
  nccl_version: string | null;
}

/** What /nccl/ras-role answers while RAS is not asked at all. */
export const NO_RAS_ROLE: RasRoleAnswer = { job: null, role: "undetermined", last_report_age_seconds: null, interval_seconds: 0, nccl_version: null };

/** What the role is decided from: the election (undefined: none), the job of the last report, the succession followed. */
export interface RoleInputs {
  election: { loggedComms?: () => readonly LoggedComm[] } | undefined;
  job: RasJobView | undefined;
  succession: Succession | undefined;
}

/** This node's role for the job now. */
export function roleOf({ election, job, succession }: RoleInputs): RasRole {
  if (election === undefined) return "querier";
  if (job !== undefined && job.succession.length > 0) return succession?.role ?? "undetermined";
  const logged = election.loggedComms?.();
  const fromLogs = logged !== undefined ? jobViewFromLogs(logged, false) : undefined;
  if (fromLogs === undefined) return "undetermined";
  return fromLogs.hostsRankZero ? "querier" : "listener";
}

/** What the answer tells of the last report (ras/last-report.ts). */
export interface ReportSeen {
  job: RasJobView | undefined;
  /** When the last report came. */
  atMs: number | undefined;
  report: { version?: string | undefined } | undefined;
}

/** The answer of /nccl/ras-role at `now`, for a node of `role` asking every `intervalMs`. */
export function roleAnswer(now: number, role: RasRole, intervalMs: number, last: ReportSeen): RasRoleAnswer {
  return {
    job: last.job?.jobId ?? null,
    role,
    last_report_age_seconds: last.atMs !== undefined ? Math.max(0, now - last.atMs) / 1000 : null,
    interval_seconds: intervalMs / 1000,
    nccl_version: last.report?.version ?? null,
  };
}
