/**
 * The node as the detectors see it: is a rank's process alive (process-identity.ts: by NSpid and
 * start time, so container pids are checked too), and which GPU does a rank drive and what does it read (from the gpu collector).
 */
import { hostname, networkInterfaces } from "node:os";
import { canonicalBusId } from "../pci.js";
import type { GpuReadings } from "./verdict/gpu-readings.js";
import { ncclBusIdToPci } from "./logs/parse/bus-id.js";
import { classifyGpu, type GpuReading } from "./verdict/gpu-signature.js";
import type { NodeView } from "./logs/detect/verdict.js";
import { ProcessIdentity } from "./process-identity.js";
import type { RasNode } from "./ras/verdict.js";
import type { ProcessState, RankState } from "./logs/state/model.js";

/** The host name as NCCL prints it (%h and the line header): up to the first dot. */
export function shortHostname(name = hostname()): string {
  const dot = name.indexOf(".");
  return dot < 0 ? name : name.slice(0, dot);
}

/** The latest fresh reading of GPU `index` (nvidia-smi's), with its power limit; undefined without one. */
function readingOf(gpu: GpuReadings, index: string): (GpuReading & { gpu: string }) | undefined {
  const s = gpu.latestSamples().get(index);
  if (!s) return undefined;
  return { gpu: index, sm: s.values.sm, powerW: s.values.pwr, powerLimitW: gpu.identities().get(index)?.powerLimitWatts, fbUsedMiB: s.values.fb };
}

export interface NodeViewOptions {
  procfsRoot: string;
  checkPids: boolean;
  gpu?: GpuReadings;
  host?: string;
  now?: () => number;
}

export function createNodeView(o: NodeViewOptions): NodeView {
  const host = o.host ?? shortHostname();
  const identity = new ProcessIdentity(o.procfsRoot, host, o.now);
  return {
    alive(p: ProcessState): boolean | undefined {
      return o.checkPids ? identity.alive(p) : undefined;
    },
    nodePid: (p: ProcessState) => identity.nodePid(p.key),
    gpuFor(r: RankState): (GpuReading & { gpu: string }) | undefined {
      if (!o.gpu) return undefined;
      const ids = o.gpu.identities();
      let index: string | undefined;
      if (r.nvmlDev !== undefined) index = String(r.nvmlDev);
      else if (r.busId !== undefined) {
        const want = ncclBusIdToPci(r.busId);
        for (const g of ids.values()) if (g.pciBusId && canonicalBusId(g.pciBusId) === want) index = g.index;
      }
      if (index === undefined) return undefined;
      return readingOf(o.gpu, index);
    },
  };
}

/** How long each GPU has read `spin` without a break, from the readings of each evaluation. */
export class GpuSpinClock {
  private readonly since = new Map<string, number>();

  constructor(private readonly gpu: GpuReadings | undefined) {}

  update(now: number): void {
    if (!this.gpu) return;
    const ids = this.gpu.identities();
    const samples = this.gpu.latestSamples();
    for (const [index, s] of samples) {
      const sig = classifyGpu({ sm: s.values.sm, powerW: s.values.pwr, powerLimitW: ids.get(index)?.powerLimitWatts });
      if (sig === "spin") {
        if (!this.since.has(index)) this.since.set(index, now);
      } else this.since.delete(index);
    }
    // A GPU without a fresh sample has no known state.
    for (const index of [...this.since.keys()]) if (!samples.has(index)) this.since.delete(index);
  }

  heldMs(index: string, now: number): number {
    const t = this.since.get(index);
    return t === undefined ? 0 : now - t;
  }
}

/** An address as RAS prints a node (numeric, IPv6 without brackets), in one form to compare. */
export function normalAddress(a: string): string {
  let s = a.trim().toLowerCase();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const pct = s.indexOf("%");
  if (pct >= 0) s = s.slice(0, pct);
  if (s.startsWith("::ffff:") && s.includes(".")) s = s.slice(7);
  return s;
}

export function isLoopbackHost(host: string): boolean {
  const h = normalAddress(host);
  return h === "localhost" || h === "::1" || h.startsWith("127.");
}

/** This node's addresses as listed (--collector.nccl.node-address). */
export function addressIn(list: readonly string[]): (host: string) => boolean {
  const set = new Set(list.map(normalAddress));
  return (host) => set.has(normalAddress(host));
}

/** This node's addresses (every interface), refreshed at most once a minute. */
export function localAddresses(list: () => string[] = interfaceAddresses, now: () => number = Date.now): (host: string) => boolean {
  let at = -Infinity;
  let set = new Set<string>();
  return (host) => {
    const t = now();
    if (t - at >= 60_000) {
      set = new Set(list().map(normalAddress));
      at = t;
    }
    return set.has(normalAddress(host));
  };
}

function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const addrs of Object.values(networkInterfaces())) for (const a of addrs ?? []) out.push(a.address);
  return out;
}

export interface RasNodeOptions {
  procfsRoot: string;
  checkPids: boolean;
  gpu?: GpuReadings;
  spin: GpuSpinClock;
  rasHost: string;
  loggedHere: (commId: string) => boolean | undefined;
  isLocal?: (host: string) => boolean;
  host?: string;
  now: () => number;
}

/** The node as the RAS verdicts see it (ras/verdict.ts). */
export function createRasNode(o: RasNodeOptions): RasNode {
  const host = o.host ?? shortHostname();
  const identity = new ProcessIdentity(o.procfsRoot, host, o.now);
  const none = new Set<string>();
  return {
    isLocal: o.isLocal ?? localAddresses(),
    alive: (pid) => (o.checkPids ? identity.alive({ key: `ras:${pid}`, host, pid, sources: none }) : undefined),
    gpu: (nvmlDev) => (o.gpu ? readingOf(o.gpu, String(nvmlDev)) : undefined),
    spinHeldMs: (gpu) => o.spin.heldMs(gpu, o.now()),
    loggedHere: o.loggedHere,
    rasIsLocal: isLoopbackHost(o.rasHost),
  };
}
