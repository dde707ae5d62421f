/**
 * The init block a rank writes: process lines (bootstrap, driver, version, NET transport) and per
 * communicator `Init START` ... `Init COMPLETE` with comm info, ring listing, trees and channel
 * connections. Shapes follow fixture 02 (2.23.4), 05 (2.29.2), 32 (2.27.6), 49 (GDR disabled,
 * RoCE), 04 (GDR enabled), 44/34 (socket fallback), 20/25/41 (channel lines); split comms follow
 * the NCCL init.cc format strings (no fixture has one).
 */
import { infoText, pad2, type LineKind } from "./format.js";
import { unit } from "./rng.js";
import type { ResolvedSpec } from "./spec.js";
import { Topology, type Comm, type RankInfo } from "./topology.js";

export interface Out {
  kind: LineKind;
  text: string;
  comm?: string;
}

function has(spec: ResolvedSpec, s: "INIT" | "NET"): boolean {
  return spec.subsystems.has(s);
}

/** Lines each process writes once, before its first Init START. */
export function processLines(spec: ResolvedSpec, r: RankInfo): Out[] {
  const t = spec.traits;
  const tr = spec.transport;
  const out: Out[] = [];
  const main = (kind: LineKind, msg: string): void => {
    out.push({ kind, text: infoText(r, r.tids.main, msg) });
  };
  const net = (msg: string): void => {
    out.push({ kind: "net", text: infoText(r, r.tids.init(0), msg) });
  };
  const oob = `${tr.oobIf}:${r.ip}<0>`;
  if (has(spec, "INIT")) {
    main("bootstrap", `${t.bootstrapWord} ${oob}`);
    const cuda = /cuda(\d+)\.(\d+)/.exec(spec.version.full);
    main("init", `cudaDriverVersion ${Number(cuda?.[1] ?? 12) * 1000 + Number(cuda?.[2] ?? 4) * 10}`);
  }
  // NCCL_ALL: the version line shows whatever subsystems are chosen.
  if (t.versionOnEveryProcess || r.rank === 0) main("version", `NCCL version ${spec.version.full}`);
  if (!has(spec, "INIT")) return out;
  const plugin = (name: string): void => {
    if (t.netPluginInitLines) {
      net(`Initialized NET plugin ${name}`);
      net(`Assigned NET plugin ${name} to comm`);
    }
    if (t.nonDeviceNetLine) net("Using non-device net plugin version 0");
    net(`Using network ${name}`);
  };
  if (tr.kind === "socket") {
    net("NET/IB : No device found.");
    if (t.netPluginInitLines) {
      net(`NET/IB : Using [RO]; OOB ${oob}`);
      net("Failed to initialize NET plugin IB");
    }
    net(`NET/Socket : Using [0]${oob}`);
    plugin("Socket");
  } else {
    const link = tr.kind === "roce" ? "RoCE" : "IB";
    net(`NET/IB : Using ${tr.hcas.map((h, i) => `[${i}]${h}:1/${link}`).join(" ")} [RO]; OOB ${oob}`);
    plugin("IB");
  }
  return out;
}

/** Per node (in comm order), its comm ranks rotated by the channel: NCCL uses a different local order per channel. */
function nodeBlocks(topo: Topology, comm: Comm, channel: number): number[][] {
  const byNode = new Map<number, number[]>();
  comm.members.forEach((g, cr) => {
    const node = topo.rank(g).node;
    byNode.set(node, [...(byNode.get(node) ?? []), cr]);
  });
  return [...byNode.values()].map((locals) => {
    const k = channel % locals.length;
    return [...locals.slice(k), ...locals.slice(0, k)];
  });
}

function ringOf(topo: Topology, comm: Comm, channel: number): number[] {
  const ring = nodeBlocks(topo, comm, channel).flat();
  // NCCL lists every ring starting from rank 0 (fixtures 02, 26).
  const z = ring.indexOf(0);
  return [...ring.slice(z), ...ring.slice(0, z)];
}

/** NCCL's double binary tree, simplified: chain inside a node, binary tree over node heads, mirrored on odd channels. */
function treeOf(topo: Topology, comm: Comm, channel: number, cr: number): string {
  const chains = nodeBlocks(topo, comm, channel);
  if (channel % 2 === 1) chains.reverse();
  const ci = chains.findIndex((c) => c.includes(cr));
  const chain = chains[ci] ?? [cr];
  const pos = chain.indexOf(cr);
  const down: number[] = [];
  let up = -1;
  const next = chain[pos + 1];
  if (next !== undefined) down.push(next);
  if (pos > 0) up = chain[pos - 1] ?? -1;
  else {
    if (ci > 0) up = chains[(ci - 1) >> 1]?.[0] ?? -1;
    for (const child of [2 * ci + 1, 2 * ci + 2]) {
      const head = chains[child]?.[0];
      if (head !== undefined) down.push(head);
    }
  }
  while (down.length < 3) down.push(-1);
  return `${down.slice(0, 3).join("/")}->${cr}->${up}`;
}

export function channelsOf(spec: ResolvedSpec, comm: Comm): number {
  return comm.nNodes > 1 ? spec.channels : 2;
}

function netVia(spec: ResolvedSpec, r: RankInfo): string {
  const tr = spec.transport;
  if (tr.kind === "socket") return "NET/Socket/0";
  return `NET/IB/${r.localRank % tr.hcas.length}${tr.gdr ? "/GDRDMA" : ""}`;
}

/** Ring connections of one comm (`Channel 00/0 : 7[1] -> 0[0] [receive] via NET/IB/1/GDRDMA`). */
export function connectLines(spec: ResolvedSpec, topo: Topology, r: RankInfo, comm: Comm, tid: number): Out[] {
  if (!has(spec, "INIT") || comm.members.length < 2) return [];
  const out: Out[] = [];
  const cr = Topology.commRank(comm, r.rank);
  const peer = (x: number): string => `${x}[${topo.rank(comm.members[x] ?? 0).dev.nvmlDev}]`;
  const line = (msg: string): void => {
    out.push({ kind: "connect", text: infoText(r, tid, msg), comm: comm.name });
  };
  for (let c = 0; c < channelsOf(spec, comm); c++) {
    const ring = ringOf(topo, comm, c);
    const i = ring.indexOf(cr);
    const prev = ring[(i - 1 + ring.length) % ring.length] ?? cr;
    const next = ring[(i + 1) % ring.length] ?? cr;
    const nodeOf = (x: number): number => topo.rank(comm.members[x] ?? 0).node;
    if (nodeOf(prev) !== r.node) line(`Channel ${pad2(c)}/0 : ${peer(prev)} -> ${peer(cr)} [receive] via ${netVia(spec, r)}`);
    if (nodeOf(next) !== r.node) line(`Channel ${pad2(c)}/0 : ${peer(cr)} -> ${peer(next)} [send] via ${netVia(spec, r)}`);
    else line(`Channel ${pad2(c)}/0 : ${peer(cr)} -> ${peer(next)} via P2P/CUMEM`);
  }
  line("Connected all rings");
  line("Connected all trees");
  return out;
}

/** `Init START` ... `Init COMPLETE` (+ `Init timings`) of one comm on one rank. */
export function commInitLines(spec: ResolvedSpec, topo: Topology, r: RankInfo, comm: Comm): Out[] {
  if (!has(spec, "INIT") && !(has(spec, "NET") && comm.ordinal === 0)) return [];
  const t = spec.traits;
  const tid = r.tids.init(comm.ordinal);
  const out: Out[] = [];
  const line = (kind: LineKind, msg: string): void => {
    out.push({ kind, text: infoText(r, tid, msg), comm: comm.name });
  };
  const cr = Topology.commRank(comm, r.rank);
  const n = comm.members.length;
  const ptr = Topology.ptrOf(comm, r.rank);
  const api = comm.via === "split" ? "ncclCommSplit" : spec.initApi;
  const who = `comm ${ptr} rank ${cr} nranks ${n} cudaDev ${r.dev.cudaDev} nvmlDev ${r.dev.nvmlDev} busId ${r.dev.busId}`;
  const world = topo.comms[0];
  const parent = world === undefined ? "0x0" : Topology.ptrOf(world, r.rank);
  const split = `parent ${parent} ${t.splitCountWord} ${comm.splitCount} color ${comm.groupIndex} key ${r.rank}`;
  const init = has(spec, "INIT");
  if (init) {
    if (comm.via === "split") line("init", `${api} ${who} ${split}- Init START`);
    else line("init", `${t.rankPrefixOnInitStart ? `[Rank ${cr}] ` : ""}${api} ${who} commId ${comm.commId ?? "0x0"} - Init START`);
  }
  if (has(spec, "NET") && comm.ordinal === 0 && spec.transport.kind !== "socket") {
    const state = spec.transport.gdr ? "Enabled" : "Disabled";
    spec.transport.hcas.forEach((h, i) => {
      line("gdr", `NET/IB : GPU Direct RDMA ${state} for HCA ${i} '${h}'`);
    });
  }
  if (!init) return out;
  const local = comm.members.filter((g) => topo.rank(g).node === r.node);
  line("topo", `comm ${ptr} rank ${cr} nRanks ${n} nNodes ${comm.nNodes} localRanks ${local.length} localRank ${local.indexOf(r.rank)} MNNVL 0`);
  const nc = channelsOf(spec, comm);
  if (cr === 0 && n > 1) {
    for (let c = 0; c < nc; c++) {
      const ring = ringOf(topo, comm, c);
      const list = t.ringSingleSpace ? ` ${ring.join(" ")}` : ` ${ring.map((x) => String(x).padStart(4)).join("")}`;
      line("topo", `Channel ${pad2(c)}/${pad2(nc)} :${list}`);
    }
  }
  line("topo", `Trees ${Array.from({ length: nc }, (_, c) => `[${c}] ${treeOf(topo, comm, c, cr)}`).join(" ")}`);
  line("topo", "P2P Chunksize set to 131072");
  if (!t.runtimeConnect) out.push(...connectLines(spec, topo, r, comm, tid));
  const np = 2 ** Math.ceil(Math.log2(nc));
  line(
    "topo",
    t.collnetInChannelsLine
      ? `${nc} coll channels, ${nc} collnet channels, 0 nvls channels, ${np} p2p channels, 1 p2p channels per peer`
      : `${nc} coll channels, 0 nvls channels, ${np} p2p channels, 1 p2p channels per peer`,
  );
  line("init", comm.via === "split" ? `${api} ${who} ${split} - Init COMPLETE` : `${api} ${who} commId ${comm.commId ?? "0x0"} - Init COMPLETE`);
  if (t.initTimings) {
    const u = (k: number): number => unit(spec.seed, 4711, r.rank, comm.index, k);
    const parts = [0.08 + u(1) * 0.02, 0.08 + u(2) * 0.02, 0.01 + u(3) * 0.02, 0.01, 0.07 + u(4) * 0.01, 0, 0.3 + u(5) * 0.3, 0];
    const total = parts.reduce((a, b) => a + b, 0);
    const f = (x: number): string => x.toFixed(2);
    line(
      "init",
      `Init timings - ${api}: rank ${cr} nranks ${n} total ${f(total)} (kernels ${f(parts[0] ?? 0)}, alloc ${f(parts[1] ?? 0)}, ` +
        `bootstrap ${f(parts[2] ?? 0)}, allgathers ${f(parts[3] ?? 0)}, topo ${f(parts[4] ?? 0)}, graphs ${f(parts[5] ?? 0)}, ` +
        `connections ${f(parts[6] ?? 0)}, rest ${f(parts[7] ?? 0)})`,
    );
  }
  return out;
}
