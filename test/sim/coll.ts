/**
 * Training-step plans and the COLL line:
 * `AllReduce: opCount 1a sendbuff 0x.. recvbuff 0x.. count 64 datatype 7 op 0 root 0 comm 0x.. [nranks=2] stream 0x..`
 * (fixtures 51, 56, 50, 91; NCCL enqueue.cc format `%s: opCount %lx sendbuff %p recvbuff %p count %zu
 * datatype %d op %d root %d comm %p [nranks=%d] stream %p`).
 */
import type { CollOpName, PlanOp, ResolvedSpec } from "./spec.js";
import type { Comm, RankInfo, Topology } from "./topology.js";
import { Topology as Topo } from "./topology.js";
import type { VersionTraits } from "./version.js";

/** DDP's default 25 MB bucket in float32 elements. */
const BUCKET = 6553600;

/**
 * Default recipe per step: [Broadcast on world every `broadcastEvery` steps], per layer pair a
 * TP AllGather + ReduceScatter (fixture 56), gradient buckets AllReduce on dp (or world), and a
 * 1-element world AllReduce (loss / grad norm, fixture 56 `count 1`).
 */
export function makePlan(spec: ResolvedSpec, topo: Topology): (step: number) => PlanOp[] {
  const families = new Set(topo.families());
  const check = (ops: PlanOp[]): PlanOp[] => {
    for (const o of ops) if (!families.has(o.comm)) throw new Error(`plan uses unknown comm family ${o.comm}`);
    return ops;
  };
  if (spec.plan !== undefined) {
    const custom = spec.plan;
    return (s) => check(custom(s));
  }
  const tp = spec.comms.find((c) => c.layout === "contiguous")?.name;
  const dp = spec.comms.find((c) => c.layout === "strided")?.name ?? "world";
  const body: PlanOp[] = [];
  if (tp !== undefined) {
    for (let l = 0; l < 2; l++) {
      body.push({ comm: tp, op: "AllGather", count: 2097152, datatype: 9 });
      body.push({ comm: tp, op: "ReduceScatter", count: 2097152, datatype: 9 });
    }
  }
  for (let b = 0; b < spec.buckets; b++) {
    body.push({ comm: dp, op: "AllReduce", count: b === spec.buckets - 1 ? 1843200 : BUCKET, datatype: 7 });
  }
  body.push({ comm: "world", op: "AllReduce", count: 1, datatype: 7 });
  const withBcast: PlanOp[] = [{ comm: "world", op: "Broadcast", count: 5056, datatype: 7, root: 0 }, ...body];
  return (s) => (spec.broadcastEvery > 0 && s % spec.broadcastEvery === 0 ? withBcast : body);
}

/**
 * Whether one more collective moves the comm's opCount. Before 2.27 every launched group bumps
 * it; from 2.27 only plans with network operations do, so single-node comms stay at 0 (NVIDIA/nccl
 * PR#2021). A 1-rank comm never launches a plan (fixture 55: `opCount 0 [nranks=1]` repeated).
 */
export function opCountAdvances(traits: VersionTraits, comm: Comm): boolean {
  if (comm.members.length === 1) return false;
  return !traits.opCountNetOnly || comm.nNodes > 1;
}

/** The COLL line split around the opCount hex, so that bulk writers only format the number. */
export interface CollParts {
  head: string;
  tail: string;
}

function hex(v: bigint): string {
  return `0x${v.toString(16)}`;
}

/** Buffers: a per-process 64 MiB slot per plan position; AllReduce/Broadcast run in place. */
export function collParts(r: RankInfo, comm: Comm, op: CollOpName, count: number, datatype: number, root: number, slot: number): CollParts {
  const base = r.bufBase + BigInt(slot % 64) * 0x4000000n;
  const small = count < 1024;
  const recv = small ? base + 0x1ff800n : base;
  let send = recv;
  if (op === "AllGather") send = recv + BigInt(Topo.commRank(comm, r.rank)) * 0x400000n + 0x2000000n;
  if (op === "ReduceScatter") send = recv + 0x2000000n;
  const n = comm.members.length;
  const ptr = Topo.ptrOf(comm, r.rank);
  const stream = comm.stream[Topo.commRank(comm, r.rank)] ?? "0x0";
  return {
    head: `${r.host}:${r.pid}:${r.pid} [${r.dev.cudaDev}] NCCL INFO ${op}: opCount `,
    tail: ` sendbuff ${hex(send)} recvbuff ${hex(recv)} count ${count} datatype ${datatype} op 0 root ${root} ` + `comm ${ptr} [nranks=${n}] stream ${stream}`,
  };
}

export function collText(parts: CollParts, opCount: number): string {
  return parts.head + opCount.toString(16) + parts.tail;
}

/** PyTorch's OpType and element counts for a NCCL collective (fixtures 82, 83, 93). */
export function torchWork(op: CollOpName, count: number, nranks: number): { opType: string; numelIn: number; numelOut: number } {
  switch (op) {
    case "AllReduce":
      return { opType: "ALLREDUCE", numelIn: count, numelOut: count };
    case "AllGather":
      return { opType: "_ALLGATHER_BASE", numelIn: count, numelOut: count * nranks };
    case "ReduceScatter":
      return { opType: "_REDUCE_SCATTER_BASE", numelIn: count * nranks, numelOut: count };
    case "Broadcast":
      return { opType: "BROADCAST", numelIn: count, numelOut: count };
    case "Reduce":
      return { opType: "REDUCE", numelIn: count, numelOut: count };
  }
}
