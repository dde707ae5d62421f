/**
 * HCA / NIC driver messages that health agents watch (gpud, NVSentinel's syslog monitor), from
 * mlx5_core (ConnectX) lines such as
 *   mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN
 *   mlx5_core 0000:ab:00.0: mlx5_cmd_out_err:838:(pid 123): ... failed, status bad parameter(0x3), syndrome (0x...)
 *   mlx5_core 0000:ab:00.0: poll_health:... device's health compromised - reached miss count
 *   mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will cause a leak of a command resource
 *   mlx5_core 0000:ab:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
 *   mlx5_core 0000:ab:00.0 ens1f0np0: TX timeout detected
 *   mlx5_core 0000:ab:00.0: mlx5_pcie_event:...: Detected insufficient power on the PCIe slot (27W).
 *   mlx5_core 0000:ab:00.0: Port module event: module 0, Cable unplugged
 *   mlx5_core 0004:01:00.0: mlx5_pci_err_detected Device state = 1 ... Enter, pci channel state = 2
 * and the EFA driver's (AWS Elastic Fabric Adapter), which names the RDMA device, not its address:
 *   infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12
 *   infiniband rdmap16s27: The device didn't send any completion for admin cmd ... (an admin queue timeout)
 *   efa 0000:00:06.0: Device isn't ready, abort com init
 * and mlx5's work completions in error (completion.ts), which the Ethernet side prints with its
 * address and mlx5_ib with the RDMA device's name:
 *   mlx5_core 0000:3b:00.1 eth1: Error cqe on cqn 0x817, ci 0x8, qn 0x1dbb, opcode 0xd, syndrome 0x1, vendor syndrome 0x68
 *   infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 4, Message: local protection error
 * Each kind is a fixed phrase looked up with indexOf, so a flood costs a few scans per line. One
 * incident counts once: the health dump's rows after `health compromised` / `Fatal error N detected`
 * (`assert_var[0]`, `synd`, ...) and the per-queue rows after `TX timeout detected` are not events
 * (real captures kmsg/27, 30).
 */
import { completionForm, isFlush, type CompletionForm } from "./completion.js";
import { parseDevicePrefix, parseIbDevicePrefix, type DevicePrefix } from "./device-prefix.js";

export type NicEventKind =
  | "link_down"
  | "link_up"
  | "firmware_error"
  | "command_error"
  | "pcie_error_corrected"
  | "pcie_error_uncorrected"
  | "tx_timeout"
  | "module_event"
  | "insufficient_power"
  | "probe_failed"
  | "completion_error"
  | "completion_flushed";

export const NIC_EVENT_KINDS: readonly NicEventKind[] = [
  "link_down",
  "link_up",
  "firmware_error",
  "command_error",
  "pcie_error_corrected",
  "pcie_error_uncorrected",
  "tx_timeout",
  "module_event",
  "insufficient_power",
  "probe_failed",
  "completion_error",
  "completion_flushed",
];

/** An event, with the PCI address and the device name the driver printed (at least one of them). */
export type NicEvent = {
  driver: string;
  port?: number;
  kind: NicEventKind;
  text: string;
  /** Which of mlx5_ib's lines for a failed completion this is (completion.ts CompletionLines counts each completion once). */
  completion?: CompletionForm;
} & (
  | { pci: string; /** The RDMA or net device the driver named, if it did. */ name?: string }
  | { /** EFA's RDMA-device lines print no address. */ pci?: undefined; name: string }
);

/**
 * Phrases, most specific first; the first that occurs names the kind, unless the line also holds
 * `not` (then it is no event), e.g. a cable plugged back in, or the AER callback's `Exit, result = N`
 * after its `Enter, pci channel state = N` (one error).
 */
const PHRASES: readonly (readonly [phrase: string, kind: NicEventKind, not?: string])[] = [
  ["Link DOWN", "link_down"],
  ["Link ACTIVE", "link_up"],
  ["health compromised", "firmware_error"],
  ["Fatal error", "firmware_error"],
  ["fw_fatal", "firmware_error"],
  ["health poll failed", "firmware_error"],
  ["FW fatal", "firmware_error"],
  ["firmware error", "firmware_error"],
  // A command the firmware never completed (cmd.c: `wait_func_handle_exec_timeout:...: cmd[22]: CREATE_DCT(0x710) No done completion`,
  // `wait_func:...: CREATE_DCT(0x710) timeout. Will cause a leak of a command resource`): its command interface hangs.
  ["No done completion", "firmware_error"],
  ["Will cause a leak of a command resource", "firmware_error"],
  ["mlx5_cmd_out_err", "command_error"],
  ["mlx5_cmd_check", "command_error"],
  ["mlx5_load_one failed", "probe_failed"],
  ["severity=Correct", "pcie_error_corrected"],
  ["severity=Uncorrected", "pcie_error_uncorrected"],
  ["mlx5_pci_err_detected", "pcie_error_uncorrected", " Exit,"],
  ["TX timeout detected", "tx_timeout"],
  ["mlx5e_tx_timeout", "tx_timeout"],
  ["Port module event", "module_event", "Cable plugged"],
  ["insufficient power", "insufficient_power"],
  // The Ethernet driver's (mlx5e) failed completion, one line each; its `ERR CQE on SQ: 0x1dbb` after the hex rows is the same one.
  ["Error cqe on cqn", "completion_error"],
];

/**
 * The EFA driver's words (drivers/infiniband/hw/efa, efa_com.c): an admin command that never
 * completed closes the admin queue (the device is unusable until reset); a command the device
 * refused (`comp_status 1 err -12`: no resources) fails that one registration or allocation. The
 * verbs' own `Failed to register mr [-12]` after it is the same failure, not counted again.
 */
const EFA_PHRASES: readonly (readonly [phrase: string, kind: NicEventKind])[] = [
  ["didn't send any completion for admin cmd", "firmware_error"],
  ["didn't receive any MSI-X interrupt for admin cmd", "firmware_error"],
  ["Wait for completion (polling) timeout", "firmware_error"],
  ["Admin queue is closed", "firmware_error"],
  ["Reset indication didn't turn", "firmware_error"],
  ["Device isn't ready, can't reset device", "firmware_error"],
  ["Device isn't ready, abort com init", "probe_failed"],
  ["Failed to process command", "command_error"],
  ["Failed to submit command", "command_error"],
];

export function parseNicEvent(line: string): NicEvent | undefined {
  if (line.indexOf("mlx5_core") >= 0) {
    const p = parseDevicePrefix(line, "mlx5_core");
    if (p !== undefined) return mlx5Event(p);
  }
  if (line.indexOf("infiniband ") >= 0) {
    const p = parseIbDevicePrefix(line, isEfaName);
    const kind = p !== undefined ? efaKind(p.text) : undefined;
    if (p !== undefined && kind !== undefined) return { driver: "efa", name: p.name, kind, text: p.text };
    const c = completionLine(line);
    if (c !== undefined) return c;
  }
  if (line.indexOf("efa ") >= 0) {
    const p = parseDevicePrefix(line, "efa");
    const kind = p !== undefined ? efaKind(p.text) : undefined;
    if (p !== undefined && kind !== undefined) return { driver: "efa", pci: p.pci, kind, text: p.text };
  }
  return undefined;
}

function mlx5Event(p: DevicePrefix): NicEvent | undefined {
  for (const [phrase, kind, not] of PHRASES) {
    if (p.text.indexOf(phrase) < 0) continue;
    if (not !== undefined && p.text.indexOf(not) >= 0) return undefined;
    // The Ethernet side's failed completion says its syndrome in the line: 0x5 is a flushed request.
    const ev: NicEvent = { driver: "mlx5_core", pci: p.pci, kind: kind === "completion_error" && isFlush(p.text) ? "completion_flushed" : kind, text: p.text };
    if (p.name !== undefined) ev.name = p.name;
    const port = portNumber(p.text);
    if (port !== undefined) ev.port = port;
    return ev;
  }
  return undefined;
}

/** mlx5_ib's line of a failed completion (completion.ts), after an `infiniband <dev>: ` prefix. */
function completionLine(line: string): NicEvent | undefined {
  const p = parseIbDevicePrefix(line, (name) => !isEfaName(name));
  const form = p !== undefined ? completionForm(p.text) : undefined;
  return p !== undefined && form !== undefined ? { driver: "mlx5_ib", name: p.name, kind: "completion_error", text: p.text, completion: form } : undefined;
}

/**
 * EFA's RDMA device names: the driver's `efa_0`, or udev's predictable `rdmap16s27` (other fabrics'
 * predictable names start with `ib`, `roce` or `iw`; other drivers' own, `mlx5_0`, `bnxt_re0`).
 */
function isEfaName(name: string): boolean {
  return name.startsWith("efa") || name.startsWith("rdmap");
}

function efaKind(text: string): NicEventKind | undefined {
  for (const [phrase, kind] of EFA_PHRASES) if (text.indexOf(phrase) >= 0) return kind;
  return undefined;
}

function portNumber(text: string): number | undefined {
  const at = text.indexOf("Port: ");
  if (at < 0) return undefined;
  let k = at + 6;
  const s = k;
  while (k < text.length && k - s < 3 && text.charCodeAt(k) >= 48 && text.charCodeAt(k) <= 57) k++;
  return k > s ? Number(text.slice(s, k)) : undefined;
}
