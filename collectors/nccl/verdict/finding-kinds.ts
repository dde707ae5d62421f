/**
 * Every kind of finding, one row each, in order of importance (within a severity, the kinds that
 * name a culprit first: sortFindings in report.ts). A row gives the kind's usual severity (the
 * builders of finding.ts; `event` where each kernel event brings its own), the fact it is evidence
 * of (incidents.ts groups a report's findings by it), and the real capture under test/fixtures that
 * gives it, or why none can. FindingKind, the builders' severities, the incidents' facts and the
 * order come from here; test/agent/finding-kinds.test.ts runs `ringwatch analyze` on every capture
 * and fails when docs/nccl.md's list of kinds drifts from the table. A row marked `liveOnly` is a
 * kind only the live agent concludes (it needs a clock: analyze reads no time between lines); it is
 * a VerdictKind (verdict.ts) and never in analyze's JSON.
 */

export type Severity = "critical" | "warning" | "info";

/** What a finding is evidence of (incidents.ts). */
export type Fact = "hang" | "slow" | "failure" | "hardware" | "diagnostic" | "transport" | "note";

export interface FindingKindRow {
  readonly kind: string;
  readonly severity: Severity | "event";
  readonly fact: Fact;
  /** A real capture, relative to test/fixtures, whose analysis has a finding of this kind. */
  readonly capture?: string;
  /** Why no real capture gives it, where none does. */
  readonly noCapture?: string;
  /** Concluded only live, never by analyze. */
  readonly liveOnly?: true;
}

export const FINDING_KINDS = [
  { kind: "rank_behind", severity: "critical", fact: "hang", capture: "nccl/95-hang-desync-report-rank7-never-joined.log" },
  { kind: "rank_missing", severity: "warning", fact: "hang", capture: "fr/h100-2026-11-24/nccl_trace_rank_0" },
  {
    kind: "stack_outlier",
    severity: "warning",
    fact: "hang",
    noCapture: "needs the stacks of most ranks of one job; each real dump in stacks/ is one process's",
  },
  { kind: "gpu_xid", severity: "event", fact: "hardware", capture: "kmsg/01-xid79-fallen-off-bus-multiline-nvsentinel-issue155.txt" },
  { kind: "nvswitch_sxid", severity: "event", fact: "hardware", capture: "kmsg/05-sxid22013-nonfatal-severity-data-nvtrust-issue124.txt" },
  {
    kind: "nccl_diagnostic",
    severity: "warning",
    fact: "diagnostic",
    noCapture: "no real capture of NCCL RAS diagnostics exists (nccl-pasted/57 is built from NCCL's format strings)",
  },
  { kind: "collective_mismatch", severity: "critical", fact: "hang", capture: "nccl-pasted/16-detail-mismatch-allreduce-shape-seq3104-rank1-vs-rank0.log" },
  {
    kind: "hang_suspected",
    severity: "critical",
    fact: "hang",
    capture: "nccl-pasted/101-init-hang-store-based-barrier-timeout-rank7-rank5-worker-count-4-of-8.log",
  },
  { kind: "watchdog_timeout", severity: "critical", fact: "hang", capture: "nccl-pasted/01-watchdog-pt2.4-reduce-scatter-pg1-seq7753-five-ranks.log" },
  {
    kind: "network_error",
    severity: "critical",
    fact: "failure",
    capture: "nccl-pasted/107-nccl-2.4-ib-completion-error12-vendor129-two-hosts-then-illegal-access-nccl-tests.log",
  },
  {
    kind: "hca_error",
    severity: "event",
    fact: "hardware",
    capture: "kmsg/24-mlx5-probe-failed-dmesg-tinycore-issue9.txt",
  },
  { kind: "gpu_pcie_error", severity: "event", fact: "hardware", capture: "kmsg/16-aer-gpu-pcieport-syslog-dmesg-popos-issue3363.txt" },
  { kind: "nccl_error", severity: "critical", fact: "failure", capture: "nccl-pasted/03-watchdog-pt2.6-wallclock-prefix-alltoall-and-allreduce-subgroups.log" },
  {
    kind: "socket_transport",
    severity: "warning",
    fact: "transport",
    capture: "nccl-pasted/111-socket-16-ranks-inter-node-channels-via-net-socket-3-redacted-host.log",
  },
  {
    kind: "gdr_disabled",
    severity: "warning",
    fact: "transport",
    capture: "nccl-pasted/112-ibext-inter-node-channels-without-gdrdma-two-hosts-8-ranks-deepspeed.log",
  },
  {
    kind: "straggler",
    severity: "warning",
    fact: "slow",
    liveOnly: true,
    noCapture: "live only: the last rank to arrive at most collectives, held over minutes (NCCL Inspector's timings or the COLL lines as they come)",
  },
  {
    kind: "dump_unreadable",
    severity: "warning",
    fact: "note",
    noCapture: "a dump that cannot be read is made by cutting the real H100 dump (flight-recorder/findings.test.ts)",
  },
  {
    kind: "kernel_log_truncated",
    severity: "info",
    fact: "note",
    noCapture: "needs over 1,000 groups of kernel events: a volume no capture has (agent/analyze-kernel.test.ts)",
  },
] as const satisfies readonly FindingKindRow[];

/** Every kind of verdict, live and offline. */
export type VerdictKind = (typeof FINDING_KINDS)[number]["kind"];

/** The kinds analyze reports (its JSON's `kind`): all but the live-only rows. */
export type FindingKind = Exclude<VerdictKind, Extract<(typeof FINDING_KINDS)[number], { liveOnly: true }>["kind"]>;

const BY_KIND = new Map<string, FindingKindRow>(FINDING_KINDS.map((r) => [r.kind, r]));

/** The row of a kind. */
export function kindRow(kind: VerdictKind): FindingKindRow {
  const row = BY_KIND.get(kind);
  if (row === undefined) throw new Error(`unknown finding kind ${kind}`);
  return row;
}
