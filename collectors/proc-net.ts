/**
 * The kernel's TCP socket tables, <procfs>/net/tcp and <procfs>/net/tcp6 (net/ipv4/tcp_ipv4.c
 * get_tcp4_sock, net/ipv6/tcp_ipv6.c get_tcp6_sock): a header line, then one line per socket of the
 * reader's network namespace:
 *
 *   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ...
 *    0: 0100007F:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 9661 ...
 *
 * An address is printed as the 32-bit words of the (network-order) address read as native integers
 * (`%08X`, one word for IPv4, four for IPv6): on a little-endian machine each word's bytes appear
 * reversed (0100007F is 127.0.0.1). The port is printed in host order (6D7C is 28028). `st` is the
 * TCP state (01 ESTABLISHED, 0A LISTEN), `uid` the socket's owner (the user that created it, or for
 * an accepted connection the listener's), `inode` the socket's inode (`socket:[inode]` in
 * /proc/<pid>/fd; 0 for a socket no file holds: not yet accepted, or orphaned).
 *
 * Parsed by hand, field by field: no regular expression, nothing that backtracks.
 */
import { endianness } from "node:os";

export const TCP_ESTABLISHED = 0x01;
export const TCP_LISTEN = 0x0a;

export interface TcpSocket {
  /** The local address as 32 lowercase hex digits (16 bytes, network order); IPv4 as ::ffff:a.b.c.d. */
  local: string;
  localPort: number;
  remote: string;
  remotePort: number;
  /** TCP state: TCP_ESTABLISHED, TCP_LISTEN, ... */
  state: number;
  uid: number;
  inode: number;
}

const V4_MAPPED = "00000000000000000000ffff";

function isHex(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

function isDecimal(s: string): boolean {
  if (s.length === 0 || s.length > 10) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** 8 hex digits of one word as printed, in network byte order. */
function word(hex: string, littleEndian: boolean): string {
  const w = hex.toLowerCase();
  return littleEndian ? w.slice(6, 8) + w.slice(4, 6) + w.slice(2, 4) + w.slice(0, 2) : w;
}

/** `ADDR:PORT` as the kernel prints it, or undefined. */
function endpoint(field: string, words: 1 | 4, littleEndian: boolean): { address: string; port: number } | undefined {
  const colon = field.indexOf(":");
  const hex = field.slice(0, colon);
  const port = field.slice(colon + 1);
  if (colon < 0 || hex.length !== words * 8 || !isHex(hex) || port.length !== 4 || !isHex(port)) return undefined;
  let address = "";
  for (let w = 0; w < words; w++) address += word(hex.slice(w * 8, w * 8 + 8), littleEndian);
  return { address: words === 1 ? V4_MAPPED + address : address, port: parseInt(port, 16) };
}

/** The whitespace-separated fields of a line (spaces and tabs). */
function fields(line: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= line.length; i++) {
    const c = i < line.length ? line.charCodeAt(i) : 32;
    const blank = c === 32 || c === 9 || c === 13;
    if (blank) {
      if (start >= 0) out.push(line.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  return out;
}

/**
 * The sockets of a tcp (`family` 4) or tcp6 (6) table. Lines that are not socket lines (the
 * header, anything malformed) are skipped. `littleEndian`: how the kernel that wrote it stores
 * words (this machine's, by default).
 */
export function parseProcNetTcp(text: string, family: 4 | 6, littleEndian = endianness() === "LE"): TcpSocket[] {
  const words = family === 4 ? 1 : 4;
  const out: TcpSocket[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const f = fields(text.slice(start, end));
    start = end + 1;
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...
    if (f.length < 10 || !(f[0] ?? "").endsWith(":")) continue;
    const local = endpoint(f[1] ?? "", words, littleEndian);
    const remote = endpoint(f[2] ?? "", words, littleEndian);
    const st = f[3] ?? "";
    const uid = f[7] ?? "";
    const inode = f[9] ?? "";
    if (local === undefined || remote === undefined || st.length !== 2 || !isHex(st) || !isDecimal(uid) || !isDecimal(inode)) continue;
    out.push({
      local: local.address,
      localPort: local.port,
      remote: remote.address,
      remotePort: remote.port,
      state: parseInt(st, 16),
      uid: Number(uid),
      inode: Number(inode),
    });
  }
  return out;
}

/**
 * `ADDR:PORT` as the kernel prints an endpoint in a tcp (`family` 4) or tcp6 (6) table; undefined
 * when the address has no such form (an IPv6 address in tcp).
 */
export function printedEndpoint(key: string, port: number, family: 4 | 6, littleEndian = endianness() === "LE"): string | undefined {
  if (key.length !== 32 || port < 0 || port > 65535) return undefined;
  if (family === 4 && !key.startsWith(V4_MAPPED)) return undefined;
  const hex = family === 4 ? key.slice(24) : key;
  let out = "";
  // word() reverses the bytes of a word on a little-endian machine, both ways.
  for (let w = 0; w < hex.length; w += 8) out += word(hex.slice(w, w + 8), littleEndian);
  return `${out.toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * The sockets of a table whose local end is (key, port): only the lines that hold its printed form
 * are parsed, so a node with tens of thousands of sockets costs one string search, not a parse of
 * each line.
 */
export function socketsAt(text: string, family: 4 | 6, key: string, port: number, littleEndian = endianness() === "LE"): TcpSocket[] {
  const needle = printedEndpoint(key, port, family, littleEndian);
  if (needle === undefined) return [];
  const out: TcpSocket[] = [];
  for (let at = text.indexOf(needle); at >= 0;) {
    const start = text.lastIndexOf("\n", at) + 1;
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    for (const s of parseProcNetTcp(text.slice(start, end), family, littleEndian)) if (s.local === key && s.localPort === port) out.push(s);
    at = end < text.length ? text.indexOf(needle, end) : -1;
  }
  return out;
}

function ipv4Bytes(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!isDecimal(p) || p.length > 3) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function hex2(n: number): string {
  return n.toString(16).padStart(2, "0");
}

/**
 * A textual IP address (as Node gives a socket's: `127.0.0.1`, `::1`, `::ffff:127.0.0.1`, with or
 * without brackets or a `%zone`) in the form TcpSocket uses: 32 hex digits, IPv4 mapped. undefined
 * when it is no IP address.
 */
export function addressKey(text: string): string | undefined {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const pct = s.indexOf("%");
  if (pct >= 0) s = s.slice(0, pct);
  if (!s.includes(":")) {
    const v4 = ipv4Bytes(s);
    return v4 === undefined ? undefined : V4_MAPPED + v4.map(hex2).join("");
  }
  // IPv6: at most one "::"; the last group may be a dotted IPv4 address (two groups).
  const dbl = s.indexOf("::");
  if (dbl >= 0 && s.indexOf("::", dbl + 1) >= 0) return undefined;
  const groupsOf = (part: string): string[] | undefined => {
    if (part === "") return [];
    const out: string[] = [];
    const list = part.split(":");
    for (let i = 0; i < list.length; i++) {
      const g = list[i] ?? "";
      if (i === list.length - 1 && g.includes(".")) {
        const v4 = ipv4Bytes(g);
        if (v4 === undefined) return undefined;
        out.push(hex2(v4[0] ?? 0) + hex2(v4[1] ?? 0), hex2(v4[2] ?? 0) + hex2(v4[3] ?? 0));
      } else {
        if (g.length === 0 || g.length > 4 || !isHex(g)) return undefined;
        out.push(g.toLowerCase().padStart(4, "0"));
      }
    }
    return out;
  };
  const head = groupsOf(dbl >= 0 ? s.slice(0, dbl) : s);
  const tail = dbl >= 0 ? groupsOf(s.slice(dbl + 2)) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (dbl >= 0 ? missing < 1 : missing !== 0) return undefined;
  return [...head, ...Array.from({ length: missing }, () => "0000"), ...tail].join("");
}

/** A key of addressKey() as text: dotted for IPv4 (mapped), else eight hex groups. */
export function addressText(key: string): string {
  if (key.startsWith(V4_MAPPED) && key.length === 32) {
    const b = key.slice(24);
    return [0, 2, 4, 6].map((i) => parseInt(b.slice(i, i + 2), 16)).join(".");
  }
  const groups: string[] = [];
  for (let i = 0; i < 32; i += 4) groups.push(parseInt(key.slice(i, i + 4), 16).toString(16));
  return groups.join(":");
}
