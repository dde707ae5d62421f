/**
 * The sockets of one process, from procfs: /proc/<pid>/fd links give the socket inodes, and
 * /proc/<pid>/net/{tcp,tcp6,udp,udp6} give each inode's protocol, state and local address.
 */
import { readFileSync, readdirSync, readlinkSync } from "node:fs";

export interface InetSocket {
  proto: "tcp" | "tcp6" | "udp" | "udp6";
  /** Kernel state: 0A = TCP LISTEN, 07 = UDP unconnected (bound), 01 = ESTABLISHED ... */
  state: string;
  address: string;
  port: number;
  inode: number;
}

/** Inodes of the sockets a process holds open. */
export function socketInodes(pid: number): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) out.add(Number(m[1]));
  }
  return out;
}

/** "0100007F" → "127.0.0.1" (one little-endian 32-bit word). */
function ipv4(hex: string): string {
  const bytes = Buffer.from(hex, "hex");
  return [...bytes].reverse().join(".");
}

/** 32 hex digits, four little-endian 32-bit words → the address in its short form ("::1"). */
function ipv6(hex: string): string {
  const bytes = Buffer.alloc(16);
  for (let w = 0; w < 4; w++)
    Buffer.from(hex.slice(w * 8, w * 8 + 8), "hex")
      .reverse()
      .copy(bytes, w * 4);
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return new URL(`http://[${groups.join(":")}]/`).hostname.slice(1, -1);
}

/** Every row of /proc/<pid>/net/<proto> (the process's network namespace). */
export function inetTable(pid: number, proto: InetSocket["proto"]): InetSocket[] {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/net/${proto}`, "utf8");
  } catch {
    return []; // e.g. no IPv6 in this kernel
  }
  const rows: InetSocket[] = [];
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [addrHex = "", portHex = ""] = (f[1] ?? "").split(":");
    rows.push({
      proto,
      state: f[3] ?? "",
      address: proto.endsWith("6") ? ipv6(addrHex) : ipv4(addrHex),
      port: parseInt(portHex, 16),
      inode: Number(f[9]),
    });
  }
  return rows;
}

/** The process's TCP and UDP sockets, IPv4 and IPv6. */
export function inetSocketsOf(pid: number): InetSocket[] {
  const mine = socketInodes(pid);
  const all = (["tcp", "tcp6", "udp", "udp6"] as const).flatMap((p) => inetTable(pid, p));
  return all.filter((s) => s.inode !== 0 && mine.has(s.inode));
}
