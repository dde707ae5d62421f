/**
 * Offline findings about the fabric: sockets instead of IB, GPUDirect RDMA off; and (errors.ts)
 * network errors and NCCL errors, which analyze asks for through transportFindings.
 */
import type { ProcessState, WarningRecord } from "../state/model.js";
import { ibVerbsMissing, socketPicked, transportOf } from "../state/transport.js";
import type { TrackedState } from "../detect/verdict.js";
import { errorFindings } from "./errors.js";
import { ranksOf } from "./procs.js";
import { type Finding, uniq } from "../../verdict/report.js";
import { gdrDisabled, socketTransport } from "../../verdict/finding.js";
import { gdrDisabledWords, socketTransportWords } from "../../verdict/words.js";

/** Lines that name no process (quoted alone, or behind a prefix NCCL did not write): they still count, with no host:pid. */
export interface OrphanLines {
  warnings: readonly WarningRecord[];
  /** Where each `GPU Direct RDMA Disabled for GPU ...` line was. */
  gdrDisabled: readonly string[];
  /** Channels through the network in lines that name no process (`[0] NCCL INFO Ring 00 : ... via NET/IB/0`). */
  netLinks?: readonly { where: string; net: string; gdr: boolean }[];
  /** `host:pid` of NCCL lines that gave no event (a form not read, a line cut after its header): processes of the job all the same. */
  seen?: readonly string[];
  /**
   * The one host a tool's list of every rank puts them all on (nccl-tests' `Using devices` table),
   * with the processes it names (`host:pid`) and how many ranks it lists.
   */
  oneHostJob?: { host: string; processes: readonly string[]; ranks: number };
}

/** The tracker, as transportFindings reads it: what each orphan GDR line said, when it kept that. */
export type FabricState = TrackedState & { readonly orphanGdrWhy?: ReadonlyMap<string, string> };

/** `reported`: the NCCL results another source says the job's calls returned (errors.ts). */
export function transportFindings(
  state: FabricState,
  orphans: OrphanLines = { warnings: [], gdrDisabled: [] },
  reported: ReadonlySet<number> = new Set(),
): Finding[] {
  const procs = [...state.processes.values()];
  return [...socketFindings(state, procs, orphans), ...gdrFindings(state, procs, orphans), ...errorFindings(state, orphans.warnings, reported)];
}

function socketFindings(state: TrackedState, procs: readonly ProcessState[], orphans: OrphanLines): Finding[] {
  const keys = withoutTornHosts(uniq([...procs.map((p) => p.key), ...(orphans.seen ?? [])]));
  const hosts = uniq(keys.map((k) => k.slice(0, k.lastIndexOf(":"))));
  // One host: several processes of one host name (one process alone does not tell; a name a poster
  // redacted, `<cluster_name>`, or one NCCL printed empty or as `:`, may stand for several hosts).
  const h0 = hosts[0] ?? "";
  // Or one process whose test lists every rank on its host (nccl-tests -g 2: one process, two GPUs; nccl-pasted 448).
  // Only where the table names every process the NCCL lines show and no communicator is larger than it:
  // a test's table beside another job's log, or a table cut after one node's rows, says nothing of the job.
  const job = orphans.oneHostJob;
  const listed =
    job !== undefined &&
    firstLabel(job.host) === firstLabel(h0) &&
    keys.every((k) => job.processes.includes(k)) &&
    ![...state.comms.values()].some((c) => (c.nranks ?? 0) > job.ranks);
  const singleHost = (keys.length > 1 || listed || allRanksShown(state, procs)) && hosts.length === 1 && !h0.startsWith("<") && h0 !== "" && h0 !== ":";
  // A quiet host: on one host NCCL's network carries nothing between its ranks (P2P and SHM do), so
  // sockets selected there (NET/IB : No device found, NCCL_NET=Socket, NCCL_IB_DISABLE=1) move
  // nothing unless a channel goes through one. The job reaches other nodes, over sockets, where a
  // communicator has more ranks than the logs show, a process warned of its network (a net plugin
  // that failed, no libibverbs), or a process beside them is on a fabric.
  const all = procs.filter((p) => transportOf(p).net === "Socket" || socketPicked(p));
  const quiet =
    singleHost &&
    !spansNodes(state) &&
    procs.every((p) => transportOf(p).net !== "IB" && transportOf(p).net !== "RoCE") &&
    all.every((p) => !carriesSocketData(p) && !p.warnings.some(ofNetwork));
  const socket = quiet ? [] : all;
  // A WARN of the NET/Socket plugin that names no process: the process that logged it used sockets.
  const orphan = orphans.warnings.filter((w) => w.message.startsWith("NET/Socket"));
  if (socket.length === 0 && orphan.length === 0) return quiet ? quietNoVerbs(state, all, h0) : [];
  const interfaces = uniq(socket.map((p) => p.socketIfs).filter((x): x is string => x !== undefined));
  // Processes whose NCCL could not load libibverbs: that, not a guess among causes, is why they use sockets.
  const noVerbs = socket.map((p) => ({ p, w: ibVerbsMissing(p) })).filter((x): x is { p: ProcessState; w: WarningRecord } => x.w !== undefined);
  const verbsAlone = noVerbs.length > 0 && noVerbs.length === socket.length;
  const facts = { processes: socket.map((p) => p.key), noIb: !verbsAlone && socket.some((p) => p.evidence.has("no_ib")), interfaces };
  // Every process of the logs on one host: the sockets join ranks of that host (a test rig, or P2P/SHM turned off).
  const oneHost = socket.length > 0 && singleHost ? hosts[0] : undefined;
  const summary =
    oneHost !== undefined
      ? socketTransportWords.oneHost({ ...facts, host: oneHost })
      : socketTransportWords.betweenNodes({ ...facts, loopback: interfaces.some((x) => x.startsWith("lo:") || x.includes(" lo:")) });
  return [
    socketTransport({
      summary: noVerbs.length > 0 ? `${summary} ${libibverbsCause(noVerbs, socket.length)}` : summary,
      // With the ranks at the other end of their socket channels: those move data over sockets too.
      ranks: uniq([...ranksOf(state, socket), ...socket.flatMap((p) => [...p.socketPeers])]).sort((a, b) => a - b),
      processes: socket.map((p) => p.key),
      comm_id: null,
      evidence: [
        ...noVerbs.map((x) => x.w.where),
        ...socket.flatMap((p) => [p.evidence.get("no_ib"), p.evidence.get("socket_link") ?? p.evidence.get("socket_warn") ?? p.evidence.get("socket_picked")]),
        ...orphan.map((w) => w.where),
      ]
        .filter((w): w is string => w !== undefined)
        .slice(0, 5),
    }),
  ];
}

/**
 * The processes without those whose host name is another's with a torn writer's text before it
 * (`adp-uadp-us-llm-1-...:235`, where another process's `adp-u` was cut by this line; nccl-pasted
 * 760): the same pid on a host whose name ends the torn one is that process, not another host's;
 * for a short name (`ljm`), only where the torn text before it is the start of that pid (a cut pid).
 */
function withoutTornHosts(keys: readonly string[]): string[] {
  if (keys.length < 2) return [...keys];
  const split = keys.map((k) => {
    const c = k.lastIndexOf(":");
    return { k, host: k.slice(0, c), pid: k.slice(c + 1) };
  });
  return split
    .filter(
      (a) =>
        !split.some(
          (b) =>
            b.pid === a.pid &&
            b.host.length < a.host.length &&
            a.host.endsWith(b.host) &&
            (b.host.length >= 8 || cutPid(a.host, a.host.length - b.host.length, a.pid)),
        ),
    )
    .map((a) => a.k);
}

/** s[0, end) is the start of the pid: the same process's pid, cut, glued before its host name (`80356ljm:803564`, nccl-pasted 868). */
function cutPid(s: string, end: number, pid: string): boolean {
  return end > 0 && pid.startsWith(s.slice(0, end));
}

/** A host name up to its first dot, as NCCL prints it. */
function firstLabel(host: string): string {
  const d = host.indexOf(".");
  return d < 0 ? host : host.slice(0, d);
}

/**
 * One host whose NCCL could not load libibverbs and selected sockets, with nothing over them: NCCL
 * tries libibverbs on every host, and a host without IB warns so (nccl-pasted 430, Horovod on one
 * workstation). A note: if the job also runs on other nodes, the same fallback carries their traffic.
 */
function quietNoVerbs(state: TrackedState, picked: readonly ProcessState[], host: string): Finding[] {
  const noVerbs = picked.map((p) => ({ p, w: ibVerbsMissing(p) })).filter((x): x is { p: ProcessState; w: WarningRecord } => x.w !== undefined);
  if (noVerbs.length === 0) return [];
  return [
    socketTransport({
      severity: "info",
      summary: socketTransportWords.quietHostNoVerbs({ host, processes: noVerbs.map((x) => x.p.key) }),
      ranks: ranksOf(
        state,
        noVerbs.map((x) => x.p),
      ),
      processes: noVerbs.map((x) => x.p.key),
      comm_id: null,
      evidence: noVerbs.map((x) => x.w.where).slice(0, 5),
    }),
  ];
}

/**
 * A WARN that the net plugin the job was given failed to start: the job was meant to reach other
 * nodes over it. Not one of CUDA's or the topology's, nor NET/IB's `Unable to open device
 * mlx5_bond_0` on a host that then finds no device (nccl-pasted 391), nor a missing libibverbs,
 * which NCCL looks for on every host (430: one workstation without IB).
 */
function ofNetwork(w: WarningRecord): boolean {
  return w.kind === "net_plugin_error";
}

/**
 * Every communicator the logs show, initialised or still in its Init START, has all its ranks in
 * them (one process whose only communicator has `nranks 1`: nccl-pasted 512). False where none is shown.
 */
function allRanksShown(state: TrackedState, procs: readonly ProcessState[]): boolean {
  const starting = new Map<string, { nranks?: number; ranks: Set<number> }>();
  for (const p of procs)
    for (const [ptr, st] of p.initStarts) {
      const key = st.commId ?? `${p.key}/${ptr}`;
      const c = starting.get(key) ?? { ranks: new Set() };
      if (st.nranks !== undefined) c.nranks = st.nranks;
      if (st.rank !== undefined) c.ranks.add(st.rank);
      starting.set(key, c);
    }
  const sizes = [
    ...[...state.comms.values()].map((c) => ({ nranks: c.nranks, shown: c.ranks.size })),
    ...[...starting.values()].map((c) => ({ nranks: c.nranks, shown: c.ranks.size })),
  ];
  if (sizes.length === 0 || !sizes.every((c) => c.nranks !== undefined && c.nranks <= c.shown)) return false;
  // A launcher's rank beyond every communicator's size (`[rank12]:` beside a 1-rank subgroup) belongs to a larger job.
  const largest = Math.max(...sizes.map((c) => c.nranks ?? 0));
  return procs.every((p) => p.launcherRank === undefined || p.launcherRank < largest);
}

/** A communicator whose size NCCL printed is larger than the ranks of it the logs show. */
function spansNodes(state: TrackedState): boolean {
  for (const c of state.comms.values()) if (c.nranks !== undefined && c.nranks > c.ranks.size) return true;
  return false;
}

/** Channels that go through NET/Socket, or a WARN of the NET/Socket plugin: data moves over sockets. */
function carriesSocketData(p: ProcessState): boolean {
  for (const net of p.netLinks.keys()) if (net.startsWith("Socket")) return true;
  return p.evidence.has("socket_warn");
}

/**
 * The cause, where NCCL said it: libibverbs could not be loaded, so NET/IB never started. (Words
 * of this finding only; socketTransportWords in verdict/words.ts has no field for a known cause.)
 */
function libibverbsCause(noVerbs: readonly { p: ProcessState; w: WarningRecord }[], sockets: number): string {
  const who =
    noVerbs.length === sockets
      ? sockets === 1
        ? "this process"
        : "these processes"
      : noVerbs
          .map((x) => x.p.key)
          .slice(0, 4)
          .join(", ");
  const at = noVerbs[0]?.w.where ?? "";
  return (
    `The cause: NCCL could not load libibverbs in ${who} ("Failed to open libibverbs.so[.1]", ${at}), so NET/IB never started and NCCL fell back to TCP sockets. ` +
    "Install the IB verbs library (rdma-core: libibverbs1 and the HCA's provider, e.g. libmlx5) in the job's image or mount it into the container."
  );
}

function gdrFindings(state: FabricState, procs: readonly ProcessState[], orphans: OrphanLines): Finding[] {
  // Off on an IB/RoCE path; or said outright (`GPU Direct RDMA Disabled for ...`, a plugin disabling
  // GDR) by a process none of whose links uses GDRDMA, whatever network the excerpt shows.
  // An HCA that can (`Enabled for HCA 0`) beside its GPU that does not (`Disabled for GPU 81000 / HCA 0
  // (distance 6 > 4)`): NCCL prints both at init on one node too, so off only where traffic leaves the node.
  const leavesNode = uniq(procs.map((p) => p.host)).length > 1 || procs.some((p) => [...p.netLinks.keys()].some((n) => n.startsWith("IB") || n === "RoCE"));
  const noGdr = procs.filter((p) => {
    if (p.gdrEnabled > 0 && p.gdrEnabledGpu === 0 && !leavesNode) return false;
    const t = transportOf(p);
    if (t.gdr === "disabled" && (t.net === "IB" || t.net === "RoCE")) return true;
    return p.gdrOff !== undefined && p.gdrLinks === 0 && p.gdrEnabledGpu === 0;
  });
  // Links through IB in lines that name no process, none of them GDRDMA, where no process of the logs uses it.
  const ibLinks = (orphans.netLinks ?? []).filter((l) => l.net.startsWith("IB"));
  const orphanLinks = ibLinks.length > 0 && !ibLinks.some((l) => l.gdr) && !procs.some((p) => p.gdrLinks > 0) ? ibLinks.map((l) => l.where) : [];
  if (noGdr.length === 0 && orphans.gdrDisabled.length === 0 && orphanLinks.length === 0) return [];
  const said = uniq(
    [
      ...noGdr.map((p) => p.gdrOff && (noGdr.length > 1 ? `${p.key}: ${p.gdrOff}` : p.gdrOff)),
      ...orphans.gdrDisabled.map((w) => state.orphanGdrWhy?.get(w)),
    ].filter((x): x is string => x !== undefined && x !== ""),
  );
  const sockets = noGdr.some((p) => transportOf(p).net === "Socket");
  // Every process that said why says the GPU cannot do it (`(not supported by GPU)`: a GPU without
  // GPUDirect RDMA, nccl-pasted 382): nothing to fix, a note.
  const unsupported = said.length > 0 && said.every((x) => x.includes("(not supported")) && noGdr.every((p) => p.gdrOff !== undefined);
  return [
    gdrDisabled({
      ...(unsupported ? { severity: "info" as const } : {}),
      summary: gdrDisabledWords.off({ processes: noGdr.map((p) => p.key), said, sockets, unsupported }),
      ranks: ranksOf(state, noGdr),
      processes: noGdr.map((p) => p.key),
      comm_id: null,
      evidence: [...noGdr.map((p) => p.evidence.get("gdr_disabled") ?? p.evidence.get("net_link")), ...orphans.gdrDisabled, ...orphanLinks.slice(0, 2)]
        .filter((w): w is string => w !== undefined)
        .slice(0, 5),
    }),
  ];
}
