/**
 * Names for the PCI addresses the kernel prints: a GPU's index as nvidia-smi and dmon number it
 * (the gpu collector's identities when it runs, else the NVIDIA GPUs of sysfs in bus order, which
 * is nvidia-smi's order), and an HCA's RDMA device name (`mlx5_0`, from
 * <sysfs>/class/infiniband/<dev>/device). A name once learnt is kept, so a GPU that fell off the
 * bus keeps its index.
 */
import { readdir, readFile, readlink } from "node:fs/promises";
import { basename, join } from "node:path";
import { canonicalBusId, pciSlotKey } from "../pci.js";

/** What the kmsg collector needs from the gpu collector (its identities()), declared here. */
export interface GpuIndexReadings {
  identities(): ReadonlyMap<string, { readonly index: string; readonly pciBusId?: string }>;
}

export function isGpuIndexReadings(c: object | undefined): c is GpuIndexReadings {
  return c !== undefined && typeof (c as Partial<GpuIndexReadings>).identities === "function";
}

/** How long a sysfs listing is trusted before it is read again. */
const SYSFS_TTL_MS = 60_000;

export class DeviceNames {
  private readonly gpuBySlot = new Map<string, string>();
  private readonly hcaBySlot = new Map<string, string>();
  private sysfsReadMs = -Infinity;

  constructor(
    private readonly sysfsRoot: string,
    private readonly gpu: GpuIndexReadings | undefined,
    private readonly now: () => number,
  ) {}

  /** Re-reads the sources when stale (call before naming a batch of events). */
  async refresh(): Promise<void> {
    this.learnFromGpuCollector();
    if (this.now() - this.sysfsReadMs < SYSFS_TTL_MS) return;
    this.sysfsReadMs = this.now();
    const [gpus, hcas] = await Promise.all([this.sysfsGpus(), this.sysfsHcas()]);
    if (this.gpu === undefined || this.gpuBySlot.size === 0) {
      gpus.forEach((slot, i) => {
        if (!this.gpuBySlot.has(slot)) this.gpuBySlot.set(slot, String(i));
      });
    }
    for (const [slot, name] of hcas) this.hcaBySlot.set(slot, name);
  }

  /**
   * Whether GPU names can be given now: no gpu collector, or it has read its GPUs. At start the
   * gpu collector needs a moment for its first --query-gpu; events wait for it (gpu-event-gate.ts).
   */
  gpusKnown(): boolean {
    return this.gpu === undefined || this.gpu.identities().size > 0;
  }

  /** The GPU index for an address, or the address itself (`0000:3b:00`) when none is known. */
  gpuName(pci: string): string {
    this.learnFromGpuCollector();
    return this.gpuBySlot.get(pciSlotKey(pci)) ?? pci;
  }

  /** The RDMA device at an address (functions differ per port: the full address is kept). */
  hcaName(pci: string): string | undefined {
    return this.hcaBySlot.get(canonicalBusId(pci));
  }

  private learnFromGpuCollector(): void {
    if (this.gpu === undefined) return;
    for (const id of this.gpu.identities().values()) {
      if (id.pciBusId !== undefined) this.gpuBySlot.set(pciSlotKey(id.pciBusId), id.index);
    }
  }

  /** Slots of the display-class devices bound to the nvidia driver, in bus order. */
  private async sysfsGpus(): Promise<string[]> {
    const dir = join(this.sysfsRoot, "bus/pci/drivers/nvidia");
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return [];
    }
    const gpus: string[] = [];
    for (const n of names.filter((x) => /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i.test(x)).sort()) {
      const cls = await readFile(join(dir, n, "class"), "utf8").catch(() => "");
      if (cls.trim().startsWith("0x03")) gpus.push(pciSlotKey(n));
    }
    return gpus;
  }

  private async sysfsHcas(): Promise<Map<string, string>> {
    const dir = join(this.sysfsRoot, "class/infiniband");
    const out = new Map<string, string>();
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return out;
    }
    for (const n of names) {
      const target = await readlink(join(dir, n, "device")).catch(() => undefined);
      if (target !== undefined) out.set(canonicalBusId(basename(target)), n);
    }
    return out;
  }
}
