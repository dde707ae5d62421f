/**
 * Kernel log lines as people paste them next to NCCL logs (`dmesg`, `dmesg -T`, syslog,
 * `journalctl -k`, the `host: ` of pdsh/clush, `talosctl dmesg`), for `ringwatch analyze`: the
 * events each line reports (parse/events.ts, found anywhere in the line) and the host its prefix
 * names, if any:
 *   Nov 29 11:28:11 zeus kernel: NVRM: Xid (PCI:0000:c1:00): 31, ...            host zeus
 *   2026-11-24T02:47:01.123+00:00 node7 kernel: [ 12.3] NVRM: Xid ...            host node7
 *   node7: [ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, ...                      host node7
 *   192.168.11.119: kern: warning: [2026-04-22T21:26:20.599Z]: NVRM: Xid ...         host 192.168.11.119 (talosctl)
 *   [ 1843.308145] NVRM: ...   kern  :err   : ... nvidia-nvswitch1: SXid ...     no host
 * A `<host> kernel:` counts only after a timestamp, and a `<host>: ` only before the start of a
 * kernel line (a timestamp, `kern`), so that `CRITICAL: NVRM: ...` or `found in kernel: ...` name
 * no host. One PastedKernelLog reads one file, with the parsers' state kept per host (pdsh
 * interleaves the nodes' lines): the three-line "fallen off the bus" report, one fall told twice.
 * dmesg's indented continuation rows take the host of the row they continue. An HCA event that
 * names no RDMA device gets the name an earlier line of the same host gave its PCI address.
 */
import { parseDevicePrefix } from "./parse/device-prefix.js";
import { KernelEvents, RECOVERY_NO_CALLBACK, RECOVERY_NO_DRIVER, type KernelEvent } from "./parse/events.js";
import { parseHealthAgentXid, type XidReport } from "./parse/xid.js";
import { pciSlotKey } from "../pci.js";

export interface PastedKernelEvent {
  event: KernelEvent;
  /** The host the line's prefix named (syslog/journal `<host> kernel:`, or a pdsh `<host>: `). */
  host?: string;
}

/** Words that stand where a host would and are no host. */
const NOT_HOSTS = new Set([
  "kern",
  "kernel",
  "user",
  "daemon",
  "syslog",
  "nvrm",
  "dmesg",
  "journal",
  "message",
  "msg",
  "log",
  "stdout",
  "stderr",
  "warning",
  "warn",
  "error",
  "err",
  "info",
  "debug",
  "notice",
  "crit",
  "critical",
  "fatal",
  "alert",
  "emerg",
  "emergency",
  "panic",
  "trace",
]);

/** Lines that can report an event hold one of these; any other line costs these scans only. */
const MARKS = [
  "NVRM",
  "SXid",
  "XID ",
  "XidCriticalError",
  "mlx5_core",
  "PCIe Bus Error",
  RECOVERY_NO_CALLBACK,
  RECOVERY_NO_DRIVER,
  "infiniband ",
  "efa ",
] as const;
/**
 * The marks as one alternation of literals (escaped; no quantifier, so no backtracking beyond one
 * mark's length): one scan of the line instead of nine indexOf, 155 against 250 ms per 1M lines.
 */
const MARKED = new RegExp(MARKS.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"));

/** What an unmarked line gives: one shared empty list, no allocation per line. */
const NO_EVENTS: readonly PastedKernelEvent[] = [];

/** Hosts whose parser state is kept (a fleet's pdsh output); beyond, the state of the first ones is reused. */
const MAX_HOSTS = 4096;
/** PCI addresses whose RDMA device name is kept, per log. */
const MAX_NAMES = 4096;

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export class PastedKernelLog {
  private readonly byHost = new Map<string, KernelEvents>();
  /** `host|pci` → the RDMA device (`mlx5_0`) a line named at that address. */
  private readonly hcaNames = new Map<string, string>();
  private lastHost: string | undefined;
  /** `host|xid|slot` → who reported it first: the kernel's line or a health agent's words. */
  private readonly xids = new Map<string, "kernel" | "agent">();

  line(text: string): readonly PastedKernelEvent[] {
    if (!MARKED.test(text)) return NO_EVENTS;
    const own = pastedHost(text);
    const continued = own === undefined && (text.charCodeAt(0) === 32 || text.charCodeAt(0) === 9);
    const host = own ?? (continued ? this.lastHost : undefined);
    this.lastHost = host;
    const out: PastedKernelEvent[] = [];
    for (const event of this.parserOf(host).read(text)) {
      if (event.kind === "nic") this.nameHca(host, event.nic);
      // The kernel's own line of an Xid a health agent's words gave first: counted once, already.
      if (event.kind === "xid" && this.seenXid(host, event.xid, "kernel")) continue;
      out.push(host !== undefined ? { event, host } : { event });
    }
    if (out.length === 0) {
      // A health agent's words for an Xid: once per host, code and GPU, and not where the kernel's own line was read.
      const agent = parseHealthAgentXid(text);
      if (agent !== undefined && this.seenXid(host, agent, "agent"))
        out.push(host !== undefined ? { event: { kind: "xid", xid: agent }, host } : { event: { kind: "xid", xid: agent } });
    }
    if (out.length === 0 && text.indexOf("mlx5_core") >= 0) this.learnHcaName(host, text);
    return out;
  }

  /**
   * Notes an Xid of the kernel or of a health agent. For an agent's words: true when they are the
   * first of that Xid (count them). For the kernel's line: true when an agent's words counted that
   * Xid first (it is counted already), and from then on the kernel's lines count.
   */
  private seenXid(host: string | undefined, x: XidReport, by: "kernel" | "agent"): boolean {
    const key = `${host?.toLowerCase() ?? ""}|${x.xid}|${pciSlotKey(x.pci)}`;
    const had = this.xids.get(key);
    if (had === undefined && this.xids.size < MAX_NAMES) this.xids.set(key, by);
    if (by === "agent") return had === undefined;
    if (had === "agent") {
      this.xids.set(key, "kernel");
      return true;
    }
    return false;
  }

  private parserOf(host: string | undefined): KernelEvents {
    const key = host?.toLowerCase() ?? "";
    let p = this.byHost.get(key);
    if (p === undefined) {
      if (this.byHost.size >= MAX_HOSTS) return this.byHost.values().next().value as KernelEvents;
      p = new KernelEvents();
      this.byHost.set(key, p);
    }
    return p;
  }

  /** `mlx5_core 0000:0c:00.0 mlx5_0: Port: 1 Link INIT`: the RDMA device at that address. */
  private learnHcaName(host: string | undefined, text: string): void {
    const p = parseDevicePrefix(text, "mlx5_core");
    if (p?.name !== undefined) this.remember(`${host?.toLowerCase() ?? ""}|${p.pci}`, p.name);
  }

  /** An HCA event names its RDMA device, which is kept; or names none, and gets the one kept for its address. */
  private nameHca(host: string | undefined, nic: { pci?: string; name?: string }): void {
    if (nic.pci === undefined) return;
    const key = `${host?.toLowerCase() ?? ""}|${nic.pci}`;
    if (nic.name !== undefined) {
      this.remember(key, nic.name);
      return;
    }
    const known = this.hcaNames.get(key);
    if (known !== undefined) nic.name = known;
  }

  /** RDMA device names only (`mlx5_0`), not netdevs (`ens1f0np0`): NET/IB lists RDMA devices. */
  private remember(key: string, name: string): void {
    if (name.startsWith("mlx5_") && this.hcaNames.size < MAX_NAMES) this.hcaNames.set(key, name);
  }
}

/** The host a pasted kernel line's prefix names; undefined for dmesg's own forms. */
export function pastedHost(line: string): string | undefined {
  // syslog, journalctl, rsyslog RFC 3339: `<time> <host> kernel: `.
  const k = line.indexOf(" kernel: ");
  if (k > 0 && k < 128) {
    const start = line.lastIndexOf(" ", k - 1) + 1;
    const h = line.slice(start, k);
    if (start >= 2 && isTimeEnd(line.charCodeAt(start - 2)) && isHostName(h)) return h;
  }
  // pdsh, clush, talosctl: `<host>: ` first, then a kernel line.
  const c = line.indexOf(": ");
  if (c > 0 && c <= 64) {
    const h = line.slice(0, c);
    if (isHostName(h) && !h.startsWith("nvidia") && !h.startsWith("mlx5") && startsKernelLine(line, c + 2)) return h;
  }
  return undefined;
}

/** The last character of a time before the host: `11:28:11`, `+00:00`, `2024]`, `...Z`. */
function isTimeEnd(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 93 || c === 90;
}

/** What follows a pdsh host: a dmesg timestamp, a syslog date, `kern` (talosctl, dmesg -x), or dmesg's indented continuation row. */
function startsKernelLine(line: string, i: number): boolean {
  if (line.startsWith("  ", i)) return true;
  const c = line.charCodeAt(i);
  if (c === 91 || (c >= 48 && c <= 57)) return true; // `[` or a digit
  if (line.startsWith("kern", i)) return true;
  const month = line.slice(i, i + 4);
  return MONTHS.some((m) => month === `${m} `);
}

function isHostName(s: string): boolean {
  if (s.length === 0 || s.length > 63 || NOT_HOSTS.has(s.toLowerCase())) return false;
  if (isIpv4(s)) return true;
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
