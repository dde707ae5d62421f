/**
 * The node as the detectors see it: is a rank's process alive (process-identity.ts: by NSpid and
 * start time, so container pids are checked too), and which GPU does a rank drive and what does it read (from the gpu collector).
 */
import { hostname } from "node:os";
import { canonicalBusId } from "../pci.js";
import type { GpuReadings } from "./detect/gpu-readings.js";
import type { GpuReading } from "./detect/gpu-signature.js";
import type { NodeView } from "./detect/verdict.js";
import { ProcessIdentity } from "./process-identity.js";
import type { ProcessState, RankState } from "./state/model.js";

/** NCCL prints busId as the hex of domain:bus:device.function run together (`c8000` = 0000:c8:00.0). */
export function ncclBusIdToPci(busId: string): string | undefined {
  const s = busId.trim().toLowerCase().replace(/^0x/, "");
  if (!/^[0-9a-f]{5,}$/.test(s)) return undefined;
  const fn = s.slice(-1);
  const dev = s.slice(-3, -1);
  const bus = s.slice(-5, -3);
  const domain = s.slice(0, -5) || "0";
  return canonicalBusId(`${domain}:${bus}:${dev}.${fn}`);
}

/** The host name as NCCL prints it (%h and the line header): up to the first dot. */
export function shortHostname(name = hostname()): string {
  const dot = name.indexOf(".");
  return dot < 0 ? name : name.slice(0, dot);
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
      const s = o.gpu.latestSamples().get(index);
      if (!s) return undefined;
      return { gpu: index, sm: s.values.sm, powerW: s.values.pwr, powerLimitW: ids.get(index)?.powerLimitWatts, fbUsedMiB: s.values.fb };
    },
  };
}
