/**
 * JobSpec: what a simulated training job looks like (nodes, ranks, NCCL version, transport,
 * communicators, logged subsystems, devices, pids) and `resolveSpec`, which fills defaults.
 * Defaults describe DGX H100 nodes: 8 GPUs at PCI buses 18/2a/3a/5d/9a/ab/ba/db and eight
 * ConnectX-7 compute HCAs.
 */
import { parseVersion, traitsOf, type NcclVersion, type VersionTraits } from "./version.js";

export type Subsys = "INIT" | "COLL" | "NET" | "DESTROY";
export type TransportKind = "ib" | "roce" | "socket";
export type CollOpName = "AllReduce" | "AllGather" | "ReduceScatter" | "Broadcast" | "Reduce";

export interface TransportSpec {
  /** "socket" is the fallback: `NET/IB : No device found.` then `NET/Socket : Using ...`. */
  kind: TransportKind;
  /** GPUDirect RDMA: channel lines end `/GDRDMA`; off prints `GPU Direct RDMA Disabled for HCA`. */
  gdr: boolean;
  hcas: string[];
  /** Interface NCCL uses for bootstrap / OOB, e.g. ib0, eth0. */
  oobIf: string;
}

export interface DeviceInfo {
  cudaDev: number;
  nvmlDev: number;
  /** As NCCL prints it: `%lx` of the PCI bus id, e.g. 18000, 2a000. */
  busId: string;
}

/** A sub-communicator family, e.g. TP groups of 2 (contiguous) or DP groups (strided). */
export interface SubCommSpec {
  name: string;
  groupSize: number;
  /** contiguous: ranks [g*size, (g+1)*size); strided: ranks {g, g+W/size, g+2W/size, ...}. */
  layout: "contiguous" | "strided";
  /** ncclCommSplit of the world comm (default; prints parent/splitCount/color/key) or a fresh ncclCommInitRank. */
  via?: "split" | "init";
}

/** One collective of a training step, issued on the rank's member comm of `comm`. */
export interface PlanOp {
  comm: string;
  op: CollOpName;
  count: number;
  /** ncclDataType_t: 7 float32, 9 bfloat16, 0 int8 (fixtures 51, 91). */
  datatype: number;
  root?: number;
}

export interface JobSpec {
  seed?: number;
  nodes?: string[];
  ranksPerNode?: number;
  /** "2.21.5+cuda12.4", "2.23.4", "2.27.6", "2.29.2", ... (2.19 to 2.29). */
  ncclVersion?: string;
  transport?: Partial<TransportSpec>;
  comms?: SubCommSpec[];
  subsystems?: Subsys[];
  /** Per local rank; default cudaDev = nvmlDev = localRank on DGX H100 bus ids. */
  devices?: DeviceInfo[];
  /** pids[node][localRank]; default consecutive pids per node (torchrun). */
  pids?: number[][];
  initApi?: "ncclCommInitRank" | "ncclCommInitRankConfig";
  /** Epoch ms of simulated time 0; only used to print WARN / PyTorch timestamps (UTC). */
  startTime?: number;
  initMs?: number;
  stepMs?: number;
  /** Relative step-time jitter, e.g. 0.05 = +-5 %. */
  jitter?: number;
  channels?: number;
  /** Gradient buckets (AllReduce on dp, or world without dp) per step. */
  buckets?: number;
  /** World Broadcast every N steps (step 0 included); 0 = never. */
  broadcastEvery?: number;
  /** Custom per-step plan; overrides the default recipe. */
  plan?: (step: number) => PlanOp[];
}

export interface ResolvedSpec {
  seed: number;
  nodes: string[];
  ranksPerNode: number;
  worldSize: number;
  version: NcclVersion;
  traits: VersionTraits;
  transport: TransportSpec;
  comms: SubCommSpec[];
  subsystems: Set<Subsys>;
  devices: DeviceInfo[];
  pids: number[][];
  initApi: string;
  startTime: number;
  initMs: number;
  stepMs: number;
  jitter: number;
  channels: number;
  buckets: number;
  broadcastEvery: number;
  plan: ((step: number) => PlanOp[]) | undefined;
}

/** DGX H100 GPU bus ids in nvidia-smi order. */
export const DGX_H100_BUS_IDS = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"];
/** DGX H100 compute HCAs (ConnectX-7, one per GPU). */
export const DGX_H100_HCAS = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"];

export function resolveSpec(spec: JobSpec = {}): ResolvedSpec {
  const seed = spec.seed ?? 1;
  const nodes = spec.nodes ?? ["dgx-a01", "dgx-a02"];
  const ranksPerNode = spec.ranksPerNode ?? 8;
  const worldSize = nodes.length * ranksPerNode;
  if (nodes.length < 1 || ranksPerNode < 1) throw new Error("need at least one node and one rank per node");
  if (new Set(nodes).size !== nodes.length) throw new Error("hostnames must be unique");
  const version = parseVersion(spec.ncclVersion ?? "2.23.4");
  const kind = spec.transport?.kind ?? "ib";
  const transport: TransportSpec = {
    kind,
    gdr: kind !== "socket" && (spec.transport?.gdr ?? true),
    hcas: spec.transport?.hcas ?? DGX_H100_HCAS.slice(0, Math.max(1, Math.min(8, ranksPerNode))),
    oobIf: spec.transport?.oobIf ?? (kind === "ib" ? "ib0" : "eth0"),
  };
  if (spec.devices === undefined && ranksPerNode > DGX_H100_BUS_IDS.length) {
    throw new Error(`more than ${DGX_H100_BUS_IDS.length} ranks per node need an explicit devices list`);
  }
  const devices =
    spec.devices ??
    range(ranksPerNode).map((l) => ({
      cudaDev: l,
      nvmlDev: l,
      busId: DGX_H100_BUS_IDS[l % DGX_H100_BUS_IDS.length] ?? "18000",
    }));
  if (devices.length !== ranksPerNode) throw new Error("devices must list one entry per local rank");
  const comms = spec.comms ?? [];
  for (const c of comms) {
    if (c.name === "world") throw new Error("'world' is the name of the world communicator");
    if (c.groupSize < 1 || worldSize % c.groupSize !== 0) throw new Error(`comm ${c.name}: groupSize must divide ${worldSize}`);
  }
  const pids =
    spec.pids ??
    nodes.map((_, n) => {
      const base = 1000 + ((seed * 7919 + n * 104729) % 400000);
      return range(ranksPerNode).map((l) => base + l);
    });
  return {
    seed,
    nodes,
    ranksPerNode,
    worldSize,
    version,
    traits: traitsOf(version),
    transport,
    comms,
    subsystems: new Set(spec.subsystems ?? ["INIT", "COLL", "NET"]),
    devices,
    pids,
    initApi: spec.initApi ?? "ncclCommInitRank",
    startTime: spec.startTime ?? Date.UTC(2025, 4, 13, 13, 0, 0),
    initMs: spec.initMs ?? 4000,
    stepMs: spec.stepMs ?? 1000,
    jitter: spec.jitter ?? 0.05,
    channels: spec.channels ?? (nodes.length > 1 ? Math.min(16, 2 * transport.hcas.length) : 2),
    buckets: spec.buckets ?? 4,
    broadcastEvery: spec.broadcastEvery ?? 100,
    plan: spec.plan,
  };
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
