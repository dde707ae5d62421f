/**
 * A pasted `lspci` listing (also `lspci -nn`, `-D`, behind pdsh's `host: `) that shows a GPU gone
 * from the bus: `1c:00.0 VGA compatible controller: NVIDIA Corporation TU102GL [Quadro RTX
 * 6000/8000] (rev ff)` (nccl-pasted 718). Revision ff is the config space read as all ones: the
 * device no longer answers on PCIe (the kernel's Xid 79, "GPU has fallen off the bus", usually
 * came first). Only NVIDIA's display controllers (VGA, 3D, Display) count; the GPU's audio and USB
 * functions say the same of the same GPU. For `ringwatch analyze`; cut at fixed words.
 */
const REV_FF = "(rev ff)";
const VENDOR = ": NVIDIA Corporation ";
const CLASSES = ["VGA compatible controller", "3D controller", "Display controller"];

export interface GoneGpu {
  /** The GPU's PCI address with its domain (`0000:1c:00.0`). */
  pci: string;
  /** The host pdsh's prefix named, where there is one. */
  host?: string;
  /** lspci's name of the device (`TU102GL [Quadro RTX 6000/8000]`). */
  name: string;
}

/** The GPU a line of `lspci` shows at revision ff; undefined for any other line. */
export function goneGpu(line: string): GoneGpu | undefined {
  let end = line.length;
  while (end > 0 && (line.charCodeAt(end - 1) === 32 || line.charCodeAt(end - 1) === 9 || line.charCodeAt(end - 1) === 13)) end--;
  if (!line.startsWith(REV_FF, end - REV_FF.length)) return undefined;
  const v = line.indexOf(VENDOR);
  if (v < 0) return undefined;
  let i = 0;
  while (line.charCodeAt(i) === 32) i++;
  let host: string | undefined;
  let sp = line.indexOf(" ", i);
  if (sp < 0 || sp > v) return undefined;
  // pdsh's `host: ` before the address.
  if (line.charCodeAt(sp - 1) === 58 /* : */ && !isAddress(line, i, sp)) {
    host = line.slice(i, sp - 1);
    i = sp + 1;
    sp = line.indexOf(" ", i);
    if (sp < 0 || sp > v) return undefined;
  }
  if (!isAddress(line, i, sp)) return undefined;
  const cls = line.slice(sp + 1, v);
  if (!CLASSES.some((c) => cls.startsWith(c))) return undefined;
  const addr = line.slice(i, sp).toLowerCase();
  const out: GoneGpu = { pci: addr.length === 7 ? `0000:${addr}` : addr, name: line.slice(v + VENDOR.length, end - REV_FF.length).trim() };
  if (host !== undefined) out.host = host;
  return out;
}

/** `1c:00.0`, `0000:1c:00.0` or a VMD domain's `10000:01:00.0` from i to end. */
function isAddress(s: string, i: number, end: number): boolean {
  const n = end - i;
  if (n === 12 || n === 13) return hex(s, i, n - 8) && s.charCodeAt(i + n - 8) === 58 && isAddress(s, i + n - 7, end);
  return n === 7 && hex(s, i, 2) && s.charCodeAt(i + 2) === 58 && hex(s, i + 3, 2) && s.charCodeAt(i + 5) === 46 && hex(s, i + 6, 1);
}

function hex(s: string, i: number, n: number): boolean {
  for (let k = i; k < i + n; k++) {
    const c = s.charCodeAt(k) | 32;
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
