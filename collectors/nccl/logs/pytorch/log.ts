/**
 * What PyTorch's lines said, kept for the findings (findings/pytorch-*.ts) offline and the live
 * PyTorch verdicts (logs/pytorch/verdict.ts): watchdog timeouts, watchdog status lines, hang signs,
 * TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints and monitoredBarrier failures, desync reports, error
 * lines, and counts for the counters. Each record has `where` (file:line) and, live, `atMs` (when
 * the line was read; a file's mtime for lines that were there before ringwatch started).
 */
import type { NcclEvent, PtBarrierEvent, PtFingerprint, PtMismatchEvent } from "../parse/types.js";
import { pushBounded } from "../state/bounded.js";

/** Which PyTorch process group a line speaks for: its GUID, else its id; the default group when absent. */
export function pgKeyOf(ev: { pgGuid?: string; pgId?: number }): string {
  return ev.pgGuid ?? (ev.pgId !== undefined ? String(ev.pgId) : "0");
}

/** Whether the line named its process group at all. */
export function pgNamed(ev: { pgGuid?: string; pgId?: number; pgName?: string }): boolean {
  return ev.pgGuid !== undefined || ev.pgId !== undefined || ev.pgName !== undefined;
}

/**
 * The group as its lines name it: `PG 5`, `PG 0 (default_pg)`, and where the line gives both its
 * id and its GUID, the id with the GUID as a detail: `PG 11 (GUID 119)`, `PG 3 (GUID 17, ncclx:tp)`.
 */
export function pgLabelOf(ev: { pgGuid?: string; pgId?: number; pgName?: string }): string {
  const id = ev.pgId !== undefined ? String(ev.pgId) : (ev.pgGuid ?? "0");
  const detail = [
    ...(ev.pgGuid !== undefined && ev.pgGuid !== id ? [`GUID ${ev.pgGuid}`] : []),
    ...(ev.pgName !== undefined && ev.pgName !== id && ev.pgName !== ev.pgGuid ? [ev.pgName] : []),
  ];
  return detail.length > 0 ? `PG ${id} (${detail.join(", ")})` : `PG ${id}`;
}

export interface WatchdogRecord {
  rank?: number;
  pgRank?: number;
  /** pgKeyOf, pgLabelOf. */
  pg: string;
  pgLabel: string;
  /** The line named its group (`PG ID 11 PG GUID 119`); else pg is the default group's, a guess. */
  pgNamed: boolean;
  opType?: string;
  seq?: number;
  /** The work's input elements (`NumelIn=`). */
  numelIn?: number;
  timeoutMs?: number;
  ranForMs?: number;
  processKey?: string;
  where: string;
  /** When the line was read (live). */
  atMs?: number;
}

export interface WorkStatusRecord {
  rank?: number;
  pg: string;
  pgLabel: string;
  /** As in WatchdogRecord. */
  pgNamed: boolean;
  /** A watchdog's status line, or the last-work numbers of a dump-signal line. */
  from: "status" | "dump_signal";
  lastEnqueued?: number;
  lastCompleted?: number;
  failedSeq?: number;
  processKey?: string;
  where: string;
  /** When the line was read (live). */
  atMs?: number;
}

/** `Heartbeat monitor timed out`, `watchdog got stuck for N seconds`, and dump signals from another rank. */
export interface HangSignRecord {
  what: "monitor_timeout" | "watchdog_stuck" | "dump_signal" | "first_pg_dump";
  rank?: number;
  pg: string;
  pgLabel: string;
  stuckSeconds?: number;
  workMetaListSize?: number;
  /** dump_signal: the rank whose timeout raised it (undefined: this local rank). */
  fromRank?: number;
  processKey?: string;
  where: string;
  /** When the line was read (live). */
  atMs?: number;
}

/** PyTorch records kept per kind: enough for every rank of a large job's burst of timeouts. */
const PT_WINDOW = 4096;
/** Error, desync and DETAIL records kept. */
const PT_ERROR_WINDOW = 32;
/** Ranks whose DETAIL `Running collective` is kept. */
const MAX_RUNNING = 65536;
/** (rank, sign) and (rank, op type) pairs counted. */
const MAX_COUNTS = 4096;

export type PtErrorRecord = {
  what: string;
  rank?: number;
  text?: string;
  peer?: string;
  /** The work it was raised in, where the line names it. */
  seq?: number;
  op?: string;
  pgLabel?: string;
  /** xla: XLA wrote it (errors.ts says so), not PyTorch. */
  by?: "xla";
  processKey?: string;
  where: string;
  atMs?: number;
};
export type PtDebugRecord = (PtMismatchEvent | PtBarrierEvent) & { where: string; atMs?: number };

export class PytorchLog {
  /** Watchdog timeouts by (rank, op type) since start (ringwatch_pytorch_watchdog_timeouts_total). */
  readonly watchdogCounts = new Map<string, { rank: string; opType: string; count: number }>();
  /** Hang signs by (rank, sign) since start: heartbeat_timeout, watchdog_stuck, dump_signal, monitored_barrier. */
  readonly hangSignCounts = new Map<string, { rank: string; sign: string; count: number }>();
  /** DETAIL mismatches by the rank that reported them, since start. */
  readonly mismatchCounts = new Map<string, number>();
  readonly watchdogs: WatchdogRecord[] = [];
  readonly workStatus: WorkStatusRecord[] = [];
  readonly hangSigns: HangSignRecord[] = [];
  /** TORCH_DISTRIBUTED_DEBUG=DETAIL mismatches and monitoredBarrier failures. */
  readonly debug: PtDebugRecord[] = [];
  readonly desync: { what: string; ranks?: number[]; seq?: number; nextSeq?: number; where: string; atMs?: number }[] = [];
  readonly errors: PtErrorRecord[] = [];
  /** The watchdog's C++ stack raising a timeout (a `WorkNCCL::checkTimeout` frame), where no timeout line was read with it. */
  readonly timeoutStacks: { rank?: number; where: string }[] = [];
  /** DETAIL: the last collective each rank said it runs (at most MAX_RUNNING ranks). */
  readonly running = new Map<number, { fp: PtFingerprint; where: string; atMs?: number }>();
  /** When the last record was read (live). */
  lastMs: number | undefined;

  /** Keeps what a PyTorch event says; false for any other event. */
  ingest(ev: NcclEvent, processKey: string | undefined, where: string, atMs: number | undefined): boolean {
    if (!ev.kind.startsWith("pt_")) return false;
    if (atMs !== undefined) this.lastMs = Math.max(this.lastMs ?? 0, atMs);
    this.keep(ev, processKey, where, atMs);
    return true;
  }

  private keep(ev: NcclEvent, processKey: string | undefined, where: string, atMs: number | undefined): void {
    switch (ev.kind) {
      case "pt_watchdog_timeout": {
        const rank = ev.launcherRank ?? ev.pgRank;
        if (ev.via === "stack") {
          pushBounded(this.timeoutStacks, { rank, where }, PT_WINDOW);
          return;
        }
        const opType = ev.opType ?? "unknown";
        const key = `${rank ?? ""}|${opType}`;
        const c = this.watchdogCounts.get(key) ?? { rank: rank === undefined ? "" : String(rank), opType, count: 0 };
        c.count++;
        this.watchdogCounts.set(key, c);
        pushBounded(
          this.watchdogs,
          {
            rank,
            pgRank: ev.pgRank,
            pg: pgKeyOf(ev),
            pgLabel: pgLabelOf(ev),
            pgNamed: pgNamed(ev),
            opType: ev.opType,
            seq: ev.seq,
            numelIn: ev.numelIn,
            timeoutMs: ev.timeoutMs,
            ranForMs: ev.ranForMs,
            processKey,
            where,
            atMs,
          },
          PT_WINDOW,
        );
        return;
      }
      case "pt_work_status":
        pushBounded(
          this.workStatus,
          {
            rank: ev.launcherRank ?? ev.pgRank,
            pg: pgKeyOf(ev),
            pgLabel: pgLabelOf(ev),
            pgNamed: pgNamed(ev),
            from: "status",
            lastEnqueued: ev.lastEnqueued,
            lastCompleted: ev.lastCompleted,
            failedSeq: ev.failedSeq,
            processKey,
            where,
            atMs,
          },
          PT_WINDOW,
        );
        return;
      case "pt_heartbeat":
        this.countSign(ev.launcherRank ?? ev.pgRank, ev.what === "monitor_timeout" ? "heartbeat_timeout" : "watchdog_stuck");
        pushBounded(
          this.hangSigns,
          {
            what: ev.what,
            rank: ev.launcherRank ?? ev.pgRank,
            pg: pgKeyOf(ev),
            pgLabel: pgLabelOf(ev),
            stuckSeconds: ev.stuckSeconds,
            workMetaListSize: ev.workMetaListSize,
            processKey,
            where,
            atMs,
          },
          PT_WINDOW,
        );
        return;
      case "pt_dump": {
        const rank = ev.launcherRank ?? ev.pgRank;
        const pg = pgKeyOf(ev);
        const pgLabel = pgLabelOf(ev);
        // `First PG on this rank to signal dumping`: this rank's own watchdog found the failure (its line may be cut off).
        if (ev.what === "first_pg_dump" && pgNamed(ev)) {
          pushBounded(this.hangSigns, { what: "first_pg_dump", rank, pg, pgLabel, fromRank: rank, processKey, where, atMs }, PT_WINDOW);
          return;
        }
        if (ev.what !== "dump_signal") return;
        if (ev.lastEnqueued !== undefined)
          pushBounded(
            this.workStatus,
            {
              rank,
              pg,
              pgLabel,
              pgNamed: pgNamed(ev),
              from: "dump_signal",
              lastEnqueued: ev.lastEnqueued,
              lastCompleted: ev.lastCompleted,
              processKey,
              where,
              atMs,
            },
            PT_WINDOW,
          );
        this.countSign(rank, "dump_signal");
        if (ev.fromRank !== undefined || ev.fromLocal === true)
          pushBounded(
            this.hangSigns,
            { what: "dump_signal", rank, pg, pgLabel, fromRank: ev.fromLocal === true ? rank : ev.fromRank, processKey, where, atMs },
            PT_WINDOW,
          );
        return;
      }
      case "pt_error":
        if (ev.what === "pg_destroyed") {
          this.destroyedRank(ev.launcherRank ?? ev.pgRank, where);
          return;
        }
        pushBounded(
          this.errors,
          {
            what: ev.what,
            rank: ev.launcherRank ?? ev.pgRank,
            text: ev.ncclError ?? ev.reason,
            peer: ev.lastError?.peer,
            ...(ev.seq !== undefined ? { seq: ev.seq } : {}),
            ...(ev.op !== undefined ? { op: ev.op } : {}),
            ...(ev.by !== undefined ? { by: ev.by } : {}),
            ...(pgNamed(ev) ? { pgLabel: pgLabelOf(ev) } : {}),
            processKey,
            where,
            atMs,
          },
          PT_ERROR_WINDOW,
        );
        return;
      case "pt_running":
        if (this.running.size < MAX_RUNNING || this.running.has(ev.rank)) this.running.set(ev.rank, { fp: ev.fp, where, atMs });
        return;
      case "pt_mismatch": {
        const by = ev.launcherRank ?? ev.rankA;
        const key = by === undefined ? "" : String(by);
        if (this.mismatchCounts.size < MAX_COUNTS || this.mismatchCounts.has(key)) this.mismatchCounts.set(key, (this.mismatchCounts.get(key) ?? 0) + 1);
        pushBounded(this.debug, { ...ev, where, atMs }, PT_ERROR_WINDOW);
        return;
      }
      case "pt_barrier":
        this.countSign(ev.reporter ?? ev.launcherRank, "monitored_barrier");
        pushBounded(this.debug, { ...ev, where, atMs }, PT_ERROR_WINDOW);
        return;
      case "pt_desync":
      case "pt_flight_recorder":
        pushBounded(
          this.desync,
          { what: ev.what, ranks: ev.ranks, seq: ev.seq, nextSeq: ev.kind === "pt_desync" ? ev.nextSeq : undefined, where, atMs },
          PT_ERROR_WINDOW,
        );
        return;
      default:
        return;
    }
  }

  /**
   * `Process Group destroyed on rank 0` right after an error that names no rank (`what():  NCCL error in:
   * ..., unhandled cuda error`, nccl-pasted 409): the reason of the abort that raised it, and so its rank.
   */
  private destroyedRank(rank: number | undefined, where: string): void {
    const e = this.errors[this.errors.length - 1];
    if (rank === undefined || e === undefined || e.rank !== undefined || !isLineBefore(e.where, where)) return;
    e.rank = rank;
  }

  private countSign(rank: number | undefined, sign: string): void {
    const key = `${rank ?? ""}|${sign}`;
    const c = this.hangSignCounts.get(key) ?? { rank: rank === undefined ? "" : String(rank), sign, count: 0 };
    c.count++;
    if (this.hangSignCounts.size < MAX_COUNTS || this.hangSignCounts.has(key)) this.hangSignCounts.set(key, c);
  }
}

/** Whether `a` (`file:line`) is the line just before `b` in the same file. */
function isLineBefore(a: string, b: string): boolean {
  const ca = a.lastIndexOf(":");
  const cb = b.lastIndexOf(":");
  return ca > 0 && cb > 0 && a.slice(0, ca) === b.slice(0, cb) && Number(a.slice(ca + 1)) + 1 === Number(b.slice(cb + 1));
}
