/**
 * What the hang detector needs to know of this node's GPUs, declared here so that whoever reads
 * them can supply it: the gpu collector does (its latestSamples() and identities()), handed over by
 * the nccl module when both run. Nothing in collectors/nccl imports collectors/gpu.
 */
export interface GpuIdentityReading {
  /** nvidia-smi's index, the numbering NCCL's nvmlDev uses. */
  readonly index: string;
  /** PCI bus id in any of NVML's forms (collectors/pci.ts compares them). */
  readonly pciBusId?: string;
  /** Enforced power limit, watts. */
  readonly powerLimitWatts?: number;
}

export interface GpuSampleReading {
  /** dmon's values: sm (%), pwr (W), fb (MiB). */
  readonly values: { readonly sm?: number; readonly pwr?: number; readonly fb?: number };
}

export interface GpuReadings {
  /** Latest fresh sample per GPU index; a GPU without a recent one is absent. */
  latestSamples(): ReadonlyMap<string, GpuSampleReading>;
  /** Identity per GPU index. */
  identities(): ReadonlyMap<string, GpuIdentityReading>;
}

/** A collector that offers GPU readings (the gpu collector), told apart at run time. */
export function isGpuReadings(c: object | undefined): c is GpuReadings {
  return c !== undefined && typeof (c as Partial<GpuReadings>).latestSamples === "function" && typeof (c as Partial<GpuReadings>).identities === "function";
}
