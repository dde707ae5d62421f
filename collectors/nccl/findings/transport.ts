/** Offline findings about the fabric: sockets instead of IB, GPUDirect RDMA off, network errors, NCCL errors. */
import type { ProcessState, WarningRecord } from "../state/model.js";
import { transportOf } from "../state/transport.js";
import type { TrackedState } from "../detect/verdict.js";
import { type Finding } from "./report.js";

const NETWORK_KINDS = new Set(["connection_reset", "connection_closed", "connect_failed", "ib_completion_error"]);
const ERROR_KINDS = new Set(["internal_error", "system_error", "bootstrap_error", "timeout", "cuda_error"]);

/** IB work-completion status numbers (ibv_wc_status) that come up in NCCL reports. */
const IB_STATUS: Record<number, string> = {
  4: "local protection error",
  5: "work request flushed (the QP went to error state earlier)",
  10: "remote access error",
  12: "transport retry counter exceeded: the peer stopped answering (link down, peer crashed, or a fabric problem)",
  13: "RNR retry counter exceeded",
};

function ranksOf(state: TrackedState, procs: ProcessState[]): number[] {
  const keys = new Set(procs.map((p) => p.key));
  const out = new Set<number>();
  for (const c of state.comms.values()) for (const r of c.ranks.values()) if (keys.has(r.processKey)) out.add(r.rank);
  return [...out].sort((a, b) => a - b);
}

/** Lines that name no process (quoted alone, or behind a prefix NCCL did not write): they still count, with no host:pid. */
export interface OrphanLines {
  warnings: readonly WarningRecord[];
  /** Where each `GPU Direct RDMA Disabled for GPU ...` line was. */
  gdrDisabled: readonly string[];
}

export function transportFindings(state: TrackedState, orphans: OrphanLines = { warnings: [], gdrDisabled: [] }): Finding[] {
  const out: Finding[] = [];
  const procs = [...state.processes.values()];
  const socket = procs.filter((p) => transportOf(p).net === "Socket");
  if (socket.length > 0) {
    const why = socket.some((p) => p.evidence.has("no_ib")) ? " (NET/IB : No device found, NCCL_IB_DISABLE set, or libibverbs missing)" : "";
    out.push({
      kind: "socket_transport",
      severity: "warning",
      summary:
        `NCCL moved data between nodes over TCP sockets, not InfiniBand/RoCE, on ${socket.length} process(es)${why}. ` +
        `Sockets reach a small fraction of IB bandwidth and load the CPUs. Check that the IB devices and libibverbs are visible to the job (NCCL_IB_HCA, container device mounts).`,
      ranks: ranksOf(state, socket),
      processes: socket.map((p) => p.key),
      comm_id: null,
      evidence: socket.flatMap((p) => [p.evidence.get("no_ib"), p.evidence.get("socket_link")]).filter((w): w is string => w !== undefined).slice(0, 5),
    });
  }
  // Off on an IB/RoCE path; or said outright ("GPU Direct RDMA Disabled for GPU x / HCA y") where
  // the excerpt does not show which network the process uses.
  const noGdr = procs.filter((p) => {
    const t = transportOf(p);
    return t.gdr === "disabled" && (t.net === "IB" || t.net === "RoCE" || (t.net === "unknown" && p.evidence.has("gdr_disabled")));
  });
  if (noGdr.length > 0 || orphans.gdrDisabled.length > 0) {
    out.push({
      kind: "gdr_disabled",
      severity: "warning",
      summary:
        `GPUDirect RDMA is off on ${noGdr.length > 0 ? `${noGdr.length} process(es)` : "the process that logged it"}: inter-node traffic is staged through host memory (roughly 10-50 % slower on large messages). ` +
        `Check that nvidia_peermem is loaded (ringwatch_gdr_peermem_loaded) and the GPU-NIC distance (NCCL_NET_GDR_LEVEL).`,
      ranks: ranksOf(state, noGdr),
      processes: noGdr.map((p) => p.key),
      comm_id: null,
      evidence: [...noGdr.map((p) => p.evidence.get("gdr_disabled") ?? p.evidence.get("net_link")), ...orphans.gdrDisabled].filter((w): w is string => w !== undefined).slice(0, 5),
    });
  }
  // Network errors, grouped by the peer they point at.
  const byPeer = new Map<string, { w: WarningRecord; p?: ProcessState }[]>();
  const all: { w: WarningRecord; p?: ProcessState }[] = [...procs.flatMap((p) => p.warnings.map((w) => ({ w, p }))), ...orphans.warnings.map((w) => ({ w }))];
  for (const x of all) {
    if (!NETWORK_KINDS.has(x.w.kind)) continue;
    const k = x.w.peer ?? "unknown peer";
    byPeer.set(k, [...(byPeer.get(k) ?? []), x]);
  }
  const procsOf = (list: readonly { p?: ProcessState }[]): ProcessState[] => [...new Set(list.map((x) => x.p).filter((p): p is ProcessState => p !== undefined))];
  for (const [peer, list] of byPeer) {
    const first = list[0]?.w;
    if (!first) continue;
    const kinds = [...new Set(list.map((x) => x.w.kind))].join(", ");
    const ib = list.find((x) => x.w.ibStatus !== undefined)?.w;
    const ibText = ib ? ` IB completion status ${ib.ibStatus}${ib.vendorErr !== undefined ? ` vendor err ${ib.vendorErr}` : ""}${IB_STATUS[ib.ibStatus ?? -1] ? `: ${IB_STATUS[ib.ibStatus ?? -1]}` : ""}.` : "";
    out.push({
      kind: "network_error",
      severity: "critical",
      summary: `${list.length} network error(s) (${kinds}) point at peer ${peer}.${ibText} Check that node's processes, its HCA port (ringwatch_infiniband_*) and the link between.`,
      ranks: ranksOf(state, procsOf(list)),
      processes: procsOf(list).map((p) => p.key),
      comm_id: null,
      evidence: list.map((x) => x.w.where).slice(0, 5),
      ...(peer !== "unknown peer" ? { peer } : {}),
      count: list.length,
    });
  }
  // One finding per process and message: a failure NCCL repeats on every call is one failure.
  const errors = new Map<string, { w: WarningRecord; p?: ProcessState; wheres: string[] }>();
  for (const x of all) {
    if (!ERROR_KINDS.has(x.w.kind) && x.w.kind !== "collective_mismatch") continue;
    const key = `${x.p?.key ?? ""}|${x.w.kind}|${x.w.message}`;
    const e = errors.get(key);
    if (e) e.wheres.push(x.w.where);
    else if (errors.size < 10) errors.set(key, { ...x, wheres: [x.w.where] });
  }
  for (const { w, p, wheres } of errors.values()) {
    const mismatch = w.kind === "collective_mismatch";
    out.push({
      kind: mismatch ? "collective_mismatch" : "nccl_error",
      severity: "critical",
      summary: mismatch
        ? `NCCL detected mismatched collectives${w.mismatchRank !== undefined ? ` at and around rank ${w.mismatchRank}` : ""}: "${w.message}". The ranks' code issued different collectives (or sizes); look at the collective calls of rank ${w.mismatchRank ?? "?"} and its neighbours.`
        : w.kind === "cuda_error"
          ? `A CUDA call inside NCCL failed${p ? ` in ${p.key}` : ""}: "${w.message}". This process's GPU is the root cause (${/memory/i.test(w.message) ? "memory exhausted: another process on the GPU, or the job's own allocations" : "a fault or a wrong build"}); network errors of its peers follow from it.`
          : `NCCL ${w.kind.replace("_", " ")}${p ? ` in ${p.key}` : ""}: "${w.message}"`,
      ranks: w.mismatchRank !== undefined ? [w.mismatchRank] : p ? ranksOf(state, [p]) : [],
      processes: p ? [p.key] : [],
      comm_id: null,
      evidence: wheres.slice(0, 5),
      ...(wheres.length > 1 ? { count: wheres.length } : {}),
    });
  }
  return out;
}
