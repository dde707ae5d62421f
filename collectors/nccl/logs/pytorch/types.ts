/**
 * PyTorch ProcessGroupNCCL events (see parse-pytorch.ts and parse-desync.ts). Re-exported by types.ts.
 */
import type { EventBase, WarnDetail } from "../parse/event-base.js";

/** Fields of the c10 log header and of ProcessGroupNCCL's `[PG ID 0 PG GUID 0(default_pg) Rank 7]` prefix. */
export interface PtBase extends EventBase {
  /** E, W, F, I from `[E0816 ...` / `[E ProcessGroupNCCL.cpp:737]`. */
  severity?: string;
  /** `ProcessGroupNCCL.cpp:607`. */
  src?: string;
  pgId?: number;
  pgName?: string;
  pgGuid?: string;
  /** Rank inside the process group (`[PG 5 Rank 0]`); launcherRank is the global rank. */
  pgRank?: number;
}

/** `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=.., OpType=.., ...) ran for N milliseconds` */
export interface PtWatchdogTimeoutEvent extends PtBase {
  kind: "pt_watchdog_timeout";
  /**
   * stack: only a C++ stack of the watchdog raising it (`frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(...)`,
   * `Exception raised from checkTimeout at ...`), the timeout's own line not among the lines.
   */
  via: "watchdog" | "blocking_wait" | "stack";
  seq?: number;
  opType?: string;
  numelIn?: number;
  numelOut?: number;
  timeoutMs?: number;
  ranForMs?: number;
}

/**
 * `Exception (either an error or timeout) detected by watchdog at work: N, last enqueued NCCL work: N, last completed NCCL work: N.`
 * and `failure detected by watchdog at work sequence id: N PG status: last enqueued work: N, last completed work: N`.
 */
export interface PtWorkStatusEvent extends PtBase {
  kind: "pt_work_status";
  failedSeq?: number;
  lastEnqueued?: number;
  lastCompleted?: number;
}

/** `Heartbeat monitor timed out!` and `ProcessGroupNCCL's watchdog got stuck for N seconds`. */
export interface PtHeartbeatEvent extends PtBase {
  kind: "pt_heartbeat";
  what: "monitor_timeout" | "watchdog_stuck";
  stuckSeconds?: number;
  workMetaListSize?: number;
}

/** Dump-signal and Flight Recorder lines of ProcessGroupNCCL. */
export interface PtDumpEvent extends PtBase {
  kind: "pt_dump";
  what: "dump_signal" | "preparing_dump" | "first_pg_dump" | "trace_not_found" | "stack_trace";
  /** Rank that raised the timeout (`from  rank 2`), absent when `from this local rank`. */
  fromRank?: number;
  fromLocal?: boolean;
  lastEnqueued?: number;
  lastCompleted?: number;
  includeStackTrace?: boolean;
}

/** TORCH_NCCL_DESYNC_DEBUG report lines (each report spans several lines; see parse-desync.ts). */
export interface PtDesyncEvent extends PtBase {
  kind: "pt_desync";
  what: "report" | "timeout_at" | "never_joined" | "joined_not_finished" | "finished_not_joined" | "snapshot_seq" | "snapshot_ranks";
  ranks?: number[];
  seq?: number;
  nextSeq?: number;
  collective?: string;
  state?: "started" | "finished";
}

/** Flight Recorder analyzer (fr_trace) text: `Not all ranks joining collective: sequence number: N`, `missing ranks: {..}`. */
export interface PtFlightRecorderEvent extends PtBase {
  kind: "pt_flight_recorder";
  what: "not_all_joined" | "missing_ranks";
  seq?: number;
  ranks?: number[];
}

/**
 * PyTorch error lines: `Some NCCL operations have failed`, `DistBackendError: NCCL error in: ...`,
 * `ncclRemoteError: ...`, `[rank3]: Last error:` on a row of its own (last_error: the error is on
 * the next row, which analyze joins), `(Process group|NCCL) watchdog thread terminated with
 * exception: CUDA error: ...` (watchdog_exception: reason is the exception), `Process Group destroyed
 * on rank 0` on the row after an error raised while the group was destroyed (pg_destroyed: its rank).
 */
export interface PtErrorEvent extends PtBase {
  kind: "pt_error";
  what: "ops_failed" | "taking_down" | "dist_backend_error" | "nccl_error" | "last_error" | "watchdog_exception" | "pg_destroyed";
  ncclVersion?: string;
  /** ncclRemoteError, ncclSystemError, ... */
  ncclError?: string;
  /** `remote process exited or there was a network error`. */
  reason?: string;
  /** Classified `Last error:` when it is on the same line. */
  lastError?: WarnDetail;
  /** The work the error was raised in (`Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised ...`). */
  seq?: number;
  op?: string;
  /** xla: XLA's words (`NCCL operation ncclCommInitRank(...) failed: ...`), not PyTorch's. */
  by?: "xla";
}

/** TORCH_DISTRIBUTED_DEBUG=DETAIL (INFO) `[Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=1276, ...)` */
export interface PtRunningEvent extends PtBase {
  kind: "pt_running";
  rank: number;
  fp: PtFingerprint;
}

/** One side of a TORCH_DISTRIBUTED_DEBUG=DETAIL `CollectiveFingerPrint(...)`; what the paste kept. */
export interface PtFingerprint {
  seq?: number;
  /**
   * PyTorch prints `SequenceNumber=N, OpType=X, TensorShape=...` for a collective with tensors and
   * `SequenceNumber=NOpType=X)` (no separator) for one without; undefined when the paste does not show.
   */
  tensors?: boolean;
  op?: string;
  shape?: string;
  dtype?: string;
}

/** `Detected mismatch between collectives on ranks. Rank A is running collective: ..., but Rank B is running collective: ...` */
export interface PtMismatchEvent extends PtBase {
  kind: "pt_mismatch";
  rankA?: number;
  a?: PtFingerprint;
  rankB?: number;
  b?: PtFingerprint;
}

/**
 * `[Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000 ms` (failed: the ranks never came),
 * or gloo's `Rank 3 successfully reached monitoredBarrier, but received errors while waiting for
 * send/recv from rank 0` (errors: the rank failed or died).
 */
export interface PtBarrierEvent extends PtBase {
  kind: "pt_barrier";
  form: "failed" | "errors";
  ranks: number[];
  /** The rank that ran the barrier and reports. */
  reporter?: number;
  timeoutMs?: number;
}
