/**
 * A PyTorch Flight Recorder dump as ringwatch reads it (read.ts), whatever version wrote it.
 * PyTorch's FlightRecorder (torch/csrc/distributed/c10d/FlightRecorder*.{hpp,cpp}) pickles a dict:
 *
 *   { "version": "2.10", "comm_lib_version": "2.28.9",                     (2.7: "nccl_version")
 *     "pg_config": { "<pg name>": { "name", "desc", "ranks": "[0, 1]" } },  (1.x: { pg_id: [0, 1] })
 *     "pg_status": { "<pg_id>": { "last_enqueued_collective": 83,          (from 2.3)
 *                                 "last_started_collective": -1, "last_completed_collective": 81 } },
 *     "entries": [ { "record_id", "pg_id", "process_group": ("0", "default_pg"), "collective_seq_id"
 *                    (1.x: "seq_id"), "p2p_seq_id", "op_id", "profiling_name": "nccl:all_reduce",
 *                    "time_created_ns", "input_sizes": [[1048576]], "input_dtypes": ["Float"],
 *                    "output_sizes", "output_dtypes", "state": "scheduled|started|completed",
 *                    "time_discovered_started_ns", "time_discovered_completed_ns", "duration_ms",
 *                    "retired", "timeout_ms", "is_p2p", "frames": [{ "name", "filename", "line" }] } ],
 *     "nccl_comm_state": { ... } }
 *
 * Absent is never 0: every value a dump may lack is optional here.
 */

/** One Python (or C++) stack frame of the call that enqueued a collective, innermost first. */
export interface FrFrame {
  /** Function name (`all_reduce`, `<module>`). */
  name: string;
  file: string;
  line: number;
}

/** One collective or point-to-point operation in a rank's ring buffer. */
export interface FrEntry {
  recordId?: number;
  pgId?: number;
  /** process_group[0]: the group's name (`_process_group_name`), the same on every rank. */
  pgName?: string;
  /** process_group[1]: its description (`default_pg`, or what the job passed as group_desc). */
  pgDesc?: string;
  /** collective_seq_id (seq_id before 2.x): the group's collective counter, as pg_status counts. */
  seq?: number;
  p2pSeq?: number;
  opId?: number;
  /** `nccl:all_reduce`, `nccl:send 0->1`, as PyTorch wrote it. */
  profilingName: string;
  /** `all_reduce`, `send`: the name between the backend prefix and any peer suffix. */
  op: string;
  isP2p: boolean;
  inputSizes?: number[][];
  outputSizes?: number[][];
  inputDtypes?: string[];
  outputDtypes?: string[];
  /** `scheduled`, `started` or `completed` (anything else is kept as written). */
  state?: string;
  /** Nanoseconds since the epoch, to about 0.25 µs (a double). */
  timeCreatedNs?: number;
  timeStartedNs?: number;
  timeCompletedNs?: number;
  durationMs?: number;
  retired?: boolean;
  timeoutMs?: number;
  frames: FrFrame[];
}

/** A process group as one rank's dump describes it. */
export interface FrGroup {
  name: string;
  desc?: string;
  /** Global ranks of the group (pg_config), sorted. */
  ranks?: number[];
  pgId?: number;
  lastEnqueued?: number;
  /** Absent when PyTorch did not time collectives (it writes -1: TORCH_NCCL_ENABLE_TIMING off). */
  lastStarted?: number;
  lastCompleted?: number;
  /** Where the last-* numbers come from: pg_status, or (older dumps) the entries themselves. */
  statusFrom?: "pg_status" | "entries";
}

export interface FrDump {
  /** The name the dump was read under (a file name). */
  source: string;
  version?: string;
  /** The global rank that wrote it: the dump's own `rank` key, else the file name's `<prefix><rank>`. */
  rank?: number;
  rankFrom?: "dump" | "file_name";
  commLibVersion?: string;
  /** The dump has pg_status (2.3+): a group it does not list there issued no collective on this rank. */
  hasPgStatus: boolean;
  groups: FrGroup[];
  /** Oldest first, as PyTorch dumps them. */
  entries: FrEntry[];
  /** Entries left out: past the entry limit (the oldest go) or not dicts. */
  entriesDropped: number;
}

/**
 * Why a dump that is not read was stopped, where it was for its cost: `budget`, it went past its
 * budget (budget.ts); `memory` or `time`, the worker reading it went past its heap or its time
 * (isolated.ts). Absent for a dump that is corrupt, truncated or no dump.
 */
export type FrOverLimit = "budget" | "memory" | "time";

export type FrRead = { ok: true; dump: FrDump } | { ok: false; source: string; rank?: number; error: string; over?: FrOverLimit };
