/**
 * The NVSwitch driver's SXid reports:
 *   nvidia-nvswitch0: SXid (PCI:0000:88:00.0): 12028, Non-fatal, Link 44 egress non-posted PRIV error (First)
 *   nvidia-nvswitch0: SXid (PCI:0000:88:00.0): 12028, Severity 0 Engine instance 44 Sub-engine instance 00
 *   nvidia-nvswitch0: SXid (PCI:0000:88:00.0): 12028, Data {0x00000000, 0x00000000, ...}
 * One error prints its description line and then follow-up lines about the same SXid; only the
 * line that says `Fatal` or `Non-fatal` counts as the error.
 */
import { isPciAddress } from "./xid.js";

export interface SxidReport {
  /** N of `nvidia-nvswitchN`, or undefined when the line has no such prefix. */
  nvswitch?: string;
  pci: string;
  sxid: number;
  fatal: boolean;
  /** NVLink port number (`Link 44`), when printed. */
  link?: number;
  detail: string;
}

const MARK = "SXid (";
const SWITCH = "nvidia-nvswitch";

export function parseSxid(line: string): SxidReport | undefined {
  const at = line.indexOf(MARK);
  if (at < 0) return undefined;
  const close = line.indexOf(")", at);
  if (close < 0 || close - at > 40) return undefined;
  let pci = line.slice(at + MARK.length, close);
  if (pci.startsWith("PCI:")) pci = pci.slice(4);
  if (!isPciAddress(pci) || line.charCodeAt(close + 1) !== 58) return undefined;
  let i = close + 2;
  while (line.charCodeAt(i) === 32) i++;
  const numStart = i;
  while (i < line.length && i - numStart < 6 && line.charCodeAt(i) >= 48 && line.charCodeAt(i) <= 57) i++;
  if (i === numStart || line.charCodeAt(i) !== 44) return undefined;
  const sxid = Number(line.slice(numStart, i));
  const rest = line.slice(i + 1).trimStart();
  let fatal: boolean;
  let detail: string;
  if (rest.startsWith("Non-fatal,")) {
    fatal = false;
    detail = rest.slice(10).trim();
  } else if (rest.startsWith("Fatal,")) {
    fatal = true;
    detail = rest.slice(6).trim();
  } else {
    return undefined;
  }
  const report: SxidReport = { pci: pci.toLowerCase(), sxid, fatal, detail };
  const sw = line.lastIndexOf(SWITCH, at);
  if (sw >= 0) {
    let k = sw + SWITCH.length;
    const s = k;
    while (k < at && line.charCodeAt(k) >= 48 && line.charCodeAt(k) <= 57) k++;
    if (k > s) report.nvswitch = line.slice(s, k);
  }
  const link = detail.indexOf("Link ");
  if (link >= 0) {
    let k = link + 5;
    const s = k;
    while (k < detail.length && detail.charCodeAt(k) >= 48 && detail.charCodeAt(k) <= 57) k++;
    if (k > s && k - s < 4) report.link = Number(detail.slice(s, k));
  }
  return report;
}
