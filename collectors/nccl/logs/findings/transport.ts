/**
 * Offline findings about the fabric: sockets instead of IB, GPUDirect RDMA off; and (errors.ts)
 * network errors and NCCL errors, which analyze asks for through transportFindings.
 */
import type { ProcessState, WarningRecord } from "../state/model.js";
import { transportOf } from "../state/transport.js";
import type { TrackedState } from "../detect/verdict.js";
import { errorFindings } from "./errors.js";
import { ranksOf } from "./procs.js";
import { type Finding, uniq } from "../../verdict/report.js";

/** Lines that name no process (quoted alone, or behind a prefix NCCL did not write): they still count, with no host:pid. */
export interface OrphanLines {
  warnings: readonly WarningRecord[];
  /** Where each `GPU Direct RDMA Disabled for GPU ...` line was. */
  gdrDisabled: readonly string[];
}

/** The tracker, as transportFindings reads it: what each orphan GDR line said, when it kept that. */
export type FabricState = TrackedState & { readonly orphanGdrWhy?: ReadonlyMap<string, string> };

export function transportFindings(state: FabricState, orphans: OrphanLines = { warnings: [], gdrDisabled: [] }): Finding[] {
  const procs = [...state.processes.values()];
  return [...socketFindings(state, procs, orphans), ...gdrFindings(state, procs, orphans), ...errorFindings(state, orphans.warnings)];
}

function names(procs: readonly ProcessState[]): string {
  return procs.length > 4 ? `${procs.slice(0, 4).map((p) => p.key).join(", ")} and ${procs.length - 4} more` : procs.map((p) => p.key).join(", ");
}

function socketFindings(state: TrackedState, procs: readonly ProcessState[], orphans: OrphanLines): Finding[] {
  const socket = procs.filter((p) => transportOf(p).net === "Socket");
  // A WARN of the NET/Socket plugin that names no process: the process that logged it used sockets.
  const orphan = orphans.warnings.filter((w) => w.message.startsWith("NET/Socket"));
  if (socket.length === 0 && orphan.length === 0) return [];
  const why = socket.some((p) => p.evidence.has("no_ib")) ? " (NET/IB : No device found, NCCL_IB_DISABLE set, or libibverbs missing)" : "";
  const ifs = uniq(socket.map((p) => p.socketIfs).filter((x): x is string => x !== undefined));
  const loopback = ifs.some((x) => x.startsWith("lo:") || x.includes(" lo:"));
  const on = socket.length > 0 ? names(socket) : "the process that logged the NET/Socket warning";
  // Every process of the logs on one host: the sockets join ranks of that host (a test rig, or P2P/SHM turned off).
  const hosts = uniq(procs.map((p) => p.host));
  const oneHost = socket.length > 0 && procs.length > 1 && hosts.length === 1 ? hosts[0] : undefined;
  const via = `${why}${ifs.length > 0 ? `, NET/Socket on ${ifs.slice(0, 3).join(", ")}` : ""}`;
  const summary =
    oneHost !== undefined
      ? `NCCL moves data between the ranks of ${oneHost} over TCP sockets on ${on}${via}, not over NVLink/PCIe (P2P) or shared memory: P2P and SHM are off (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE) or the ranks share a GPU. ` +
        "Fine for a test; a real job loses most of its bandwidth this way."
      : `NCCL moves data between nodes over TCP sockets, not InfiniBand/RoCE, on ${on}${via}. ` +
        (loopback ? "lo is the loopback interface: other nodes cannot reach it; set NCCL_SOCKET_IFNAME to the interface that joins the nodes. " : "") +
        `Sockets reach a small fraction of IB bandwidth and load the CPUs. Check that the IB devices and libibverbs are visible to the job (NCCL_IB_HCA, container device mounts).`;
  return [{
    kind: "socket_transport",
    severity: "warning",
    summary,
    ranks: ranksOf(state, socket),
    processes: socket.map((p) => p.key),
    comm_id: null,
    evidence: [...socket.flatMap((p) => [p.evidence.get("no_ib"), p.evidence.get("socket_link") ?? p.evidence.get("socket_warn")]), ...orphan.map((w) => w.where)].filter((w): w is string => w !== undefined).slice(0, 5),
  }];
}

function gdrFindings(state: FabricState, procs: readonly ProcessState[], orphans: OrphanLines): Finding[] {
  // Off on an IB/RoCE path; or said outright (`GPU Direct RDMA Disabled for ...`, a plugin disabling
  // GDR) by a process none of whose links uses GDRDMA, whatever network the excerpt shows.
  const noGdr = procs.filter((p) => {
    const t = transportOf(p);
    if (t.gdr === "disabled" && (t.net === "IB" || t.net === "RoCE")) return true;
    return p.gdrOff !== undefined && p.gdrLinks === 0 && p.gdrEnabled === 0;
  });
  if (noGdr.length === 0 && orphans.gdrDisabled.length === 0) return [];
  const said = uniq([...noGdr.map((p) => p.gdrOff && (noGdr.length > 1 ? `${p.key}: ${p.gdrOff}` : p.gdrOff)), ...orphans.gdrDisabled.map((w) => state.orphanGdrWhy?.get(w))].filter((x): x is string => x !== undefined && x !== ""));
  const on = noGdr.length > 0 ? names(noGdr) : "the process that logged it";
  const far = said.some((x) => x.includes("(distance "));
  const sockets = noGdr.some((p) => transportOf(p).net === "Socket");
  return [{
    kind: "gdr_disabled",
    severity: "warning",
    summary:
      `GPUDirect RDMA is off on ${on}${said.length > 0 ? `: ${said.slice(0, 3).join("; ")}` : ""}${noGdr.length === 0 ? " (no host:pid in the line)" : ""}. Inter-node traffic is staged through host memory (roughly 10-50 % slower on large messages). ` +
      (sockets ? "On the NET/Socket transport GDR cannot work at all: fix the socket transport first. " : "") +
      (far ? "The GPU and the NIC are further apart in PCIe than NCCL_NET_GDR_LEVEL allows (not under one PCIe switch): place them closer or raise NCCL_NET_GDR_LEVEL if the platform's peer-to-peer path is fast. " : "") +
      `Check that nvidia_peermem is loaded (ringwatch_gdr_peermem_loaded) and the GPU-NIC distance (NCCL_NET_GDR_LEVEL).`,
    ranks: ranksOf(state, noGdr),
    processes: noGdr.map((p) => p.key),
    comm_id: null,
    evidence: [...noGdr.map((p) => p.evidence.get("gdr_disabled") ?? p.evidence.get("net_link")), ...orphans.gdrDisabled].filter((w): w is string => w !== undefined).slice(0, 5),
  }];
}
