/**
 * RAS diagnostics (NCCL 2.31.2+; Xid/SXid and the RDMA topology 2.32.3+), asked once per hang
 * episode by the job's querier: every process of the job then runs its checks (GPU inventory, ECC,
 * NVLink, differing NCCL_* settings, Xid/SXid from every host's kernel log, ...) and sends them to
 * the one asked, a job-wide gather larger than a STATUS (a 16 KiB environment record per rank and
 * communicator), which also consumes each process's Xid window: so one node asks, once. NCCL
 * answers `BUSY` while a run is in progress in the process asked; ringwatch tries again an interval
 * later, at most 3 times an episode. An episode begins when a hang is suspected on this node, by any
 * evidence, and ends when none is.
 */
import { compareNcclVersions } from "./defects.js";
import type { DiagReport } from "./parse-diag.js";

/** NCCL answers DIAGNOSTICS from this version on. */
export const DIAGNOSTICS_SINCE = "2.31.2";
const MAX_TRIES = 3;
/** NCCL's per-hop wait for the gather (its checks run child processes of up to 2 s each). */
export const DIAG_LEG_TIMEOUT_S = 10;
/** The whole answer: a gather of two 10 s legs, and the checks. */
export const DIAG_DEADLINE_MS = 30_000;

export function hasDiagnostics(version: string | undefined): boolean {
  return version !== undefined && compareNcclVersions(version, DIAGNOSTICS_SINCE) >= 0;
}

export class DiagnosticsEpisode {
  private active = false;
  private tries = 0;
  private done = false;
  private nextAtMs = 0;
  /** The last run's answer in this episode, and when it came. */
  report: DiagReport | undefined;
  atMs: number | undefined;

  /** Whether a hang is suspected on this node now; true when an episode begins. */
  setHang(hang: boolean): boolean {
    const rising = hang && !this.active;
    this.active = hang;
    if (rising) {
      this.tries = 0;
      this.done = false;
      this.nextAtMs = 0;
    }
    if (!hang) {
      this.report = undefined;
      this.atMs = undefined;
    }
    return rising;
  }

  /** Ask now? `mayAsk`: this node is the job's querier and its NCCL has diagnostics. */
  due(now: number, mayAsk: boolean): boolean {
    return this.active && mayAsk && !this.done && this.tries < MAX_TRIES && now >= this.nextAtMs;
  }

  asked(): void {
    this.tries++;
  }

  /** An answer: BUSY tries again an interval later; anything else ends the episode's asking. */
  answered(report: DiagReport, now: number, intervalMs: number): void {
    if (report.busy) {
      this.nextAtMs = now + intervalMs;
      return;
    }
    this.done = true;
    this.report = report;
    this.atMs = now;
  }

  /** No answer (timeout, error): once more an interval later. */
  failed(now: number, intervalMs: number): void {
    this.nextAtMs = now + intervalMs;
  }
}
