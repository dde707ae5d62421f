/**
 * What the RAS watch holds after its last answer, as the metrics (ras/metrics.ts,
 * ras/report-metrics.ts) and the verdicts (ras/verdict.ts) read it at each evaluation: the queries
 * counted, the last report and what it says, the monitor subscription and its events, the job and
 * this node's role, the schedule's state, the checks of other agents, the exchanges of a hang episode.
 */
import type { Finding } from "../verdict/report.js";
import type { RasQueryOutcome } from "./client.js";
import type { RasJobView, RasRole } from "./job-view.js";
import type { ListenerSeen } from "./listener.js";
import type { RasMonitorState } from "./monitor.js";
import type { DiagReport } from "./parse-diag.js";
import type { RasReport } from "./parse-text.js";
import type { RasCommProgress } from "./progress.js";
import type { AskReason } from "./schedule.js";
import type { RasGate } from "./version-gate.js";

/** At most this many series per job-wide RAS metric (dead processes, ranks behind, mismatches). */
export const MAX_RAS_SERIES = 128;

/** What the last answer holds. */
export interface RasSnapshot {
  queries: ReadonlyMap<RasQueryOutcome, number>;
  lastReportMs: number | undefined;
  /** The last report, while the job answers. */
  report: RasReport | undefined;
  format: "json" | "text" | undefined;
  /** `node:pid` of processes RAS cannot reach (dead, or their node cut off). */
  dead: readonly string[];
  progress: readonly RasCommProgress[];
  /** Findings of the last report (ringwatch analyze's words). */
  findings: readonly Finding[];
  /** The monitor subscription (NCCL 2.29+). */
  monitor: RasMonitorState;
  /** Monitor events received, by type (RAS_EVENT_TYPES). */
  events: ReadonlyMap<string, number>;
  /** Queries by result, then by reason. */
  queriesBy: ReadonlyMap<RasQueryOutcome, ReadonlyMap<AskReason, number>>;
  /** The job as the last report (or the logs) show it. */
  job: RasJobView | undefined;
  role: RasRole;
  /** The backoff now, ms (0: none). */
  backoffMs: number;
  gate: RasGate | undefined;
  listener: ListenerSeen["kind"];
  /** Where the tables do not show it: a bare connection was accepted. */
  listenerAccepts: boolean;
  /** Checks of other nodes' agents, by result (ras/peers.ts). */
  peerChecks: ReadonlyMap<string, number>;
  /** Inspector switches sent, by `to|result`; whether this agent holds Inspector on (undefined: the switch is off). */
  inspectorSwitches: ReadonlyMap<string, number>;
  inspectorOn: boolean | undefined;
  /** The RAS diagnostics of this hang episode, when this node asked them (ras/diagnostics.ts). */
  diagnostics: { report: DiagReport; atMs: number } | undefined;
}
