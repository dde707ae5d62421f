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
import { uniq, type Finding, type Severity } from "../../verdict/report.js";
import { hardwareEvent, kernelLogTruncated } from "../../verdict/finding.js";
import { hardwareWords, kernelLogTruncatedWords } from "../../verdict/words.js";

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
    out.push(
      kernelLogTruncated({
        summary: kernelLogTruncatedWords.dropped({ dropped: tally.dropped, kept: MAX_GROUPS }),
        ranks: [],
        processes: [],
        comm_id: null,
        evidence: [],
        count: tally.dropped,
      }),
    );
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
  const byPid = on.procs.filter((p) => g.pids.has(p.pid));
  const byDevice = deviceUsers(ctx, on.procs, e);
  const matched = uniq([...byPid, ...byDevice]);
  const oneHost = !on.known && ctx.hosts === 1;
  const mine = (on.known || oneHost ? matched : []).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const ranks = ranksOf(state, mine);
  const severity = mine.length > 0 && e.severityOnRank !== undefined ? e.severityOnRank : e.severity;
  const summary = hardwareWords.event({
    kind: e.kind,
    subject: e.subject,
    host: e.host,
    title: e.title,
    count: g.count,
    firstAt: e.where,
    advice: e.advice,
    pids: [...g.pids],
    names: [...g.names],
    on:
      mine.length > 0
        ? {
            ranks,
            processes: mine.map((p) => p.key),
            byPid: byPid.some((p) => mine.includes(p)) && byDevice.length === 0,
            assumed: oneHost,
            assumedHost: mine[0]?.host,
            cause: severity !== "info",
          }
        : undefined,
    maybe:
      mine.length === 0 && matched.length > 0 ? { ranks: ranksOf(state, matched), hosts: uniq(matched.map((p) => p.host)), logHosts: ctx.hosts } : undefined,
  });
  return hardwareEvent(e.kind, {
    severity,
    summary,
    ranks,
    processes: mine.map((p) => p.key),
    comm_id: null,
    evidence: g.where,
    count: g.count,
    device: e.device,
    ...(e.host !== undefined ? { host: e.host } : {}),
    ...(e.code !== undefined ? { code: e.code } : {}),
    ...(e.event !== undefined ? { event: e.event } : {}),
    ...(e.action !== undefined ? { action: e.action } : {}),
  });
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
