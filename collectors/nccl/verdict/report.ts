/** The shape `ringwatch analyze --json` prints (a contract: other tools read it). */

import { FINDING_KINDS, type FindingKind, type Severity, type VerdictKind } from "./finding-kinds.js";
import type { Verdict } from "./verdict.js";

export type { FindingKind, Severity } from "./finding-kinds.js";

/** A verdict as analyze prints it: the Verdict (kind, severity, scope, ranks, evidence as `file:line`), its words and the numbers that make it specific. */
export interface Finding extends Verdict<FindingKind> {
  /** One or two sentences for a person at 2:47 AM: what, where, what to do. */
  summary: string;
  /** `host:pid` of the processes concerned. */
  processes: string[];
  /** The numbers that make it specific, where they apply. */
  seq?: number;
  op?: string;
  other_op?: string;
  op_count?: string;
  peer?: string;
  count?: number;
  timeout_ms?: number;
  /** Flight Recorder: the ranks that wait in collective `seq`; stack_outlier: the ranks whose stack most ranks share, in a collective. */
  waiting_ranks?: number[];
  /** Flight Recorder: the call stacks that enqueued collective `seq`, innermost frame first, with the ranks that share each. */
  stacks?: FindingStack[];
  /** Flight Recorder: what differs across ranks at collective `seq` (torchfrtrace's classes). */
  mismatch?: "op" | "size" | "dtype" | "state";
  /** Flight Recorder: what most ranks recorded, and what the ranks of this finding recorded instead. */
  expected?: string;
  found?: string;
  /** Kernel log: the host the line named, the device as the kernel printed it (PCI address, HCA name). */
  host?: string;
  device?: string;
  /**
   * Kernel log: the Xid or SXid number; an HCA event's kind (`link_down`, ...); the Xid catalogue's action.
   * NCCL RAS diagnostics (`nccl_diagnostic`): `event` is the check (`ecc`, `nvlink`, `nccl_env`, ...), or
   * `incomplete` for ranks that did not answer.
   */
  code?: number;
  event?: string;
  action?: string;
  /**
   * Python stacks (py-spy or faulthandler dumps read beside the logs): where the finding's ranks are
   * (rank_behind), or the stack most ranks share and the ones that differ (stack_outlier).
   */
  python_stacks?: FindingPythonStack[];
}

export interface FindingStack {
  ranks: number[];
  frames: { function: string; file: string; line: number }[];
}

/** The stack of one or more ranks' processes, as a py-spy or faulthandler dump gave it (collectors/nccl/stacks/). */
export interface FindingPythonStack {
  /** The ranks whose stack this is (the same frames, line numbers aside). */
  ranks: number[];
  tool: "py-spy" | "faulthandler";
  /** The thread shown: `MainThread`, or the id the dump printed. */
  thread: string;
  /** Innermost first, at most 32; `file` as printed (a native library for `py-spy dump --native`), `line` null where none was printed. */
  frames: { function: string; file: string; line: number | null }[];
  /** Frames of the thread not listed (over 32). */
  frames_left_out: number;
  /** The tool cut the thread's stack (faulthandler prints at most 100 frames), or the reader kept only its first 128. */
  truncated: boolean;
  /** Whether the innermost frames are inside a collective (torch.distributed, DeepSpeed's or Horovod's communication code). */
  in_collective: boolean;
  /** `file:line` of the dump's first thread header (the first rank's). */
  evidence: string;
}

export interface ProcessSummary {
  process: string;
  host: string;
  pid: number;
  nccl_version: string | null;
  net: string;
  gdr: string;
  files: string[];
  ranks: { comm_id: string; rank: number }[];
  warnings: number;
}

export interface CommunicatorSummary {
  comm_id: string;
  nranks: number | null;
  ranks_seen: number;
  collectives_max: number;
  collectives_min: number;
  last_op: string | null;
  torn_down: boolean;
}

/** A PyTorch process group as its ranks' Flight Recorder dumps describe it. */
export interface ProcessGroupSummary {
  process_group: string;
  desc: string | null;
  /** Ranks in the group (pg_config), when a dump lists them. */
  size: number | null;
  /** Member ranks with no readable dump. */
  missing_ranks: number[];
  ranks: { rank: number; dump: string; last_enqueued: number | null; last_started: number | null; last_completed: number | null }[];
}

/** Findings that are evidence of one fact (verdict/incidents.ts). */
export interface Incident {
  severity: Severity;
  /** One sentence: what happened (the leading finding's first sentence). */
  headline: string;
  /** Indexes into the report's findings: the leading finding first, then those that support it. */
  findings: number[];
}

export interface Report {
  /** The verdict in one line: the first incident's headline, or that the logs show a healthy job. */
  headline: string;
  /** The findings grouped by incident, the most important first. */
  incidents: Incident[];
  findings: Finding[];
  processes: ProcessSummary[];
  communicators: CommunicatorSummary[];
  process_groups: ProcessGroupSummary[];
}

const SEVERITY_ORDER: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
/** The kinds in finding-kinds.ts's order of importance. */
const KIND_ORDER: readonly VerdictKind[] = FINDING_KINDS.map((r) => r.kind);

/** Most important first: severity, then the kinds that name a culprit. */
export function sortFindings(f: Finding[]): Finding[] {
  return f.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
}

/** A critical finding of a failure (an error, a timeout, a rank behind, a mismatch), not a sign of one. */
export function isFailureFinding(f: Finding): boolean {
  return f.severity === "critical" && f.kind !== "hang_suspected" && f.kind !== "socket_transport" && f.kind !== "gdr_disabled";
}

/** The distinct items, in first-seen order. */
export function uniq<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}

/** `0-6,9` */
export function rankList(ranks: readonly number[]): string {
  const s = [...new Set(ranks)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === (s[j] ?? 0) + 1) j++;
    parts.push(j > i + 1 ? `${s[i]}-${s[j]}` : j === i + 1 ? `${s[i]},${s[j]}` : `${s[i]}`);
    i = j + 1;
  }
  return parts.join(",");
}
