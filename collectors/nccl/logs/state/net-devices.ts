/**
 * Which HCA ports a rank's NCCL uses: the devices of its process's `NET/IB : Using [0]mlx5_0:1/IB
 * [1]mlx5_1:1/IB` line (2.3: one `NET/IB: [0] mlx5_3:1/IB` line each), narrowed to the ones its
 * channel lines go through (`Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0`: the /0 indexes that
 * list). A channel line's header names the CUDA device of the thread that printed it, which is the
 * rank's GPU: so a process driving several GPUs gets each rank's own ports. Bounded per process.
 */
import type { NetEvent } from "../parse/types.js";
import type { ProcessState, RankState } from "./model.js";

/** At most this many NET devices per process, GPUs per process and devices per GPU are kept. */
export const MAX_NET_DEVICES = 32;

export interface HcaPort {
  /** The HCA as sysfs and ringwatch_infiniband_* name it (`mlx5_0`). */
  device: string;
  port: number;
}

/** A `NET/IB : Using ...` line (the list replaces an earlier one) or a 2.3 per-HCA line (added). */
export function noteNetList(proc: ProcessState, ev: NetEvent): void {
  if (ev.net !== "IB" || ev.devices === undefined) return;
  if (ev.what === "using") proc.ibDevices = [];
  else if (ev.what !== "device") return;
  for (const d of ev.devices) {
    if (d.port === undefined || proc.ibDevices.length >= MAX_NET_DEVICES) continue;
    const at = proc.ibDevices.findIndex((x) => x.index === d.index);
    const entry = { index: d.index, device: d.name, port: d.port };
    if (at >= 0) proc.ibDevices[at] = entry;
    else proc.ibDevices.push(entry);
  }
}

/** A channel line through NET device `netDev` (an index into the Using list), printed by a thread on `cudaDev`. */
export function noteNetUse(proc: ProcessState, cudaDev: number | undefined, netDev: number): void {
  const key = cudaDev ?? -1;
  let used = proc.netDevUse.get(key);
  if (used === undefined) {
    if (proc.netDevUse.size >= MAX_NET_DEVICES) return;
    proc.netDevUse.set(key, (used = new Set()));
  }
  if (used.size < MAX_NET_DEVICES) used.add(netDev);
}

/**
 * Whether this NCCL connects its channels at a communicator's first collective (NCCL_RUNTIME_CONNECT,
 * on by default from 2.22) rather than during init: its channel lines come later, or never for a
 * communicator that crosses no network.
 */
export function connectsAtRuntime(version: string | undefined): boolean {
  const m = version === undefined ? null : /^(\d+)\.(\d+)/.exec(version);
  if (m === null) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 2 || (major === 2 && minor >= 22);
}

/**
 * The HCA ports a rank uses: those its GPU's channel lines went through. Else (no channel line over
 * the network, or one naming no listed device) every device its process listed, where NCCL
 * connects during init; none where it connects at runtime (2.22+): the channel lines that name them
 * are still to come, and a series per listed port that goes when they come would churn at every job
 * start. Sorted.
 */
export function rankHcaPorts(proc: ProcessState, rank: RankState): HcaPort[] {
  if (proc.ibDevices.length === 0) return [];
  const used = new Set<number>();
  const add = (s: Set<number> | undefined): void => s?.forEach((i) => used.add(i));
  if (rank.cudaDev !== undefined) add(proc.netDevUse.get(rank.cudaDev));
  // Lines without a header device, or a rank whose device the Init line did not print.
  if (used.size === 0 && (rank.cudaDev === undefined || proc.netDevUse.size === 1)) add(proc.netDevUse.get(-1));
  let picked = proc.ibDevices.filter((d) => used.has(d.index));
  if (picked.length === 0) {
    if (connectsAtRuntime(proc.version)) return [];
    picked = proc.ibDevices;
  }
  const seen = new Set<string>();
  const out: HcaPort[] = [];
  for (const d of picked) {
    const k = `${d.device}:${d.port}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ device: d.device, port: d.port });
  }
  return out.sort((a, b) => (a.device === b.device ? a.port - b.port : a.device < b.device ? -1 : 1));
}
