/**
 * Offline findings from kernel log lines pasted beside the NCCL logs: an Xid on a GPU, an SXid on
 * an NVSwitch, an HCA driver event, a PCIe error on a GPU. What each event means comes in from the
 * reader of kernel lines (agent/analyze-kernel.ts, over collectors/kmsg), as HardwareEvent; here
 * the events are grouped and tied to the ranks of these logs: by the pid the driver named, by the
 * GPU's PCI address (NCCL's busId), by the HCA name (NET/IB's `Using` list), on the host the
 * line's prefix named.
 */
import { pciSlotKey } from "../../../pci.js";
import type { TrackedState } from "../detect/verdict.js";
import { ncclBusIdToPci } from "../parse/bus-id.js";
import type { ProcessState } from "../state/model.js";
import { ranksOf } from "./procs.js";
import { rankList, uniq, type Finding, type Severity } from "../../verdict/report.js";

export type HardwareKind = "gpu_xid" | "nvswitch_sxid" | "hca_error" | "gpu_pcie_error";

export interface HardwareEvent {
  kind: HardwareKind;
  severity: Severity;
  /** Severity when the event is on the GPU or process of a rank of these logs (it broke that rank). */
  severityOnRank?: Severity;
  /** The host the kernel line's prefix named. */
  host?: string;
  /** What the kernel printed to name the device: a PCI address, an HCA name. */
  device: string;
  /** `the GPU at PCI 0000:3b:00`, `HCA mlx5_5 (PCI 0000:ab:00.0) port 1`: the subject of the summary. */
  subject: string;
  /** A GPU's PCI address, to find the ranks on it (NCCL's busId). */
  gpuPci?: string;
  /** An RDMA device name, to find the ranks whose NET/IB uses it. */
  hca?: string;
  /** The process the driver named (Xid `pid=`, `name=`). */
  pid?: number;
  processName?: string;
  /** Xid or SXid number. */
  code?: number;
  /** An HCA event's kind (`link_down`, `firmware_error`, ...). */
  event?: string;
  /** The usual action (Xid catalogue: none, restart_job, reset_gpu, reboot_node, drain_node). */
  action?: string;
  /** `Xid 79 (GPU has fallen off the bus; cause: hardware)`. */
  title: string;
  /** What to do, a sentence. */
  advice: string;
  /** `file:line`. */
  where: string;
}

/** Up to this many lines are cited per finding. */
const MAX_EVIDENCE = 5;
/** Findings kept at most (a kernel log of a whole fleet): beyond, a new group takes the place of a less severe one. */
const MAX_GROUPS = 1_000;

const RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

interface HardwareGroup {
  first: HardwareEvent;
  count: number;
  where: string[];
  pids: Set<number>;
  names: Set<string>;
}

/** The events of the kernel lines read so far, one group per kind, host, device, code and HCA event: bounded. */
export class HardwareTally {
  readonly groups = new Map<string, HardwareGroup>();
  /** Events not kept: their group did not fit among MAX_GROUPS more severe ones, or was given up for one. */
  dropped = 0;

  add(e: HardwareEvent): void {
    const key = `${e.kind}|${(e.host ?? "").toLowerCase()}|${e.device}|${e.code ?? ""}|${e.event ?? ""}`;
    let g = this.groups.get(key);
    if (g === undefined) {
      if (this.groups.size >= MAX_GROUPS && !this.makeRoom(e.severity)) {
        this.dropped++;
        return;
      }
      g = { first: e, count: 0, where: [], pids: new Set(), names: new Set() };
      this.groups.set(key, g);
    }
    g.count++;
    if (g.where.length < MAX_EVIDENCE) g.where.push(e.where);
    if (e.pid !== undefined && g.pids.size < 16) g.pids.add(e.pid);
    if (e.processName !== undefined && g.names.size < 16) g.names.add(e.processName);
  }

  /** Gives up the newest group less severe than `severity` (its events count as dropped); false when none is. */
  private makeRoom(severity: Severity): boolean {
    let victim: string | undefined;
    let worst = RANK[severity];
    for (const [k, g] of this.groups) {
      if (RANK[g.first.severity] >= worst && RANK[g.first.severity] > RANK[severity]) {
        victim = k;
        worst = RANK[g.first.severity];
      }
    }
    if (victim === undefined) return false;
    this.dropped += this.groups.get(victim)?.count ?? 0;
    this.groups.delete(victim);
    return true;
  }
}

/** One finding per group, in the order first seen; and one that says how many events were not kept, if any. */
export function hardwareFindings(state: TrackedState, tally: HardwareTally): Finding[] {
  const ctx = context(state);
  const out = [...tally.groups.values()].map((g) => finding(state, ctx, g));
  if (tally.dropped > 0) {
    out.push({
      kind: "kernel_log_truncated",
      severity: "info",
      summary: `${tally.dropped} more kernel events are not shown: the report keeps ${MAX_GROUPS} devices and codes, the most severe first. Give analyze fewer nodes' kernel logs at a time to see them.`,
      ranks: [],
      processes: [],
      comm_id: null,
      evidence: [],
      count: tally.dropped,
    });
  }
  return out;
}

/** What every finding asks of the logs, worked out once per report. */
interface Context {
  procs: readonly ProcessState[];
  /** Distinct hosts of the logs (as NCCL prints them). */
  hosts: number;
  /** PCI slot (pciSlotKey) of each rank's GPU (NCCL's busId) → the processes with a rank there. */
  slotUsers: Map<string, Set<string>>;
}

function context(state: TrackedState): Context {
  const slotUsers = new Map<string, Set<string>>();
  for (const c of state.comms.values()) {
    for (const r of c.ranks.values()) {
      const pci = r.busId !== undefined ? ncclBusIdToPci(r.busId) : undefined;
      if (pci === undefined) continue;
      const slot = pciSlotKey(pci);
      const users = slotUsers.get(slot);
      if (users === undefined) slotUsers.set(slot, new Set([r.processKey]));
      else users.add(r.processKey);
    }
  }
  const procs = [...state.processes.values()];
  return { procs, hosts: uniq(procs.map((p) => short(p.host))).length, slotUsers };
}

function finding(state: TrackedState, ctx: Context, g: HardwareGroup): Finding {
  const e = g.first;
  const on = onHost(ctx.procs, e.host);
  const pids = [...g.pids];
  const names = [...g.names];
  const byPid = on.procs.filter((p) => g.pids.has(p.pid));
  const byDevice = deviceUsers(ctx, on.procs, e);
  const matched = uniq([...byPid, ...byDevice]);
  const oneHost = !on.known && ctx.hosts === 1;
  const mine = (on.known || oneHost ? matched : []).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const ranks = ranksOf(state, mine);
  const severity = mine.length > 0 && e.severityOnRank !== undefined ? e.severityOnRank : e.severity;
  const where = e.host !== undefined ? ` on ${e.host}` : "";
  const times = g.count === 1 ? "" : `, ${g.count} times`;
  let text = `${e.subject}${where} reported ${e.title}${times} (first at ${e.where}). ${e.advice}`;
  if (pids.length > 0) text += ` The driver named pid ${pids.slice(0, 4).join(", ")}${names.length > 0 ? ` (${names.slice(0, 3).join(", ")})` : ""}.`;
  if (mine.length > 0) {
    const who = mine.slice(0, 4).map((p) => p.key).join(", ") + (mine.length > 4 ? ` and ${mine.length - 4} more` : "");
    const one = ranks.length === 1 || (ranks.length === 0 && mine.length === 1);
    const how = byPid.some((p) => mine.includes(p)) && byDevice.length === 0 ? `${one ? "is" : "are"} the process the driver named` : use(e.kind, one, true);
    const hedge = oneHost ? ` (if the kernel lines are from ${mine[0]?.host ?? "that host"}: they name no host)` : "";
    const cause = severity === "info" ? "" : ": a hang or a rank behind in these logs may start here";
    text += ranks.length > 0 ? ` Rank${one ? "" : "s"} ${rankList(ranks)} (${who}) ${how}${hedge}${cause}.` : ` ${who} ${how}${hedge}.`;
  } else if (matched.length > 0) {
    const theirs = ranksOf(state, matched);
    const one = theirs.length === 1;
    text += ` The kernel lines name no host, and the logs have ${ctx.hosts}: rank${one ? "" : "s"} ${rankList(theirs)} on ${uniq(matched.map((p) => p.host)).slice(0, 4).join(", ")} ${use(e.kind, one, false)} or ${one ? "has" : "have"} the pid the driver named. Give the kernel log with its host (journalctl -k, or a pdsh prefix) to tell which.`;
  }
  const f: Finding = {
    kind: e.kind,
    severity,
    summary: text,
    ranks,
    processes: mine.map((p) => p.key),
    comm_id: null,
    evidence: g.where,
    count: g.count,
    device: e.device,
  };
  if (e.host !== undefined) f.host = e.host;
  if (e.code !== undefined) f.code = e.code;
  if (e.event !== undefined) f.event = e.event;
  if (e.action !== undefined) f.action = e.action;
  return f;
}

/** How the processes found by device relate to it: on its host (`sure`), or on some host with a device at that address. */
function use(kind: HardwareKind, one: boolean, sure: boolean): string {
  if (kind === "hca_error") return `${one ? "uses" : "use"} ${sure ? "this HCA" : "an HCA of this name"} for NCCL's network`;
  if (kind === "nvswitch_sxid") return `${one ? "runs" : "run"} on ${sure ? "this NVSwitch's node" : "a node with NVSwitches"}`;
  return `${one ? "runs" : "run"} on ${sure ? "this GPU" : "a GPU at this address"}`;
}

/** NCCL prints the host name up to its first dot; syslog may print it whole. An IPv4 address stays whole. */
function short(host: string): string {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return host;
  const dot = host.indexOf(".");
  return (dot < 0 ? host : host.slice(0, dot)).toLowerCase();
}

/** The processes of the event's host; all of them when the line named none. */
function onHost(procs: readonly ProcessState[], host: string | undefined): { procs: ProcessState[]; known: boolean } {
  if (host === undefined) return { procs: [...procs], known: false };
  const h = short(host);
  return { procs: procs.filter((p) => short(p.host) === h), known: true };
}

/** Processes with a rank on the event's GPU, or whose NET/IB uses the event's HCA. */
function deviceUsers(ctx: Context, procs: readonly ProcessState[], e: HardwareEvent): ProcessState[] {
  if (e.gpuPci !== undefined) {
    const users = ctx.slotUsers.get(pciSlotKey(e.gpuPci));
    return users === undefined ? [] : procs.filter((p) => users.has(p.key));
  }
  if (e.hca !== undefined) return procs.filter((p) => p.ibDevices.some((d) => d.device === e.hca));
  // An NVSwitch joins every GPU of its node (its tray, on NVL72 racks).
  if (e.kind === "nvswitch_sxid") return [...procs];
  return [];
}
