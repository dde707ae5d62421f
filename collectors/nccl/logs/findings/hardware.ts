/**
 * Offline findings from kernel log lines pasted beside the NCCL logs: an Xid on a GPU, an SXid on
 * an NVSwitch, an HCA driver event, a PCIe error on a GPU. What each event means comes in from the
 * reader of kernel lines (agent/analyze-kernel.ts, over collectors/kmsg), as HardwareEvent; here
 * the events are grouped and tied to the ranks of these logs: by the pid the driver named, by the
 * GPU's PCI address (NCCL's busId), by the HCA name (NET/IB's `Using` list), on the host the
 * line's prefix named. Also the HCA events NCCL itself logs (its IB async event WARNs), tied to the
 * processes that logged them (ncclAsyncEventFindings, called from errors.ts).
 */
import { pciSlotKey } from "../../../pci.js";
import type { TrackedState } from "../detect/verdict.js";
import { ncclBusIdToPci } from "../parse/bus-id.js";
import type { ProcessState, WarningRecord } from "../state/model.js";
import { ibAsyncFacts } from "../parse/warn.js";
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
  /** The HCA's port, when the event is a port's: only the ranks whose NET/IB uses that port. */
  hcaPort?: number;
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

/** A GPU's host and slot in one form (the kernel's `0000:1c:00`, lspci's `0000:1c:00.0`). */
function gpuSlot(e: HardwareEvent): string | undefined {
  return e.gpuPci === undefined ? undefined : `${(e.host ?? "").toLowerCase()}|${pciSlotKey(e.gpuPci)}`;
}

/**
 * A GPU's fall off the bus told as a PCIe error (Xid 79's, lspci's revision ff) where an earlier
 * group, or the GPU's own AER errors, already gives that GPU a PCIe finding: one PCIe finding per GPU.
 */
function retold(g: HardwareGroup, i: number, all: readonly HardwareGroup[]): boolean {
  if (g.first.kind !== "gpu_pcie_error" || g.first.event !== "off_bus") return false;
  const slot = gpuSlot(g.first);
  return all.some((o, j) => j !== i && o.first.kind === "gpu_pcie_error" && (o.first.event !== "off_bus" || j < i) && gpuSlot(o.first) === slot);
}

/** One finding per group, in the order first seen; and one that says how many events were not kept, if any. */
export function hardwareFindings(state: TrackedState, tally: HardwareTally): Finding[] {
  const ctx = context(state);
  const groups = [...tally.groups.values()];
  const out = groups.filter((g, i) => !retold(g, i, groups)).map((g) => finding(state, ctx, g));
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
  if (e.hca !== undefined) return procs.filter((p) => p.ibDevices.some((d) => d.device === e.hca && (e.hcaPort === undefined || d.port === e.hcaPort)));
  // An NVSwitch joins every GPU of its node (its tray, on NVL72 racks).
  if (e.kind === "nvswitch_sxid") return [...procs];
  return [];
}

// ---------------------------------------------------------------------------------------------
// The HCA's own word, through NCCL: the async events NCCL's IB thread logs (`NET/IB : mlx5_0:1 Got
// async event : port error`, `... async fatal event on QP (0x..): local access violation work queue
// error`, WARN kind ib_async_event). The process that logged one has the HCA open for NET/IB, so
// the finding names its ranks outright.

/** What an event in libibverbs' words (ibv_event_type_str, rdma-core) means for NCCL's traffic. */
interface AsyncMeaning {
  /** The finding's `event`. */
  event: string;
  severity: Severity;
  advice: string;
}

const QP_ADVICE =
  "A queue pair of NCCL's on this port went to the error state: its connection is lost (the peer sees completion errors, status 5 'flushed' or 12 'retry exceeded') and NCCL fails the communicator. " +
  "An invalid request or an access violation usually comes from software, not the link: memory registration (GPUDirect RDMA, DMA-BUF, nvidia_peermem), mismatched NCCL or net plugin versions, NCCL_IB_* settings; compare with a run of the previous NCCL version.";
const FABRIC_NEWS =
  "News from the fabric (the port came back, the subnet manager reconfigured it): harmless alone, a flapping port when port errors come with it.";

const GID_CHANGE: AsyncMeaning = {
  event: "gid_change",
  severity: "warning",
  advice:
    "The port's GID table changed (RoCE: an IP address of the interface was added, removed or moved): connections set up with the old GID break. Keep the addresses of RDMA interfaces stable while jobs run.",
};

const ASYNC: Readonly<Record<string, AsyncMeaning>> = {
  "local catastrophic error": {
    event: "device_fatal",
    severity: "critical",
    advice:
      "The HCA itself failed (IBV_EVENT_DEVICE_FATAL): every connection through it is gone until the device is reset (driver reload or reboot). Look for mlx5_core health or firmware errors in the kernel log; drain the node if it repeats.",
  },
  "port error": {
    event: "port_error",
    severity: "critical",
    advice:
      "The port left the active state (IBV_EVENT_PORT_ERR): NCCL connections over it break (peers see completion error 12) or stall. Check the cable, the transceiver and the switch port (ibstat, the port's error counters, ringwatch_infiniband_*); events on many ports of many nodes at once point at a switch or the subnet manager.",
  },
  "local work queue catastrophic error": { event: "qp_fatal", severity: "critical", advice: QP_ADVICE },
  "invalid request local work queue error": { event: "qp_request_error", severity: "critical", advice: QP_ADVICE },
  "local access violation work queue error": { event: "qp_access_error", severity: "critical", advice: QP_ADVICE },
  "CQ error": {
    event: "cq_error",
    severity: "critical",
    advice: "A completion queue of NCCL's overran or failed (IBV_EVENT_CQ_ERR): the connections on it stop and NCCL fails the communicator.",
  },
  "SRQ catastrophic error": {
    event: "srq_error",
    severity: "warning",
    advice: "A shared receive queue failed; NCCL uses none, so another user of the HCA in this process is concerned.",
  },
  "path migration request error": {
    event: "path_migration_error",
    severity: "warning",
    advice: "A connection could not move to its alternate path (automatic path migration): the fabric lost a path.",
  },
  "GID table change": GID_CHANGE,
  // NCCL 2.23+'s own words for IBV_EVENT_GID_CHANGE (libibverbs: `GID table change`).
  "GID table changed": GID_CHANGE,
  "port active": { event: "port_active", severity: "info", advice: FABRIC_NEWS },
  "LID change": { event: "lid_change", severity: "info", advice: FABRIC_NEWS },
  "P_Key change": { event: "pkey_change", severity: "info", advice: FABRIC_NEWS },
  "SM change": { event: "sm_change", severity: "info", advice: FABRIC_NEWS },
  "client reregistration": { event: "client_reregister", severity: "info", advice: FABRIC_NEWS },
  "path migrated": { event: "path_migrated", severity: "info", advice: FABRIC_NEWS },
  "send queue drained": { event: "sq_drained", severity: "info", advice: "A send queue drained: part of a connection's normal teardown." },
  "last WQE reached": {
    event: "last_wqe_reached",
    severity: "info",
    advice: "A queue pair's last work request completed: part of a connection's normal teardown.",
  },
  "SRQ limit reached": { event: "srq_limit", severity: "info", advice: "A shared receive queue ran low; NCCL uses none." },
};

/** Shortest start of an event's name that names it in a line cut short (an excerpt's last line). */
const MIN_CUT_EVENT = 6;

/**
 * The event's name as NCCL prints it: the words, or the one known event they are the start of
 * (`client reregistr`, the last line of a paste cut mid-word: nccl-pasted 254).
 */
function knownEvent(words: string | undefined): string | undefined {
  if (words === undefined || Object.hasOwn(ASYNC, words) || words.length < MIN_CUT_EVENT) return words;
  const starts = Object.keys(ASYNC).filter((k) => k.startsWith(words));
  return starts.length === 1 ? starts[0] : words;
}

const UNKNOWN_EVENT: AsyncMeaning = {
  event: "unknown",
  severity: "warning",
  advice: "An async event NCCL does not know: look at the HCA's state (ibstat) and the kernel log around that time.",
};
const READER_FAILED: AsyncMeaning = {
  event: "reader_failed",
  severity: "warning",
  advice: "NCCL's thread that reads the HCA's async events stopped: later events of this HCA go unreported. It follows a fatal event of the device.",
};

/** One ib_async_event WARN, with the process that logged it (none for a line of no known process). */
export interface NcclAsyncWarn {
  w: WarningRecord;
  p?: ProcessState;
}

interface AsyncGroup {
  meaning: AsyncMeaning;
  words: string;
  code?: number;
  host?: string;
  hca?: string;
  port?: number;
  procs: ProcessState[];
  launcherRanks: number[];
  where: string[];
  count: number;
}

/** At most this many HCA groups from NCCL's async events. */
const MAX_ASYNC_GROUPS = 32;

/**
 * One hca_error per host, HCA port and event of NCCL's async event WARNs, naming the device and
 * port where NCCL printed them (2.20+), the processes that logged it and their ranks. 2.4's
 * `Call to ibv_get_async_event failed` joins the process's event; alone, it is a finding of its own.
 */
export function ncclAsyncEventFindings(state: TrackedState, warns: readonly NcclAsyncWarn[]): Finding[] {
  const groups = new Map<string, AsyncGroup>();
  const byProc = new Map<string, AsyncGroup>();
  const readerFailures: NcclAsyncWarn[] = [];
  for (const x of warns) {
    const f = ibAsyncFacts(x.w.message);
    if (f.call === "ibv_get_async_event") {
      readerFailures.push(x);
      continue;
    }
    const words = knownEvent(f.ibEvent) ?? f.ibEvent ?? "an unnamed event";
    // Own keys only: a line's words are the job's (`toString` names no event).
    const meaning = (Object.hasOwn(ASYNC, words) ? ASYNC[words] : undefined) ?? UNKNOWN_EVENT;
    const g = group(groups, `${x.p?.host ?? ""}|${f.hca ?? ""}|${f.hcaPort ?? ""}|${meaning.event}|${meaning === UNKNOWN_EVENT ? words : ""}`, () => ({
      meaning,
      words,
      ...(f.ibEventCode !== undefined ? { code: f.ibEventCode } : {}),
      ...(x.p !== undefined ? { host: x.p.host } : {}),
      ...(f.hca !== undefined ? { hca: f.hca } : {}),
      ...(f.hcaPort !== undefined ? { port: f.hcaPort } : {}),
    }));
    if (g === undefined) continue;
    add(g, x);
    if (x.p !== undefined && !byProc.has(x.p.key)) byProc.set(x.p.key, g);
  }
  for (const x of readerFailures) {
    const g =
      (x.p !== undefined ? byProc.get(x.p.key) : undefined) ??
      group(groups, `${x.p?.key ?? x.w.where}|reader`, () => ({
        meaning: READER_FAILED,
        words: "a failed read of its async events (ibv_get_async_event)",
        ...(x.p !== undefined ? { host: x.p.host } : {}),
      }));
    if (g !== undefined) add(g, x, g.meaning === READER_FAILED);
  }
  return [...groups.values()].map((g) => asyncFinding(state, g));
}

function group(
  groups: Map<string, AsyncGroup>,
  key: string,
  make: () => Omit<AsyncGroup, "procs" | "launcherRanks" | "where" | "count">,
): AsyncGroup | undefined {
  let g = groups.get(key);
  if (g === undefined) {
    if (groups.size >= MAX_ASYNC_GROUPS) return undefined;
    g = { ...make(), procs: [], launcherRanks: [], where: [], count: 0 };
    groups.set(key, g);
  }
  return g;
}

/** Adds a WARN to its group: an event counts, a failed read after it (`counted` false) is evidence only. */
function add(g: AsyncGroup, x: NcclAsyncWarn, counted = true): void {
  if (counted) g.count++;
  if (g.where.length < MAX_EVIDENCE) g.where.push(x.w.where);
  if (x.p !== undefined) {
    if (!g.procs.includes(x.p)) g.procs.push(x.p);
  } else if (x.w.rank !== undefined && !g.launcherRanks.includes(x.w.rank)) g.launcherRanks.push(x.w.rank);
}

function asyncFinding(state: TrackedState, g: AsyncGroup): Finding {
  const ranks = uniq([...ranksOf(state, g.procs), ...g.launcherRanks]).sort((a, b) => a - b);
  const processes = g.procs.map((p) => p.key);
  const severity = g.meaning.severity;
  const subject = g.hca !== undefined ? `HCA ${g.hca}${g.port !== undefined ? ` port ${g.port}` : ""}` : "An HCA (NCCL before 2.20 does not say which)";
  const summary = hardwareWords.event({
    kind: "hca_error",
    subject,
    ...(g.host !== undefined ? { host: g.host } : {}),
    title: `"${g.words}"${g.code !== undefined ? ` (event ${g.code})` : ""}, an IB async event that NCCL logged`,
    count: g.count,
    firstAt: g.where[0] ?? "",
    advice: g.meaning.advice,
    pids: [],
    names: [],
    on: processes.length > 0 || ranks.length > 0 ? { ranks, processes, byPid: false, assumed: false, cause: severity !== "info" } : undefined,
  });
  return hardwareEvent("hca_error", {
    severity,
    summary,
    ranks,
    processes,
    comm_id: null,
    evidence: g.where,
    count: g.count,
    // The HCA as sysfs and ringwatch_infiniband_* name it; the port is in the summary.
    ...(g.hca !== undefined ? { device: g.hca } : {}),
    ...(g.host !== undefined ? { host: g.host } : {}),
    event: g.meaning.event,
    ...(g.code !== undefined ? { code: g.code } : {}),
  });
}
