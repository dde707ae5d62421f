/**
 * NCCL RAS text reports as `ncclras` prints them (src/ras/client_support.cc; captures 97 and 98 show
 * the real layout), for scenarios no capture covers: a rank behind on another node, dead processes.
 */
export interface RasTextSpec {
  ncclVersion?: string;
  nodes: number;
  ranksPerNode: number;
  /** Lines of the Errors section (DEAD / INCOMPLETE process entries). */
  errors?: string[];
  /** Lines of the Warnings section (communicator entries). */
  warnings: string[];
}

export function rasText(spec: RasTextSpec): string {
  const ranks = spec.nodes * spec.ranksPerNode;
  const pad = (v: number | string, w: number): string => String(v).padStart(w);
  return [
    `NCCL version ${spec.ncclVersion ?? "2.26.2"} compiled with CUDA 12.6`,
    "",
    "Communicators... (0.01s)",
    "=============",
    "",
    "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
    "    #  in group  per comm  per node  per comm  in group",
    `    0         1${pad(spec.nodes, 10)}${pad(spec.ranksPerNode, 10)}${pad(ranks, 10)}${pad(ranks, 10)}   RUNNING  MISMATCH`,
    "",
    ...(spec.errors ? ["Errors", "======", "", ...spec.errors, ""] : []),
    "Warnings",
    "========",
    "",
    ...spec.warnings,
    "",
  ].join("\n");
}

/** A communicator whose ranks are at different operation counts of `op`, one rank listed behind. */
export function oneRankBehind(a: { hash: string; op: string; ranks: number; top: number; rank: number; gpu: number; pid: number; node: string }): string[] {
  return [
    `#0-0 (${a.hash}) MISMATCH`,
    `  Communicator ranks have different ${a.op} operation counts`,
    `  ${a.ranks - 1} ranks have launched up to operation ${a.top}`,
    `  Rank ${a.rank} has launched up to operation ${a.top - 1} -- GPU ${a.gpu} managed by process ${a.pid} on node ${a.node}`,
  ];
}
