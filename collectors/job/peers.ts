/**
 * What the job collector reads of two peers, declared here so that nothing in collectors/job
 * imports them (collectors/index.ts lists job after both; its module hands them over):
 *  - the gpu collector: each GPU's dmon index, UUID and bus id (its --query-gpu identity);
 *  - the nccl collector: each rank the logs know and its process (its rankProcesses()).
 */
export interface GpuIdentityReading {
  /** nvidia-smi's index, the gpu label of every ringwatch_gpu_* series. */
  readonly index: string;
  readonly uuid?: string;
  /** In any of NVML's forms (collectors/pci.ts compares them). */
  readonly pciBusId?: string;
}

export interface GpuIdentities {
  identities(): ReadonlyMap<string, GpuIdentityReading>;
}

export interface NcclRankProcess {
  readonly commId: string;
  readonly rank: number;
  /** The pid the rank logged (its own PID namespace). */
  readonly pid: number;
  /** Its pid in <path.procfs>, once the nccl collector found the process there. */
  readonly nodePid: number | undefined;
  /** Its GPU's PCI bus id from NCCL's busId. */
  readonly pciBusId: string | undefined;
}

export interface NcclRanks {
  rankProcesses(): readonly NcclRankProcess[];
}

export function isGpuIdentities(c: object | undefined): c is GpuIdentities {
  return c !== undefined && typeof (c as Partial<GpuIdentities>).identities === "function";
}

export function isNcclRanks(c: object | undefined): c is NcclRanks {
  return c !== undefined && typeof (c as Partial<NcclRanks>).rankProcesses === "function";
}
