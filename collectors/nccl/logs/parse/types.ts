/**
 * Events produced by the NCCL / PyTorch ProcessGroupNCCL log line parser (line.ts).
 *
 * One physical log line gives at most one event (see parseLine). Every event carries the
 * fields of the NCCL line header `host:pid:tid [cudaDev]` when the line has one, the optional
 * NCCL 2.26+ timestamp, and what a launcher prefix said about the writer. Pointers (`comm`,
 * buffers, streams) and 64-bit ids (`commId`, `opCount`) stay strings exactly as printed:
 * they can exceed 2^53 and a pointer is only meaningful inside its own process.
 */

import type { EventBase, WarnDetail } from "./event-base.js";

export type * from "./event-base.js";

/** `NCCL version 2.21.5+cuda12.4` (also RAS `NCCL version 2.26.2 compiled with CUDA 12.6`). */
export interface VersionEvent extends EventBase {
  kind: "version";
  version: string;
  major: number;
  minor: number;
  patch: number;
  /** `12.4` from `+cuda12.4`. */
  cuda?: string;
}

/**
 * `... comm 0x.. rank R nranks N cudaDev C nvmlDev V busId B commId 0x.. - Init COMPLETE` in all its
 * historical forms (with or without the leading function name; 2.4 has no busId/commId).
 * Communicators made by ncclCommSplit print `parent 0x.. splitCount|childCount N color C key K`
 * and no commId: the parent pointer is process-local, so group them with
 * `splitCommKey(parentCommId, count, color)` once the parent's commId is known.
 */
export interface InitEvent extends EventBase {
  kind: "init";
  phase: "start" | "complete";
  /** ncclCommInitRank, ncclCommSplit, ncclCommInitAll, ncclCommInitRankConfig, ... */
  func?: string;
  comm?: string;
  rank?: number;
  nranks?: number;
  /** The comm's cudaDev as printed in the message (normally equal to cudaDev of the header). */
  commCudaDev?: number;
  nvmlDev?: number;
  busId?: string;
  commId?: string;
  parent?: string;
  /** splitCount (<= 2.27) or childCount (2.28+): how many children the parent made so far. */
  splitCount?: number;
  color?: number;
  key?: number;
}

/** `comm 0x.. rank 0 nRanks 8 nNodes 4 localRanks 2 localRank 0 MNNVL 0` (and the 2.3 `comm 0x.. rank 1 nranks 8`). */
export interface CommInfoEvent extends EventBase {
  kind: "comm_info";
  comm?: string;
  rank?: number;
  nranks?: number;
  nNodes?: number;
  localRanks?: number;
  localRank?: number;
}

/** `AllReduce: opCount 1a sendbuff 0x.. recvbuff 0x.. count 64 datatype 7 op 0 root 0 comm 0x.. [nranks=2] stream 0x..` */
export interface CollEvent extends EventBase {
  kind: "coll";
  /** AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv, AlltoAll, Gather, Scatter, ... */
  op: string;
  /** Hex as printed, no 0x. Per communicator; frozen at 0 on single-node comms from 2.27. */
  opCount: string;
  /** null when NCCL printed `(nil)`. */
  sendbuff?: string | null;
  recvbuff?: string | null;
  /** Elements; absent when not safely representable as a number. */
  count?: number;
  /** ncclDataType_t number (see NCCL_DATATYPES). */
  datatype?: number;
  /** ncclRedOp_t number (see NCCL_REDOPS); user-defined ops are large numbers. */
  redOp?: number;
  /** Root for Broadcast/Reduce, peer for Send/Recv. */
  root?: number;
  comm: string;
  nranks?: number;
  stream?: string;
}

export interface NetDevice {
  index: number;
  name: string;
  /** IB port number (`mlx5_0:1`). */
  port?: number;
  /** `IB` or `RoCE` for NET/IB devices. */
  linkLayer?: string;
  sharp?: boolean;
  /** Socket interfaces: the address printed (`10.2.3.32`, `fe80::..%veth0`). */
  addr?: string;
}

/** NET/IB and NET/Socket lines: which network NCCL found and chose. */
export interface NetEvent extends EventBase {
  kind: "net";
  /** IB or Socket (or a plugin name). */
  net: string;
  /**
   * using: `NET/IB : Using [0]mlx5_0:1/IB ...`; device: 2.3 `NET/IB: [0] mlx5_3:1/IB`;
   * no_device: `NET/IB : No device found.` / `Failed to open libibverbs.so`;
   * selected: `Using network IBext_v8` / `Using internal Network IB`;
   * bootstrap: `Bootstrap : Using ib0:10.0.0.1<0>` / 2.3 `NET : Using interface ...`.
   */
  what: "using" | "device" | "no_device" | "selected" | "bootstrap";
  /** no_device because `NCCL_IB_DISABLE set by environment`: turned off, not missing. */
  disabled?: true;
  devices?: NetDevice[];
  /** `ib0:10.159.0.34<0>` after `OOB`. */
  oob?: string;
  relaxedOrdering?: boolean;
  /** Plugin / internal network name for `selected` (IB, IBext_v8, Socket, ...). */
  plugin?: string;
  reason?: string;
}

/** `GPU Direct RDMA Enabled|Disabled for HCA n 'mlx5_0'` and `... for GPU ca000 / HCA 0 (distance 7 > 4)`. */
export interface GdrEvent extends EventBase {
  kind: "gdr";
  enabled: boolean;
  /** net: a net plugin turned GDR off for all its devices (`NET/OFI ... disabling GDR`); reason holds its words. */
  scope: "hca" | "gpu" | "net";
  hca?: number;
  hcaName?: string;
  /** GPU as printed: busId hex (`81000`), cudaDev, `cudaDev[nvmlDev]`, the rank (2.24-2.28), or `0-18000` (2.29+ `GPU/0-18000`). */
  gpu?: string;
  /** 2.29+: `(rank 3)` after the GPU. */
  rank?: number;
  distance?: number;
  limit?: number;
  read?: boolean;
  /** `no module` and similar parenthesised reasons. */
  reason?: string;
}

export type TransportKind = "P2P" | "SHM" | "NET" | "COLLNET" | "NVLS" | "other";

/**
 * One peer link: `Channel 00/0 : 3[3] -> 4[4] [send] via NET/IB/0/GDRDMA`, `Channel 00 : 1[a000] -> 0[7000] via P2P/IPC/read`,
 * 2.4-2.6 `Ring 00 : 15 -> 0 [receive] via NET/Socket/0`, `CollNet 00/0 : 0 [receive] via COLLNET/SHARP/1/GDRDMA`.
 */
export interface ChannelEvent extends EventBase {
  kind: "channel";
  channel: number;
  /** The `/n` after the channel number (connection index), when printed. */
  connIndex?: number;
  from: number;
  /** busId (<= 2.17) or nvmlDev (>= 2.18) in the brackets, as printed. */
  fromDev?: string;
  to?: number;
  toDev?: string;
  dir?: "send" | "receive";
  transport: TransportKind;
  /** Everything after `via `, e.g. `NET/IBext_v8/5(2)/GDRDMA`. */
  via: string;
  /** For NET/COLLNET: IB, Socket, IBext_v8, SHARP ... */
  net?: string;
  netDev?: number;
  /** PXN: the rank in parentheses after the device (`5(2)`). */
  proxyRank?: number;
  /** GPUDirect RDMA used on this link (`/GDRDMA`). Always false for P2P/SHM. */
  gdr: boolean;
  shared?: boolean;
  /** P2P mode: IPC, CUMEM, direct pointer, ...; SHM mode: direct/direct. */
  mode?: string;
}

/** Ring order `Channel 00/02 :    0   1 ...` or a 2.16 graph ring `Ring 00 : 1 -> 0 -> 1`. */
export interface RingEvent extends EventBase {
  kind: "ring";
  channel: number;
  nChannels?: number;
  order?: number[];
  prev?: number;
  self?: number;
  next?: number;
}

export interface TreeLink {
  channel: number;
  rank: number;
  up: number;
  down: number[];
}

/** `Trees [0] 1/-1/-1->0->-1 [1] ...` (2.7 prints `down->r->up|up->r->down`; the first half is kept). */
export interface TreeEvent extends EventBase {
  kind: "tree";
  trees: TreeLink[];
}

/** `Connected all rings` / `Connected all trees` (2.28: `Connected all rings, use ring PXN 0 GDR 1`). */
export interface ConnectedEvent extends EventBase {
  kind: "connected";
  what: "rings" | "trees";
  pxn?: boolean;
  gdr?: boolean;
}

/** `host:pid:tid [dev] file.cc:123 NCCL WARN message` (2.29+: `file.cc:123 (func) NCCL WARN`). */
export interface WarnEvent extends EventBase, WarnDetail {
  kind: "warn";
  message: string;
  file?: string;
  line?: number;
  func?: string;
}

/** NCCL's error-return chain `misc/socket.cc:564 -> 2 [Async thread]`; code is an ncclResult_t. */
export interface RetcodeEvent extends EventBase {
  kind: "retcode";
  file: string;
  line: number;
  code: number;
  context?: string;
}

/** `comm 0x.. rank 0 nranks 16 cudaDev 0 busId 4000 - Abort COMPLETE` (and START, Destroy). */
export interface TeardownEvent extends EventBase {
  kind: "teardown";
  what: "abort" | "destroy";
  phase: "start" | "complete";
  comm?: string;
  rank?: number;
  nranks?: number;
  commCudaDev?: number;
  busId?: string;
}

import type {
  PtBarrierEvent,
  PtDesyncEvent,
  PtDumpEvent,
  PtErrorEvent,
  PtFlightRecorderEvent,
  PtHeartbeatEvent,
  PtMismatchEvent,
  PtRunningEvent,
  PtWatchdogTimeoutEvent,
  PtWorkStatusEvent,
} from "../pytorch/types.js";

export type * from "../pytorch/types.js";

/** Everything parseLine() can return; switch on `kind`. */
export type NcclEvent =
  | VersionEvent
  | InitEvent
  | CommInfoEvent
  | CollEvent
  | NetEvent
  | GdrEvent
  | ChannelEvent
  | RingEvent
  | TreeEvent
  | ConnectedEvent
  | WarnEvent
  | RetcodeEvent
  | TeardownEvent
  | PtWatchdogTimeoutEvent
  | PtWorkStatusEvent
  | PtHeartbeatEvent
  | PtDumpEvent
  | PtDesyncEvent
  | PtFlightRecorderEvent
  | PtErrorEvent
  | PtMismatchEvent
  | PtRunningEvent
  | PtBarrierEvent;

export type NcclEventKind = NcclEvent["kind"];
