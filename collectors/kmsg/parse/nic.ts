/**
 * HCA / NIC driver messages that health agents watch (gpud, NVSentinel's syslog monitor), from
 * mlx5_core (ConnectX) lines such as
 *   mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN
 *   mlx5_core 0000:ab:00.0: mlx5_cmd_out_err:838:(pid 123): ... failed, status bad parameter(0x3), syndrome (0x...)
 *   mlx5_core 0000:ab:00.0: poll_health:... device's health compromised - reached miss count
 *   mlx5_core 0000:ab:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
 *   mlx5_core 0000:ab:00.0 ens1f0np0: TX timeout detected
 *   mlx5_core 0000:ab:00.0: mlx5_pcie_event:...: Detected insufficient power on the PCIe slot (27W).
 *   mlx5_core 0000:ab:00.0: Port module event: module 0, Cable unplugged
 *   mlx5_core 0004:01:00.0: mlx5_pci_err_detected Device state = 1 ... Enter, pci channel state = 2
 * Each kind is a fixed phrase looked up with indexOf, so a flood costs a few scans per line. One
 * incident counts once: the health dump's rows after `health compromised` / `Fatal error N detected`
 * (`assert_var[0]`, `synd`, ...) and the per-queue rows after `TX timeout detected` are not events
 * (real captures kmsg/27, 30).
 */
import { parseDevicePrefix } from "./device-prefix.js";

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
  | "probe_failed";

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
];

export interface NicEvent {
  driver: string;
  pci: string;
  /** The RDMA or net device the driver named, if it did. */
  name?: string;
  port?: number;
  kind: NicEventKind;
  text: string;
}

const DRIVERS = ["mlx5_core"] as const;

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
];

export function parseNicEvent(line: string): NicEvent | undefined {
  for (const driver of DRIVERS) {
    if (line.indexOf(driver) < 0) continue;
    const p = parseDevicePrefix(line, driver);
    if (p === undefined) continue;
    for (const [phrase, kind, not] of PHRASES) {
      if (p.text.indexOf(phrase) < 0) continue;
      if (not !== undefined && p.text.indexOf(not) >= 0) return undefined;
      const ev: NicEvent = { driver, pci: p.pci, kind, text: p.text };
      if (p.name !== undefined) ev.name = p.name;
      const port = portNumber(p.text);
      if (port !== undefined) ev.port = port;
      return ev;
    }
  }
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
