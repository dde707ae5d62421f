/**
 * What every event of the line parser carries (the NCCL header, timestamp and launcher prefix),
 * and the classified details of a WARN message, which NCCL's and PyTorch's events share
 * (types.ts, types-pytorch.ts).
 */
import type { WarnKind } from "./warn-kinds.js";

/** What a launcher/log-collector prefix in front of the line told us. */
export interface LauncherPrefix {
  /**
   * mpi: OpenMPI `--tag-output` `[job,rank]<stdout>:` (horovodrun's Gloo launcher: `[rank]<stdout>:`); rank: PyTorch/c10 `[rank7]:`;
   * tag: `[155] ` (MPI rank tag; some log viewers print line numbers the same way);
   * torchrun: `[default3]:` (role + LOCAL rank); ray: `(RayTrainWorker pid=615, ip=10.72.7.6) `;
   * pdsh: `host: ` (and a runner's `name [stderr] `, the name in host); srun: `12: ` (srun --label).
   */
  kind: "mpi" | "rank" | "tag" | "torchrun" | "ray" | "pdsh" | "srun";
  rank?: number;
  job?: number;
  localRank?: number;
  stream?: "stdout" | "stderr";
  host?: string;
  pid?: number;
  ip?: string;
  actor?: string;
}

/** Fields every event may carry. Absent means "not on this line", never 0. */
export interface EventBase {
  /** NCCL header hostname (NCCL prints the name up to the first '.'). */
  host?: string;
  /** NCCL header pid; for PyTorch lines the Ray prefix pid when there is one. */
  pid?: number;
  tid?: number;
  /** `[n]` of the NCCL header: the CUDA device current on the logging thread. */
  cudaDev?: number;
  /**
   * Timestamp text as printed, brackets removed: NCCL `2026-03-18 11:13:09` (local time of the
   * writer, default format `[%F %T] `), or the c10/glog time `0816 01:45:40.183009389` (no year).
   */
  ts?: string;
  /** Global rank from the launcher prefix (`[1,0]<stdout>:` gives 0, `[rank7]:` gives 7). */
  launcherRank?: number;
  launcher?: LauncherPrefix;
  /**
   * Set when the header was recovered from the middle of a line that two processes wrote
   * into (a torn/interleaved line). Prefix and timestamp of the physical line are then NOT
   * attributed to this event, because they belong to the first writer.
   */
  torn?: boolean;
  /** Set when the line had no NCCL header at all (fields must be attributed by the caller). */
  headerless?: boolean;
}

/** A WARN's kind, the `kind` label of ringwatch_nccl_warnings_total: derived from the table of warn-kinds.ts. */
export type { WarnKind } from "./warn-kinds.js";

/** Classified details of a NCCL WARN message (also used for PyTorch's embedded `Last error:`). */
export interface WarnDetail {
  warnKind: WarnKind;
  /** Peer as printed before `<port>`: IP (v4/v6) or host name. */
  peer?: string;
  peerPort?: number;
  /** Error text after `failed : ` (`Connection reset by peer`, `Software caused connection abort`). */
  error?: string;
  /** IB work completion status (`error 12` / `status=12` / `status=NAME(12)`). */
  ibStatus?: number;
  ibOpcode?: number;
  ibLen?: number;
  vendorErr?: number;
  ibDir?: string;
  localGid?: string;
  remoteGid?: string;
  /** The HCA a completion, async event or QP failure names (`hca mlx5_26`, `NET/IB : mlx5_0:1 Got async event`, `on dev mlx5_0:1`). */
  hca?: string;
  /** Its port (`mlx5_0:1`): ib_async_event and ib_qp_error from NCCL 2.20 / 2.24 on. */
  hcaPort?: number;
  /** ib_async_event: the event in libibverbs' words (`port error`, `local access violation work queue error`), or NCCL's (`GID table changed`). */
  ibEvent?: string;
  /** ib_async_event: the event's number where NCCL prints it (2.29+ `port error(10)`, `unknown event type (21)`). */
  ibEventCode?: number;
  /** ib_qp_error: the errno NCCL 2.24+ prints (`failed with 110 Connection timed out`). */
  errno?: number;
  /** collective_mismatch: the rank named by NCCL. */
  mismatchRank?: number;
  /**
   * PyTorch's `[14] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d
   * key-value store ... got error: Connection reset by peer`: the rank that asked (`selfRank`) and
   * the rank whose store entry it asked for (`peerRank`).
   */
  selfRank?: number;
  peerRank?: number;
  /** bootstrap_error: the rank that checked in twice at the bootstrap root (two processes given one rank). */
  duplicateRank?: number;
  /** invalid_usage's `Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000`: the other rank on this process's GPU. */
  sharedGpuRank?: number;
  /**
   * A message of another size than the one posted (size-mismatch.ts): on a data connection
   * (`NET/IB : ... collective mismatch error`, `NET/Socket : ... message truncated`) or in the bootstrap.
   */
  sizeMismatch?: "data" | "bootstrap";
  /** Bytes this process posted or sent, and bytes the peer sent or posted (sizeMismatch). */
  localSize?: number;
  remoteSize?: number;
  /** A net plugin's WARN that it turned GPUDirect RDMA off (`NET/OFI GDR disabled on GDR-supported instance type ...`). */
  gdrDisabled?: boolean;
  /** net_completion_error: the plugin's error number (`RC: 113`, `err: 113`; libfabric's, 113 = host unreachable). */
  rc?: number;
  /** Failing library call (`ibv_modify_qp`, `recv`, `connect`). */
  call?: string;
}
