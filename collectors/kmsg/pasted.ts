/**
 * Kernel log lines as people paste them next to NCCL logs (`dmesg`, `dmesg -T`, syslog,
 * `journalctl -k`, and the `host: ` of pdsh/clush), for `ringwatch analyze`: the events each line
 * reports (parse/events.ts, found anywhere in the line) and the host its prefix names, if any:
 *   Nov 29 11:28:11 zeus kernel: NVRM: Xid (PCI:0000:c1:00): 31, ...            host zeus
 *   2026-11-24T02:47:01.123+00:00 node7 kernel: [ 12.3] NVRM: Xid ...            host node7
 *   node7: [ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, ...                      host node7
 *   192.168.11.119: kern: warning: [2026-04-22T21:26:20.599Z]: NVRM: Xid ...         host 192.168.11.119 (talosctl)
 *   [ 1843.308145] NVRM: ...   kern  :err   : ... nvidia-nvswitch1: SXid ...     no host
 * One PastedKernelLog reads one file: the three-line "fallen off the bus" report is kept across
 * lines, and dmesg's indented continuation lines take the host of the line they continue.
 */
import { KernelEvents, type KernelEvent } from "./parse/events.js";

export interface PastedKernelEvent {
  event: KernelEvent;
  /** The host the line's prefix named (syslog/journal `<host> kernel:`, or a pdsh `<host>: `). */
  host?: string;
}

/** Words that stand where a pdsh host would and are no host. */
const NOT_HOSTS = new Set(["kern", "kernel", "user", "daemon", "syslog", "nvrm", "warning", "warn", "error", "info", "err", "debug", "notice", "crit"]);

/** Lines that can report an event hold one of these; any other line costs these scans only. */
const MARKS = ["NVRM", "SXid", "mlx5_core", "PCIe Bus Error"] as const;

export class PastedKernelLog {
  private readonly events = new KernelEvents();
  private lastHost: string | undefined;

  line(text: string): PastedKernelEvent[] {
    let marked = false;
    for (const m of MARKS) {
      if (text.indexOf(m) >= 0) {
        marked = true;
        break;
      }
    }
    if (!marked) return [];
    const own = pastedHost(text);
    const continued = own === undefined && (text.charCodeAt(0) === 32 || text.charCodeAt(0) === 9);
    const host = own ?? (continued ? this.lastHost : undefined);
    this.lastHost = host;
    return this.events.read(text).map((event) => (host !== undefined ? { event, host } : { event }));
  }
}

/** The host a pasted kernel line's prefix names; undefined for dmesg's own forms. */
export function pastedHost(line: string): string | undefined {
  const k = line.indexOf(" kernel: ");
  if (k > 0 && k < 96) {
    const start = line.lastIndexOf(" ", k - 1) + 1;
    const h = line.slice(start, k);
    if (isHostName(h)) return h;
  }
  // pdsh / clush: `host: ` first, then the rest of the line (a dmesg or syslog line).
  const c = line.indexOf(": ");
  if (c > 0 && c <= 64) {
    const h = line.slice(0, c);
    if (isHostName(h) && !h.startsWith("nvidia") && !h.startsWith("mlx5")) return h;
  }
  return undefined;
}

function isHostName(s: string): boolean {
  if (s.length === 0 || s.length > 63 || NOT_HOSTS.has(s.toLowerCase())) return false;
  if (isIpv4(s)) return true; // talosctl dmesg: `192.168.11.119: kern: warning: [...]: NVRM: ...`
  let letter = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const lower = c >= 97 && c <= 122;
    const upper = c >= 65 && c <= 90;
    const digit = c >= 48 && c <= 57;
    if (lower || upper) letter = true;
    else if (!digit && c !== 45 && c !== 46 && c !== 95) return false; // - . _
  }
  const first = s.charCodeAt(0);
  return letter && first !== 45 && first !== 46;
}

function isIpv4(s: string): boolean {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => p.length >= 1 && p.length <= 3 && /^\d+$/.test(p) && Number(p) <= 255);
}
