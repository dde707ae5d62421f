/**
 * The findings, built: one builder per kind sets the kind and its usual severity, puts the summary
 * (words.ts) after them, then the fields in the order the source gives them, which is the order
 * `ringwatch analyze --json` prints. A source states the facts; it never writes a kind's words or
 * its severity, save where the severity depends on what it found.
 */
import type { Finding, FindingKind, Severity } from "./report.js";
import { kindRow } from "./finding-kinds.js";

/** A finding's summary, and all it holds after it (who, the lines, the numbers); a severity only where it is not the kind's usual one. */
export type FindingFacts = Omit<Finding, "kind" | "severity"> & { severity?: Severity };

export type FindingBuilder = (f: FindingFacts) => Finding;

/** The builder of a kind whose findings have its row's severity (finding-kinds.ts) unless the facts say otherwise. */
function builder(kind: FindingKind): FindingBuilder {
  const usual = kindRow(kind).severity;
  if (usual === "event") throw new Error(`${kind}: each finding brings its severity (hardwareEvent)`);
  return ({ severity = usual, summary, ...fields }) => ({ kind, severity, summary, ...fields });
}

/** A rank never entered (or never finished) the collective the others wait in. */
export const rankBehind = builder("rank_behind");
/** Member ranks of a process group left no Flight Recorder dump. */
export const rankMissing = builder("rank_missing");
/** The ranks issued different collectives (or sizes) at one point. */
export const collectiveMismatch = builder("collective_mismatch");
/** Every rank seen is in a collective none finishes, or PyTorch shows a sign of a hang. */
export const hangSuspected = builder("hang_suspected");
/** PyTorch's watchdog gave up on a work. */
export const watchdogTimeout = builder("watchdog_timeout");
/** A connection or a peer failed. */
export const networkError = builder("network_error");
/** NCCL failed in a process. */
export const ncclError = builder("nccl_error");
/** NCCL moves data over TCP sockets. */
export const socketTransport = builder("socket_transport");
/** GPUDirect RDMA is off. */
export const gdrDisabled = builder("gdr_disabled");
/** A Flight Recorder dump that could not be used. */
export const dumpUnreadable = builder("dump_unreadable");
/** NCCL RAS diagnostics found a problem on the job's nodes (ECC, NVLink, drivers, NCCL_* settings, PCIe/IOMMU, ranks that did not answer). */
export const ncclDiagnostic = builder("nccl_diagnostic");
/** Python stacks: most ranks wait in one collective, these ranks are elsewhere. */
export const stackOutlier = builder("stack_outlier");
/** Kernel events left out of the report. */
export const kernelLogTruncated = builder("kernel_log_truncated");

/** A kernel log event on a device (Xid, SXid, HCA, PCIe): its kind and severity come with the event. */
export function hardwareEvent(
  kind: Extract<FindingKind, "gpu_xid" | "nvswitch_sxid" | "hca_error" | "gpu_pcie_error">,
  f: FindingFacts & { severity: Severity },
): Finding {
  const { severity, summary, ...fields } = f;
  return { kind, severity, summary, ...fields };
}
