/**
 * Network selection and GPUDirect RDMA lines.
 *
 *   NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>    (also /IB/SHARP)
 *   NET/IB : No device found.                 NET/IB: [0] mlx5_3:1/IB   (2.3, one line per HCA)
 *   NET/Socket : Using [0]eth0:10.2.3.32<0> [1]veth0:fe80::1%veth0<0>
 *   Using network IB | Socket | IBext_v8      Using internal Network IB (2.3)
 *   CUDA Dev 0[3], Socket NIC distance :  SYS (2.4-2.6: the network selected, and the GPU's distance to its NIC)
 *   Bootstrap : Using ib0:10.159.0.34<0>      NET : Using interface enp1s0f0:100.97.16.164<0> (2.3)
 *   Failed to open libibverbs.so[.1]          (INFO from 2.19; WARN before)
 *   NET/IB : GPU Direct RDMA Enabled|Disabled for HCA 0 'mlx5_0' [(no module)]
 *   GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7), read 0 [mode Default]
 *   GPU Direct RDMA Disabled for GPU 18000 / HCA 0 (distance 5 > 4)       (2.7-2.23 busId; 2.24-2.28 the rank)
 *   NET/IB : GPU Direct RDMA Disabled for GPU 0[0] / HCA 0 'mlx5_0' (no module or not supported by GPU)   (2.4-2.6)
 *   GPU Direct RDMA Disabled for GPU/0-18000 (rank 3) - NET/0-0 (distance 7 > 4)   (2.29+, ` using PXN via GPU/..., ` before distance)
 *   NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'  (2.19+: any net's name, NET/IBext_v8, NET/AWS Libfabric, ...)
 *   NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR   (aws-ofi-nccl INFO; its WARN `NET/OFI GDR disabled
 *     on GDR-supported instance type p4d.24xlarge` stays a WARN, with gdrDisabled set: see pluginGdrOff)
 */
import type { GdrEvent, NetDevice, NetEvent } from "./types.js";
import { find, isDigit, isSpace, pos, readInt, skipSpaces, tokenEnd } from "./scan.js";

/** `[0]mlx5_2:1/IB/SHARP` or `[0] mlx5_3:1/IB` or `[0]eth0:10.2.3.32<0>` at i; undefined if not a device. */
function readDevice(s: string, i: number, end: number, socket: boolean): NetDevice | undefined {
  const index = readInt(s, i + 1, end);
  if (index === undefined || s.charCodeAt(pos) !== 93) return undefined;
  const ns = skipSpaces(s, pos + 1, end);
  const te = tokenEnd(s, ns, end);
  const colon = s.indexOf(":", ns);
  if (colon < 0 || colon >= te) return undefined;
  const dev: NetDevice = { index, name: s.slice(ns, colon) };
  if (socket) {
    const lt = s.lastIndexOf("<", te);
    dev.addr = s.slice(colon + 1, lt > colon ? lt : te);
    return dev;
  }
  const port = readInt(s, colon + 1, te);
  if (port !== undefined) dev.port = port;
  let k = pos;
  while (k < te && s.charCodeAt(k) === 47 /* / */) {
    const seg = s.indexOf("/", k + 1);
    const se = seg < 0 || seg > te ? te : seg;
    const word = s.slice(k + 1, se);
    if (word === "SHARP") dev.sharp = true;
    else if (dev.linkLayer === undefined) dev.linkLayer = word;
    k = se;
  }
  return dev;
}

/** Device list `[0]a [1]b [RO]; OOB if:addr<0>` from i; fills ev. */
function readDeviceList(s: string, i: number, end: number, ev: NetEvent, socket: boolean): void {
  const devices: NetDevice[] = [];
  while (i < end) {
    i = skipSpaces(s, i, end);
    if (i >= end) break;
    const c = s.charCodeAt(i);
    if (c === 91 /* [ */) {
      if (s.startsWith("[RO]", i)) {
        ev.relaxedOrdering = true;
        i += 4;
        continue;
      }
      const d = readDevice(s, i, end, socket);
      if (d === undefined) break;
      devices.push(d);
      i = tokenEnd(s, i + 1, end);
      continue;
    }
    if (c === 59 /* ; */) {
      i++;
      continue;
    }
    if (s.startsWith("OOB ", i)) {
      const os = skipSpaces(s, i + 4, end);
      ev.oob = s.slice(os, tokenEnd(s, os, end));
    }
    break;
  }
  ev.devices = devices;
}

/** Messages starting with `NET` (NET/IB, NET/Socket, NET/Plugin, NET : Using interface). */
export function parseNetMsg(s: string, m: number, end: number): NetEvent | GdrEvent | undefined {
  // NET/IB's own (`NET/IB : `, `NET/IB: `); a plugin's `NET/IBext_v8 : ` is read below as any net's.
  if (s.startsWith("NET/IB : ", m) || s.startsWith("NET/IB: ", m)) {
    const i = m + (s.charCodeAt(m + 6) === 32 ? 9 : 8);
    if (s.startsWith("Using [", i)) {
      const ev: NetEvent = { kind: "net", net: "IB", what: "using" };
      readDeviceList(s, i + 6, end, ev, false);
      return ev;
    }
    if (s.startsWith("No device found", i)) return { kind: "net", net: "IB", what: "no_device" };
    if (s.startsWith("GPU Direct RDMA ", i)) return parseGdr(s, i, end);
    if (s.charCodeAt(i) === 91) {
      const d = readDevice(s, i, end, false);
      if (d !== undefined) return { kind: "net", net: "IB", what: "device", devices: [d] };
    }
    return undefined;
  }
  if (s.startsWith("NET/Socket : Using ", m)) {
    const ev: NetEvent = { kind: "net", net: "Socket", what: "using" };
    readDeviceList(s, m + 19, end, ev, true);
    return ev;
  }
  if (s.startsWith("NET : Using interface ", m)) {
    return bootstrap(s, m + 22, end);
  }
  // `NET/<any net> : GPU Direct RDMA ...` (the name may hold blanks: `NET/AWS Libfabric`). Not NET/Socket's:
  // TCP sockets never read GPU memory, and 2.19+ says so of every socket interface (nccl-pasted 439).
  const g = find(s, " GPU Direct RDMA ", m, Math.min(end, m + 64));
  if (g >= 0) return s.startsWith("NET/Socket", m) ? undefined : parseGdr(s, g + 1, end);
  if (pluginGdrOff(s, m, end)) return { kind: "gdr", enabled: false, scope: "net", reason: s.slice(m, end) };
  return undefined;
}

/**
 * A net plugin saying it turned GPUDirect RDMA off (aws-ofi-nccl: INFO `NET/OFI Could not disable
 * CUDA API usage for HMEM, disabling GDR`, WARN `NET/OFI GDR disabled on GDR-supported instance type %s`).
 */
export function pluginGdrOff(s: string, m: number, end: number): boolean {
  if (!s.startsWith("NET/", m)) return false;
  return find(s, "disabling GDR", m, end) >= 0 || find(s, "GDR disabled", m, end) >= 0;
}

/** `Bootstrap : Using ib0:10.0.0.1<0>` / `Bootstrap: Using [0]ens192f1:10.150.178.134<0>` */
export function parseBootstrap(s: string, m: number, end: number): NetEvent | undefined {
  const k = find(s, "Using ", m, Math.min(end, m + 20));
  if (k < 0) return undefined;
  return bootstrap(s, k + 6, end);
}

function bootstrap(s: string, i: number, end: number): NetEvent {
  const ev: NetEvent = { kind: "net", net: "Socket", what: "bootstrap" };
  if (s.charCodeAt(i) === 91) {
    readDeviceList(s, i, end, ev, true);
  } else {
    const te = tokenEnd(s, i, end);
    const colon = s.indexOf(":", i);
    const lt = s.lastIndexOf("<", te);
    if (colon > i && colon < te) {
      ev.devices = [{ index: 0, name: s.slice(i, colon), addr: s.slice(colon + 1, lt > colon ? lt : te) }];
    }
  }
  return ev;
}

/** `Using network IBext_v8` / `Using internal Network IB` */
export function parseUsingNetwork(s: string, m: number, end: number): NetEvent | undefined {
  let i: number;
  if (s.startsWith("Using network ", m)) i = m + 14;
  else if (s.startsWith("Using internal Network ", m)) i = m + 23;
  else return undefined;
  const plugin = s.slice(i, tokenEnd(s, i, end));
  const net = plugin.startsWith("IB") ? "IB" : plugin.startsWith("Socket") ? "Socket" : plugin;
  return { kind: "net", net, what: "selected", plugin };
}

/**
 * NCCL 2.4-2.6's `CUDA Dev 0[3], Socket NIC distance :  SYS` (`IB`, `AWS Libfabric`): the network it
 * selected, named as `Using network` names it in later releases.
 */
export function parseNicDistance(s: string, m: number, end: number): NetEvent | undefined {
  const c = find(s, ", ", m + 9, end);
  const d = c < 0 ? -1 : find(s, " NIC distance", c + 2, end);
  if (d < 0 || d - c > 40) return undefined;
  const plugin = s.slice(c + 2, d);
  if (plugin.length === 0) return undefined;
  const net = plugin.startsWith("IB") ? "IB" : plugin.startsWith("Socket") ? "Socket" : plugin;
  return { kind: "net", net, what: "selected", plugin };
}

/** `Failed to open libibverbs.so[.1]` as INFO (2.19+): IB unavailable. */
export function parseLibibverbs(s: string, m: number): NetEvent | undefined {
  return s.startsWith("Failed to open libibverbs", m) ? { kind: "net", net: "IB", what: "no_device", reason: "libibverbs missing" } : undefined;
}

/** GPU Direct RDMA line; i points at "GPU Direct RDMA ". */
export function parseGdr(s: string, i: number, end: number): GdrEvent | undefined {
  let k = i + 16;
  const enabled = s.startsWith("Enabled for ", k);
  if (enabled) k += 12;
  else if (s.startsWith("Disabled for ", k)) k += 13;
  else return undefined;
  if (s.startsWith("HCA ", k)) {
    const ev: GdrEvent = { kind: "gdr", enabled, scope: "hca" };
    const hca = readInt(s, k + 4, end);
    if (hca !== undefined) ev.hca = hca;
    const q1 = s.indexOf("'", pos);
    const q2 = q1 < 0 ? -1 : s.indexOf("'", q1 + 1);
    if (q1 >= 0 && q2 > q1 && q2 < end) ev.hcaName = s.slice(q1 + 1, q2);
    const lp = find(s, "(", q2 > 0 ? q2 : pos, end);
    const rp = lp < 0 ? -1 : find(s, ")", lp, end);
    if (lp >= 0 && rp > lp) ev.reason = s.slice(lp + 1, rp);
    return ev;
  }
  if (!s.startsWith("GPU ", k) && !s.startsWith("GPU/", k)) return undefined;
  const ev: GdrEvent = { kind: "gdr", enabled, scope: "gpu" };
  const gs = k + 4;
  const ge = tokenEnd(s, gs, end);
  ev.gpu = s.slice(gs, ge);
  const rank = s.startsWith(" (rank ", ge) ? readInt(s, ge + 7, end) : undefined;
  if (rank !== undefined) ev.rank = rank;
  const hk = find(s, "HCA ", ge, end);
  if (hk >= 0) {
    const hca = readInt(s, hk + 4, end);
    if (hca !== undefined) ev.hca = hca;
    // 2.3-2.4: the HCA by name (`/ HCA mlx4_0 (not supported by GPU)`).
    else if (tokenEnd(s, hk + 4, end) > hk + 4) ev.hcaName = s.slice(hk + 4, tokenEnd(s, hk + 4, end));
  }
  const dk = find(s, "distance ", ge, end);
  if (dk >= 0) {
    const d = readInt(s, dk + 9, end);
    if (d !== undefined) ev.distance = d;
    let j = skipSpaces(s, pos, end);
    while (j < end && !isDigit(s.charCodeAt(j)) && !isSpace(s.charCodeAt(j))) j++;
    const lim = readInt(s, skipSpaces(s, j, end), end);
    if (lim !== undefined) ev.limit = lim;
  }
  // No distance: the reason in parentheses (2.3-2.4 `(not supported by GPU)`), to the line's end where a paste cut it.
  if (ev.distance === undefined) {
    const lp = find(s, "(", ge, end);
    const rp = lp < 0 ? -1 : find(s, ")", lp, end);
    if (lp >= 0 && !s.startsWith("(rank ", lp)) ev.reason = s.slice(lp + 1, rp > lp ? rp : end).trim();
  }
  const rk = find(s, "read ", ge, end);
  if (rk >= 0) {
    const r = readInt(s, rk + 5, end);
    if (r !== undefined) ev.read = r !== 0;
  }
  return ev;
}
