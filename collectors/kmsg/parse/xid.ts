/**
 * The NVIDIA driver's Xid reports (NVRM), in the forms drivers have printed:
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1122, GPU has fallen off the bus.
 *   NVRM: Xid (PCI:0000:00:06): 31, pid=79749, name=exe, Ch 0000000a, intr 00000000. MMU Fault: ...
 *   NVRM: Xid (PCI:0000:b3:00): 119, pid='<unknown>', name=<unknown>, Timeout after 6s of waiting ...
 *   NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a097 ...                    (drivers before ~340)
 * and the report of a GPU lost at probe, which prints no Xid (NVSentinel#155; counted as Xid 79):
 *   NVRM: The NVIDIA GPU 0000:b3:00.0
 *   NVRM: (PCI ID: 10de:26b5) installed in this system has
 *   NVRM: fallen off the bus and is not responding to commands.
 * Each is found anywhere in the line, so dmesg, syslog and journal prefixes need no stripping.
 */

export interface XidReport {
  /** The PCI address as printed (`0000:3b:00`: domain, bus, device; no function); a health agent's words may name the GPU's UUID instead (`GPU-7540a9b3-...`). */
  pci: string;
  xid: number;
  pid?: number;
  /** The process name the driver printed. */
  name?: string;
  /** The rest of the line: the driver's description. */
  detail: string;
}

const XID_MARK = "NVRM: Xid (";

/** Parses an Xid line; undefined for any other line. */
export function parseXid(line: string): XidReport | undefined {
  const at = line.indexOf(XID_MARK);
  if (at < 0) return undefined;
  let i = at + XID_MARK.length;
  const close = line.indexOf(")", i);
  if (close < 0 || close - i > 40) return undefined;
  let pci = line.slice(i, close);
  if (pci.startsWith("PCI:")) pci = pci.slice(4);
  if (!isPciAddress(pci)) return undefined;
  i = close + 1;
  if (line.charCodeAt(i) !== 58) return undefined; // ':'
  i = skipSpaces(line, i + 1);
  const numStart = i;
  while (i < line.length && i - numStart < 6 && isDigit(line.charCodeAt(i))) i++;
  if (i === numStart || (i < line.length && line.charCodeAt(i) !== 44)) return undefined; // ','
  const xid = Number(line.slice(numStart, i));
  const report: XidReport = { pci: pci.toLowerCase(), xid, detail: "" };
  i = i < line.length ? skipSpaces(line, i + 1) : i;
  // pid=..., name=..., in that order, each optional.
  for (const key of ["pid=", "name="] as const) {
    if (!line.startsWith(key, i)) continue;
    const end = fieldEnd(line, i + key.length);
    const value = unquote(line.slice(i + key.length, end));
    if (key === "pid=") {
      if (/^\d{1,10}$/.test(value)) report.pid = Number(value);
    } else if (value !== "<unknown>" && value.length > 0) {
      report.name = value;
    }
    i = end < line.length ? skipSpaces(line, end + 1) : end;
  }
  report.detail = line.slice(i).trim();
  return report;
}

const FALLEN_MARK = "NVRM: GPU ";
const FALLEN_TEXT = "GPU has fallen off the bus";

/**
 * `NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.`: the driver prints it after an Xid 79 and,
 * in newer drivers, also alone. Read as Xid 79 (KernelEvents keeps it from counting one fall twice).
 */
export function parseFallenOffBus(line: string): XidReport | undefined {
  const at = line.indexOf(FALLEN_MARK);
  if (at < 0 || line.indexOf(FALLEN_TEXT, at) < 0) return undefined;
  const start = at + FALLEN_MARK.length;
  const end = line.indexOf(": ", start);
  if (end < 0) return undefined;
  const pci = line.slice(start, end);
  if (!isPciAddress(pci)) return undefined;
  return { pci: pci.toLowerCase(), xid: 79, detail: line.slice(end + 2).trim() };
}

/** The three lines of a GPU lost at probe. Feed every line; a report comes with the last one. */
export class LostAtProbe {
  private pci: string | undefined;
  private lines = 0;

  push(line: string): XidReport | undefined {
    const gpuAt = line.indexOf("NVRM: The NVIDIA GPU ");
    if (gpuAt >= 0) {
      const addr = line.slice(gpuAt + 21).trim();
      this.pci = isPciAddress(addr) ? addr.toLowerCase() : undefined;
      this.lines = 0;
      return undefined;
    }
    if (this.pci === undefined) return undefined;
    if (++this.lines > 3) {
      this.pci = undefined;
      return undefined;
    }
    if (line.indexOf("NVRM: fallen off the bus") < 0) return undefined;
    const pci = this.pci;
    this.pci = undefined;
    return { pci, xid: 79, detail: "fallen off the bus and is not responding to commands (at probe, no Xid printed)" };
  }
}

const HEALTH_XID = "XID ";
const DETECTED_ON = " detected on PCI:";

const PLUGIN_XID = "XidCriticalError: Xid=";
const ON_DEVICE = " on Device=";

/**
 * A health agent's words for an Xid it read from the kernel (gpud's reason:
 * `XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00`, also `XID 74 (NVLINK Error) ...`;
 * NVIDIA's Kubernetes device plugin's `XidCriticalError: Xid=69 on Device=GPU-7540a9b3-..., the
 * device will go unhealthy.`, whose `pci` is the GPU's UUID), pasted where the kernel's own line is
 * not. Offline only: the kernel never prints these.
 */
export function parseHealthAgentXid(line: string): XidReport | undefined {
  const plugin = line.indexOf(PLUGIN_XID);
  if (plugin >= 0) return devicePluginXid(line, plugin + PLUGIN_XID.length);
  const at = line.indexOf(HEALTH_XID);
  if (at < 0 || (at > 0 && line.charCodeAt(at - 1) !== 32 && line.charCodeAt(at - 1) !== 34)) return undefined;
  let i = at + HEALTH_XID.length;
  const start = i;
  while (i < line.length && i - start < 4 && line.charCodeAt(i) >= 48 && line.charCodeAt(i) <= 57) i++;
  if (i === start) return undefined;
  const xid = Number(line.slice(start, i));
  if (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) !== 40 /* ( */) return undefined;
  const on = line.indexOf(DETECTED_ON, i);
  if (on < 0 || on - i > 200 || line.charCodeAt(on - 1) !== 41 /* ) */) return undefined;
  const p = on + DETECTED_ON.length;
  let e = p;
  while (e < line.length && e - p < 16 && (isHex(line.charCodeAt(e)) || line.charCodeAt(e) === 58 || line.charCodeAt(e) === 46)) e++;
  const pci = line.slice(p, e);
  if (!isPciAddress(pci)) return undefined;
  return { pci: pci.toLowerCase(), xid, detail: line.slice(i + 1, on - 1) };
}

/** The device plugin's `Xid=69 on Device=GPU-<uuid>, the device will go unhealthy.` from i (after `Xid=`). */
function devicePluginXid(line: string, i: number): XidReport | undefined {
  let e = i;
  while (e < line.length && e - i < 4 && line.charCodeAt(e) >= 48 && line.charCodeAt(e) <= 57) e++;
  if (e === i || !line.startsWith(ON_DEVICE, e)) return undefined;
  const d = e + ON_DEVICE.length;
  let end = d;
  while (end < line.length && end - d < 64 && line.charCodeAt(end) !== 44 && line.charCodeAt(end) !== 32) end++;
  const device = line.slice(d, end);
  if (!device.startsWith("GPU-") && !device.startsWith("MIG-") && !isPciAddress(device)) return undefined;
  return { pci: device, xid: Number(line.slice(i, e)), detail: "the Kubernetes device plugin marked the GPU unhealthy" };
}

/** `0000:3b:00`, `0000:3b:00.0`, `3b:00.0`: hex groups separated by ':' with an optional `.f`. */
export function isPciAddress(s: string): boolean {
  if (s.length < 5 || s.length > 16) return false;
  let colons = 0;
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c === 58) colons++;
    else if (c === 46) {
      if (k !== s.length - 2) return false;
    } else if (!isHex(c)) return false;
  }
  return colons >= 1 && colons <= 2;
}

function fieldEnd(s: string, from: number): number {
  if (s.charCodeAt(from) === 39) {
    const q = s.indexOf("'", from + 1);
    if (q > 0) return s.indexOf(",", q) < 0 ? s.length : s.indexOf(",", q);
  }
  const c = s.indexOf(",", from);
  return c < 0 ? s.length : c;
}

function unquote(v: string): string {
  const t = v.trim();
  return t.length >= 2 && t.startsWith("'") && t.endsWith("'") ? t.slice(1, -1) : t;
}

function skipSpaces(s: string, i: number): number {
  while (i < s.length && s.charCodeAt(i) === 32) i++;
  return i;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** `GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)` (Xid 154): the new action. */
export function recoveryActionOf(report: XidReport): number | undefined {
  if (report.xid !== 154) return undefined;
  const at = report.detail.indexOf(" to 0x");
  if (at < 0) return undefined;
  let k = at + 6;
  const s = k;
  while (k < report.detail.length && k - s < 4 && isHex(report.detail.charCodeAt(k))) k++;
  return k > s ? Number.parseInt(report.detail.slice(s, k), 16) : undefined;
}
