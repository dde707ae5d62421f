/**
 * The fixed identity of a simulated job: one process per rank (torchrun style) with its host,
 * pid, thread ids, device and file name, and the communicators with their process-local
 * pointers (every rank has its own `comm 0x...`), shared commIds, split keys and PyTorch PG ids.
 */
import { Rng } from "./rng.js";
import { range, type DeviceInfo, type ResolvedSpec } from "./spec.js";

export interface Tids {
  main: number;
  /** Thread of the async init job of comm #i (2.2x runs init off the main thread, fixture 02). */
  init: (commIndex: number) => number;
  /** Runtime-connect thread of comm #i (channel lines after Init COMPLETE, fixture 02). */
  connect: (commIndex: number) => number;
  proxyProgress: number;
  proxyService: number;
}

export interface RankInfo {
  rank: number;
  node: number;
  localRank: number;
  host: string;
  pid: number;
  tids: Tids;
  dev: DeviceInfo;
  ip: string;
  /** NCCL_DEBUG_FILE=nccl-%h-%p.log */
  file: string;
  /** Where PyTorch's stderr (watchdog lines) of this process is captured. */
  stderrFile: string;
  /** Base of this process's CUDA allocations (COLL sendbuff/recvbuff). */
  bufBase: bigint;
}

export interface Comm {
  /** "world" or `${family}.${groupIndex}`. */
  name: string;
  family: string;
  /** Creation order; 0 is the world comm. */
  index: number;
  /** Which of its process's comms this is (0 world, then one per family): init order and thread ids. */
  ordinal: number;
  groupIndex: number;
  via: "root" | "split" | "init";
  /** Global ranks in comm-rank order. */
  members: number[];
  nNodes: number;
  /** Shared by all members; absent for split comms (NCCL prints none). */
  commId: string | undefined;
  splitCount: number;
  pgId: number;
  pgDesc: string;
  /** Per comm rank: the process-local `ncclComm*` and the stream PyTorch uses for it. */
  ptr: string[];
  stream: string[];
}

export class Topology {
  readonly ranks: RankInfo[];
  readonly comms: Comm[];
  private readonly byFamily = new Map<string, Comm[]>();

  constructor(readonly spec: ResolvedSpec) {
    const rng = new Rng(spec.seed);
    const L = spec.ranksPerNode;
    this.ranks = range(spec.worldSize).map((rank) => {
      const node = Math.floor(rank / L);
      const localRank = rank % L;
      const host = spec.nodes[node] ?? `node${node}`;
      const pid = spec.pids[node]?.[localRank] ?? 1000 + rank;
      const dev = spec.devices[localRank] ?? { cudaDev: localRank, nvmlDev: localRank, busId: "18000" };
      const tids: Tids = {
        main: pid,
        init: (i) => pid + 28 + 31 * i,
        connect: (i) => pid + 54 + 31 * i,
        proxyService: pid + 47,
        proxyProgress: pid + 50,
      };
      return {
        rank,
        node,
        localRank,
        host,
        pid,
        tids,
        dev,
        ip: `10.${128 + (spec.seed % 64)}.${node >> 8}.${(node % 250) + 1}`,
        file: `nccl-${host}-${pid}.log`,
        stderrFile: `stderr-${host}-${pid}.log`,
        bufBase: rng.devicePtr(),
      };
    });
    this.comms = [];
    const world = this.makeComm(rng, "world", "world", 0, 0, "root", range(spec.worldSize), 0, 0);
    this.byFamily.set("world", [world]);
    let pgId = 1;
    let splitCount = 0;
    for (const [fi, f] of spec.comms.entries()) {
      const nGroups = spec.worldSize / f.groupSize;
      const via = f.via ?? "split";
      if (via === "split") splitCount++;
      const list: Comm[] = [];
      for (let g = 0; g < nGroups; g++) {
        const members = range(f.groupSize).map((j) => (f.layout === "contiguous" ? g * f.groupSize + j : g + j * nGroups));
        list.push(this.makeComm(rng, `${f.name}.${g}`, f.name, fi + 1, g, via, members, via === "split" ? splitCount : 0, pgId + g));
      }
      pgId += nGroups;
      this.byFamily.set(f.name, list);
    }
  }

  private makeComm(
    rng: Rng,
    name: string,
    family: string,
    ordinal: number,
    groupIndex: number,
    via: Comm["via"],
    members: number[],
    splitCount: number,
    pgId: number,
  ): Comm {
    const nodes = new Set(members.map((r) => this.ranks[r]?.node));
    const comm: Comm = {
      name,
      family,
      index: this.comms.length,
      ordinal,
      groupIndex,
      via,
      members,
      nNodes: nodes.size,
      commId: via === "split" ? undefined : rng.commId(),
      splitCount,
      pgId,
      pgDesc: family === "world" ? "default_pg" : "undefined",
      ptr: members.map(() => rng.heapPtr()),
      stream: members.map(() => rng.heapPtr()),
    };
    this.comms.push(comm);
    return comm;
  }

  rank(r: number): RankInfo {
    const info = this.ranks[r];
    if (info === undefined) throw new Error(`no rank ${r}`);
    return info;
  }

  /** The comm of `family` that `rank` belongs to. */
  commOf(rank: number, family: string): Comm {
    const list = this.byFamily.get(family);
    if (list === undefined) throw new Error(`no communicator family ${family}`);
    const c = list.find((x) => x.members.includes(rank));
    if (c === undefined) throw new Error(`rank ${rank} is in no ${family} comm`);
    return c;
  }

  /** Comms `rank` belongs to, in creation order (world first). */
  commsOf(rank: number): Comm[] {
    return this.comms.filter((c) => c.members.includes(rank));
  }

  families(): string[] {
    return [...this.byFamily.keys()];
  }

  /** Position of `rank` inside `comm`. */
  static commRank(comm: Comm, rank: number): number {
    const i = comm.members.indexOf(rank);
    if (i < 0) throw new Error(`rank ${rank} not in ${comm.name}`);
    return i;
  }

  /** This rank's process-local pointer of `comm`. */
  static ptrOf(comm: Comm, rank: number): string {
    return comm.ptr[Topology.commRank(comm, rank)] ?? "0x0";
  }
}
