/**
 * Kernel log lines among the logs given to `ringwatch analyze` (dmesg, syslog, journalctl, pasted
 * beside the NCCL logs or in files of their own): each event the kmsg collector's parsers find,
 * with what the Xid catalogue says of it, handed to the analysis as a HardwareEvent
 * (collectors/nccl/logs/findings/hardware.ts ties it to the ranks of the logs).
 */
import type { HardwareLog } from "../collectors/nccl/analyze/analyze.js";
import type { HardwareEvent } from "../collectors/nccl/logs/findings/hardware.js";
import type { Severity } from "../collectors/nccl/verdict/report.js";
import type { KernelEvent } from "../collectors/kmsg/parse/events.js";
import type { NicEventKind } from "../collectors/kmsg/parse/nic.js";
import { recoveryActionOf } from "../collectors/kmsg/parse/xid.js";
import { PastedKernelLog } from "../collectors/kmsg/pasted.js";
import { PastedPortStates, type PortReading, type PortTrouble } from "../collectors/infiniband/pasted-port-state.js";
import { PastedPortErrors, type PortErrorsReading } from "../collectors/infiniband/pasted-port-errors.js";
import { goneGpu, type GoneGpu } from "../collectors/gpu/pasted-lspci.js";
import { XID_CATALOGUE, type XidAction } from "../collectors/kmsg/xid-catalogue.js";

/** The driver's words quoted in a summary, at most this long. */
const MAX_QUOTE = 120;

const XID_ADVICE: Record<XidAction, string> = {
  none: "No action on the GPU by itself: it is informational or follows another error.",
  restart_job: "The job that hit it failed or must restart; the GPU itself is fine unless it repeats.",
  reset_gpu: "Reset the GPU (nvidia-smi -r, or reboot the node) before it runs a job again.",
  reboot_node: "Reboot the node: the GPU is gone until then.",
  drain_node: "Drain the node: the GPU needs hardware or firmware service (run NVIDIA's field diagnostics).",
};

const XID_SEVERITY: Record<XidAction, Severity> = {
  none: "info",
  restart_job: "warning",
  reset_gpu: "critical",
  reboot_node: "critical",
  drain_node: "critical",
};

const NIC: Record<Exclude<NicEventKind, "link_up">, { severity: Severity; what: string; advice: string }> = {
  link_down: {
    severity: "warning",
    what: "link down",
    advice: "The port lost its link: NCCL connections over it fail or stall. Check the cable, the transceiver and the switch port.",
  },
  firmware_error: {
    severity: "critical",
    what: "a firmware fault",
    advice: "The HCA's firmware reported a fault: traffic through it stops until the device is reset (a reboot, or mlxfwreset); drain the node if it repeats.",
  },
  command_error: {
    severity: "warning",
    what: "a failed firmware command",
    advice: "A driver command to the firmware failed: harmless alone (an unsupported register), a sign of a sick device when many follow.",
  },
  pcie_error_corrected: { severity: "info", what: "corrected PCIe errors", advice: "Harmless one by one; a flood points at a failing link, riser or slot." },
  pcie_error_uncorrected: {
    severity: "critical",
    what: "uncorrected PCIe errors",
    advice: "Traffic through this HCA is unreliable: reseat or replace it, and check the slot.",
  },
  tx_timeout: {
    severity: "warning",
    what: "a transmit timeout",
    advice: "The Ethernet side of the HCA stopped sending: RoCE traffic stalls until the driver recovers the queue.",
  },
  module_event: { severity: "info", what: "a cable or module event", advice: "The cable or transceiver changed state (unplugged, or a module error)." },
  insufficient_power: {
    severity: "warning",
    what: "insufficient slot power",
    advice: "The PCIe slot gives the HCA less power than it needs: it may throttle or fail.",
  },
  probe_failed: {
    severity: "critical",
    what: "a failed probe",
    advice: "The driver could not bring the HCA up: NCCL cannot use it (it falls back to another HCA, or to sockets).",
  },
  completion_error: {
    severity: "warning",
    what: "work completions in error",
    advice:
      "Requests of a kernel consumer of this device (storage over RDMA: NVMe-oF, NFS, Lustre, GPFS; IPoIB; the Ethernet driver's queues) failed; NCCL's own completions are user space's and show in its WARN lines, not here. Protection, length and access errors are a consumer's bad memory registration (a driver bug, an IOMMU fault: look for IO_PAGE_FAULT or DMAR lines beside them), not the link; a remote or transport error points at the peer or the path: check the link, the switch port and the peer.",
  },
  completion_flushed: {
    severity: "info",
    what: "flushed work requests",
    advice:
      "Requests a queue pair still held when it went into error or was torn down (syndrome 0x5): a consumer's disconnect flushes them too, so alone they tell no fault; the first error before them, where the log has one, is the cause. NCCL's own completions are user space's and show in its WARN lines, not here.",
  },
};

/** The EFA driver's events, in AWS's terms (an instance's device: no firmware tool, no reseat); severities as NIC's. */
const EFA_NIC: Partial<Record<NicEventKind, { what: string; advice: string }>> = {
  firmware_error: {
    what: "an admin queue that stopped answering",
    advice:
      "The EFA device stopped completing the driver's commands: traffic through it fails until the device is reset (stop and start the instance, which moves it to other hardware); drain the node if it repeats.",
  },
  command_error: {
    what: "a command the device refused",
    advice:
      "The EFA device refused a command of the driver (a memory registration, a protection domain, a queue): the call over it fails. `err -12` is a refusal for want of resources: too many or too large memory registrations (NCCL's buffers, many communicators); check the limits (ulimit -l) and the memory the job registers.",
  },
  probe_failed: {
    what: "a device that was not ready at probe",
    advice:
      "The EFA driver could not bring the device up: NCCL cannot use it (aws-ofi-nccl finds no provider, or falls back to sockets). Stop and start the instance.",
  },
};

function quote(s: string): string {
  const t = s.trim();
  return t.length > MAX_QUOTE ? `"${t.slice(0, MAX_QUOTE)}..."` : `"${t}"`;
}

/** The analysis' view of one kernel event; undefined for news that is no finding (a link coming up). */
export function hardwareEvent(ev: KernelEvent, host: string | undefined, where: string): HardwareEvent | undefined {
  const base = host !== undefined ? { host, where } : { where };
  switch (ev.kind) {
    case "xid": {
      const x = ev.xid;
      const entry = XID_CATALOGUE.get(x.xid);
      // A health agent's words may name the GPU by its UUID (`GPU-7540a9b3-...`), which ties it to no rank's bus id.
      const uuid = x.pci.startsWith("GPU-") || x.pci.startsWith("MIG-");
      const out: HardwareEvent = {
        ...base,
        kind: "gpu_xid",
        severity: entry !== undefined ? XID_SEVERITY[entry.action] : "warning",
        device: x.pci,
        subject: uuid ? x.pci : `GPU ${x.pci}`,
        ...(uuid ? {} : { gpuPci: x.pci }),
        code: x.xid,
        title: `Xid ${x.xid} (${entry !== undefined ? `${entry.meaning}; cause: ${entry.cause}` : "not in NVIDIA's Xid catalogue"})${x.detail !== "" ? `: ${quote(x.detail)}` : ""}`,
        advice: entry !== undefined ? XID_ADVICE[entry.action] : "Look it up in NVIDIA's Xid catalogue for this driver.",
      };
      if (entry !== undefined) out.action = entry.action;
      if (entry?.action === "restart_job") out.severityOnRank = "critical";
      const recovery = recoveryActionOf(x);
      if (recovery !== undefined) {
        // 1 GPU reset required, 2 node reboot required, 3 drain P2P, 4 drain and reset (ringwatch_gpu_recovery_action).
        const asked: XidAction = recovery === 0 ? "none" : recovery === 2 ? "reboot_node" : "reset_gpu";
        out.action = asked;
        out.severity = recovery === 0 ? "info" : "critical";
        out.advice =
          recovery === 0 ? "The driver says no recovery is needed any more." : `The driver asks for this before the GPU runs jobs again: ${XID_ADVICE[asked]}`;
      }
      if (x.pid !== undefined) out.pid = x.pid;
      if (x.name !== undefined) out.processName = x.name;
      return out;
    }
    case "sxid": {
      const s = ev.sxid;
      return {
        ...base,
        kind: "nvswitch_sxid",
        severity: s.fatal ? "critical" : "warning",
        device: s.pci,
        subject: s.nvswitch !== undefined ? `NVSwitch ${s.nvswitch} (PCI ${s.pci})` : `NVSwitch ${s.pci}`,
        code: s.sxid,
        title: `${s.fatal ? "fatal" : "non-fatal"} SXid ${s.sxid}: ${quote(s.detail)}`,
        advice: s.fatal
          ? "A fatal NVSwitch error: the NVLink fabric of this node must be reset (reboot, or reset the fabric partition); the jobs across it fail until then."
          : "NVLink traffic through the switch hit an error it survived; repeats, or Xid 74 / 144-150 on the GPUs, mean a link to service.",
      };
    }
    case "nic": {
      const n = ev.nic;
      if (n.kind === "link_up") return undefined;
      const efa = n.driver === "efa" ? EFA_NIC[n.kind] : undefined;
      const k = efa !== undefined ? { ...NIC[n.kind], ...efa } : NIC[n.kind];
      const name = n.pci === undefined ? n.name : n.name !== undefined ? `${n.name} (PCI ${n.pci})` : n.pci;
      const out: HardwareEvent = {
        ...base,
        kind: "hca_error",
        severity: k.severity,
        device: n.pci === undefined ? n.name : (n.name ?? n.pci),
        subject: `HCA ${name}${n.port !== undefined ? ` port ${n.port}` : ""}`,
        event: n.kind,
        title: `${k.what} (${n.driver}): ${quote(n.text)}`,
        advice: k.advice,
      };
      if (n.name !== undefined) out.hca = n.name;
      return out;
    }
    case "gpu_pcie":
      return {
        ...base,
        kind: "gpu_pcie_error",
        severity: ev.pcie.severity === "uncorrected" ? "critical" : "info",
        device: ev.pcie.pci,
        subject: `GPU ${ev.pcie.pci}`,
        gpuPci: ev.pcie.pci,
        event: ev.pcie.severity,
        title: `${ev.pcie.severity} PCIe bus errors: ${quote(ev.pcie.text)}`,
        advice:
          ev.pcie.severity === "uncorrected"
            ? "The GPU's PCIe link is failing: expect Xid 79 next; reseat or replace the GPU or riser."
            : "Harmless one by one; a flood points at a failing link or riser.",
      };
  }
}

const PORT: Record<PortTrouble, { severity: Severity; what: string; advice: string }> = {
  no_link: {
    severity: "warning",
    what: "no link",
    advice:
      "The port finds no link partner: check the cable, the transceiver and the switch port. NCCL cannot use it (it falls back to another HCA, or to sockets).",
  },
  not_activated: {
    severity: "warning",
    what: "a link the subnet manager has not activated",
    advice:
      "The link trained but the port is not Active: on InfiniBand a subnet manager must bring it up (is one running on the fabric? `sminfo`), and NCCL cannot use the port until it does.",
  },
  disabled: {
    severity: "info",
    what: "a port switched off",
    advice: "Disabled by configuration, usually an unused port; it matters only if NCCL_IB_HCA names it.",
  },
  other: { severity: "warning", what: "a port not Active", advice: "NCCL cannot use the port in this state; check it with `ibstat` and the switch." },
  active: {
    severity: "info",
    what: "the port Active again",
    advice:
      "It was not Active earlier in the same output: a port that keeps going down and up (flapping) breaks the connections over it each time; check the cable and the switch port's error counters.",
  },
};

/**
 * A port with no link on an HCA whose earlier port in the same output is Active: the usual unused
 * second port of a dual-port card, with no cable (nccl-pasted 510).
 */
const SPARE_PORT = {
  what: "no link while another port of the same HCA is Active",
  advice:
    "Most likely an unused port with no cable, as on many dual-port cards. Where NCCL uses this port (its NET/IB list names it, or NCCL_IB_HCA does), it is a link down like any other: check the cable, the transceiver and the switch port.",
};

/**
 * A port a pasted `ibstatus`, `ibstat` or `rdma link` shows not Active, as the analysis sees it;
 * `spare`: another port of its HCA is Active and this one never was: a note, a warning where a
 * process of the logs uses that very port for NET/IB.
 */
export function portEvent(r: PortReading, where: string, spare = false): HardwareEvent {
  const asSpare = spare && r.trouble === "no_link";
  const k = asSpare ? { ...PORT.no_link, ...SPARE_PORT, severity: "info" as const } : PORT[r.trouble];
  return {
    kind: "hca_error",
    severity: k.severity,
    ...(asSpare ? { severityOnRank: PORT.no_link.severity } : {}),
    device: `${r.hca} port ${r.port}`,
    hca: r.hca,
    hcaPort: r.port,
    subject: `HCA ${r.hca} port ${r.port}`,
    event: `port_${r.trouble}`,
    title: `${k.what} (${r.tool}: state ${r.state}${r.physical !== "" ? `, physical state ${r.physical}` : ""})`,
    advice: k.advice,
    where,
  };
}

/**
 * A port ibqueryerrors lists with counters past their thresholds: a warning where the link itself
 * fails (link downs, symbol and receive errors), a note where only congestion shows (the time it
 * waited to send, discards, a switch's relay errors). An HCA's node description (`dl380g7 mlx4_0`,
 * the default: host and device) ties it to the ranks on that device.
 */
export function portErrorsEvent(r: PortErrorsReading, where: string): HardwareEvent {
  const failing = r.linkErrors.length > 0;
  const sp = r.node?.indexOf(" ") ?? -1;
  const hca = r.node !== undefined && sp > 0 && r.node.indexOf(" ", sp + 1) < 0 && r.node.startsWith("mlx", sp + 1) ? r.node.slice(sp + 1) : undefined;
  const port = Number(r.port);
  const subject = `${hca !== undefined ? `HCA ${hca}` : `IB port GUID ${r.guid}${r.node !== undefined ? ` ("${r.node}")` : ""}`} ${r.port === "ALL" ? "(all ports)" : `port ${r.port}`}`;
  const counters = [...r.linkErrors, ...r.others].join(", ");
  return {
    kind: "hca_error",
    severity: failing ? "warning" : "info",
    ...(hca !== undefined && r.node !== undefined ? { host: r.node.slice(0, sp), hca } : {}),
    ...(hca !== undefined && Number.isInteger(port) ? { hcaPort: port } : {}),
    device: `${r.guid} port ${r.port}`,
    subject,
    event: failing ? "port_errors" : "port_congestion",
    title: `${failing ? "link errors" : "congestion"} past ibqueryerrors' thresholds (${counters})`,
    advice: failing
      ? "The link of this port went down or corrupts packets: NCCL's connections over it fail (retry counter exceeded) or slow down. Check the cable and the transceiver at both ends (reseat, swap), the switch port, and whether the counters still grow (perfquery, ringwatch_infiniband_*); clear them (perfquery -R) once fixed."
      : "Only congestion shows (time waiting to send, discards): traffic through this port queues, which slows collectives but breaks nothing; a hot spot points at routing or at the jobs sharing the link.",
    where,
  };
}

/**
 * A GPU the driver said fell off the bus (Xid 79, or its `GPU has fallen off the bus` words): it no
 * longer answers on PCIe, the same fact lspci's revision ff shows (goneGpuEvent), so a PCIe error of
 * that GPU too. Where the log also has the GPU's AER errors or lspci's row, the findings keep one
 * PCIe finding per GPU (hardware.ts).
 */
export function fellOffBusEvent(xid: HardwareEvent): HardwareEvent | undefined {
  if (xid.kind !== "gpu_xid" || xid.code !== 79 || xid.gpuPci === undefined) return undefined;
  return {
    ...(xid.host !== undefined ? { host: xid.host } : {}),
    where: xid.where,
    kind: "gpu_pcie_error",
    severity: "critical",
    device: xid.device,
    subject: xid.subject,
    gpuPci: xid.gpuPci,
    event: "off_bus",
    title: "Xid 79: the GPU no longer answers on PCIe",
    advice:
      "Its link went down or it lost power: reboot the node to get it back, and drain it if it repeats (reseat or replace the GPU or its riser, check its power cables); AER lines of its root port before the Xid, where the kernel printed them, say the link failed first.",
  };
}

/** A GPU a pasted lspci shows at revision ff: its config space reads all ones. */
export function goneGpuEvent(g: GoneGpu, where: string): HardwareEvent {
  return {
    ...(g.host !== undefined ? { host: g.host } : {}),
    where,
    kind: "gpu_pcie_error",
    severity: "critical",
    device: g.pci,
    subject: `GPU ${g.pci}`,
    gpuPci: g.pci,
    event: "off_bus",
    title: `revision ff in lspci (${g.name}), its config space read as all ones: the GPU no longer answers on PCIe`,
    advice:
      "The GPU has fallen off the bus (the kernel's Xid 79 usually said so first): reboot the node to get it back, and drain it if it repeats (reseat or replace the GPU or its riser, check its power).",
  };
}

const NO_EVENTS: readonly HardwareEvent[] = [];

/** The kernel lines of each log given to analyze, one PastedKernelLog per log; and the port states and counters pasted among them. */
export class KernelLines implements HardwareLog {
  lines(name: string): ReturnType<HardwareLog["lines"]> {
    const log = new PastedKernelLog();
    const ports = new PastedPortStates();
    const counters = new PastedPortErrors();
    // Ports seen not Active in this log: an Active reading of one of them after is news; of any other, none.
    const down = new Set<string>();
    // The ports of each HCA seen Active anywhere in this log (ibstatus prints a header per port, rdma link none).
    const up = new Map<string, Set<number>>();
    return {
      line(text: string, lineNo: number): readonly HardwareEvent[] {
        const events = log.line(text);
        const r = ports.line(text);
        // A new output of an HCA (another host's, or a later run): its ports' earlier states are another story.
        const fresh = ports.takeHeader();
        if (fresh !== undefined) for (const k of [...down]) if (k.startsWith(`${fresh}/`)) down.delete(k);
        const gone = goneGpu(text);
        const errors = counters.line(text, lineNo);
        // Most lines are neither kernel, port, counter nor lspci lines: one shared empty list, no allocation per line.
        if (events.length === 0 && r === undefined && gone === undefined && errors.length === 0) return NO_EVENTS;
        const out: HardwareEvent[] = [];
        if (gone !== undefined) out.push(goneGpuEvent(gone, `${name}:${lineNo}`));
        for (const e of errors) out.push(portErrorsEvent(e, `${name}:${e.lineNo}`));
        for (const p of events) {
          const h = hardwareEvent(p.event, p.host, `${name}:${lineNo}`);
          if (h === undefined) continue;
          out.push(h);
          const off = fellOffBusEvent(h);
          if (off !== undefined) out.push(off);
        }
        if (r !== undefined) {
          const key = `${r.hca}/${r.port}`;
          if (r.trouble !== "active" && r.trouble !== "disabled" && down.size < 4096) down.add(key);
          // A spare: another port of the HCA is Active, and this one never was (a port that went down is no spare).
          const active = up.get(r.hca);
          const spare = active !== undefined && !active.has(r.port);
          if (r.trouble !== "active" || down.delete(key)) out.push(portEvent(r, `${name}:${lineNo}`, spare));
          if (r.trouble === "active") {
            if (active !== undefined) active.add(r.port);
            else if (up.size < 4096) up.set(r.hca, new Set([r.port]));
          }
        }
        return out;
      },
      end(): readonly HardwareEvent[] {
        return counters.end().map((e) => portErrorsEvent(e, `${name}:${e.lineNo}`));
      },
    };
  }
}
