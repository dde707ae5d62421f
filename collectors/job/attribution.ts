/**
 * Pure: whose job each GPU and each NCCL rank belongs to, from what the sources said this poll.
 *
 * A GPU's jobs are the containers the kubelet gave it (pod-resources: namespace, pod, container) and
 * the jobs of the processes computing on it (their cgroup: pod UID, Slurm job and step). The two
 * name one pod when the GPU went to exactly one container and its processes show at most one pod
 * UID: then one series carries both. pod-resources gives no pod UID, so where several containers
 * share a GPU (time-slicing) or processes of several pods run on it, each is its own series.
 * A rank's job comes from its process's cgroup and from the containers its GPU (NCCL's busId) was
 * given, merged the same way; a rank has at most one job.
 */
import { canonicalBusId } from "../pci.js";
import type { CgroupJob } from "./cgroup.js";
import type { ComputeApp } from "./compute-apps.js";
import type { GpuIdentityReading, NcclRankProcess } from "./peers.js";
import type { PodDevice } from "./pod-resources.js";

/** The label values of a job; "" where unknown. */
export interface Job {
  namespace: string;
  pod: string;
  container: string;
  pod_uid: string;
  slurm_job: string;
  slurm_step: string;
}

export interface AttributionInput {
  /** Identity per dmon index (the gpu collector's). */
  gpus: ReadonlyMap<string, GpuIdentityReading>;
  /** pod-resources' devices ([] when it did not answer). */
  devices: readonly PodDevice[];
  /** Compute processes whose pids are the procfs root's ([] when none or not usable). */
  apps: readonly ComputeApp[];
  ranks: readonly NcclRankProcess[];
  /** The job in <procfs>/<pid>/cgroup; undefined for a bare process or an unreadable file. */
  cgroupOf(pid: number): CgroupJob | undefined;
}

export interface Attribution {
  gpuJobs: { gpu: string; job: Job }[];
  rankJobs: { commId: string; rank: string; job: Job }[];
  /** GPU processes and ranks whose job was not found. */
  unattributedProcesses: number;
  unattributedRanks: number;
  /** Device ids of GPUs (GPU-/MIG- UUIDs) in pod-resources that match no GPU identity here (MIG instances). */
  unmatchedDevices: number;
}

const EMPTY: Job = { namespace: "", pod: "", container: "", pod_uid: "", slurm_job: "", slurm_step: "" };

/** `GPU-<uuid>` or `MIG-<uuid>`, with a time-slicing replica suffix (`::3`) dropped; undefined for other devices. */
export function gpuDeviceId(id: string): string | undefined {
  const s = id.trim().toLowerCase();
  const base = s.includes("::") ? s.slice(0, s.indexOf("::")) : s;
  return base.startsWith("gpu-") || base.startsWith("mig-") ? base : undefined;
}

function fromCgroup(c: CgroupJob): Job {
  return { ...EMPTY, pod_uid: c.podUid ?? "", slurm_job: c.slurmJob ?? "", slurm_step: c.slurmStep ?? "" };
}

function fromDevice(d: PodDevice): Job {
  return { ...EMPTY, namespace: d.namespace, pod: d.pod, container: d.container };
}

const keyOf = (j: Job): string => JSON.stringify([j.namespace, j.pod, j.container, j.pod_uid, j.slurm_job, j.slurm_step]);

function unique(jobs: Iterable<Job>): Job[] {
  const m = new Map<string, Job>();
  for (const j of jobs) m.set(keyOf(j), j);
  return [...m.values()];
}

/** One GPU's containers (pod-resources) and its processes' cgroup jobs, merged where they surely name one pod. */
function mergeGpu(allocated: readonly Job[], processes: readonly Job[]): Job[] {
  const podUids = new Set(processes.filter((p) => p.pod_uid !== "").map((p) => p.pod_uid));
  const only = allocated.length === 1 ? allocated[0] : undefined;
  if (only !== undefined && podUids.size <= 1) {
    const uid = [...podUids][0] ?? "";
    // Processes of that pod (and their Slurm job, if the pod runs one) merge into the allocation.
    const merged = processes.filter((p) => p.pod_uid === uid && uid !== "").map((p) => ({ ...only, pod_uid: uid, slurm_job: p.slurm_job, slurm_step: p.slurm_step }));
    const rest = processes.filter((p) => p.pod_uid === "");
    return unique(merged.length > 0 ? [...merged, ...rest] : [only, ...rest]);
  }
  return unique([...allocated, ...processes]);
}

export function attribute(input: AttributionInput): Attribution {
  const byUuid = new Map<string, string>();
  const byBus = new Map<string, string>();
  for (const g of input.gpus.values()) {
    if (g.uuid) byUuid.set(g.uuid.toLowerCase(), g.index);
    if (g.pciBusId) byBus.set(canonicalBusId(g.pciBusId), g.index);
  }
  const gpuOf = (uuid: string | undefined, bus: string | undefined): string | undefined =>
    (uuid !== undefined ? byUuid.get(uuid.toLowerCase()) : undefined) ?? (bus !== undefined ? byBus.get(canonicalBusId(bus)) : undefined);

  let unmatchedDevices = 0;
  const allocated = new Map<string, Job[]>();
  for (const d of input.devices) {
    const id = gpuDeviceId(d.deviceId);
    if (id === undefined) continue;
    const gpu = byUuid.get(id);
    if (gpu === undefined) {
      unmatchedDevices++;
      continue;
    }
    const list = allocated.get(gpu) ?? [];
    list.push(fromDevice(d));
    allocated.set(gpu, list);
  }

  // Each process's cgroup is read once per poll.
  const cache = new Map<number, CgroupJob | undefined>();
  const cgroupOf = (pid: number): CgroupJob | undefined => {
    if (!cache.has(pid)) cache.set(pid, input.cgroupOf(pid));
    return cache.get(pid);
  };

  let unattributedProcesses = 0;
  const running = new Map<string, Job[]>();
  for (const a of input.apps) {
    const gpu = gpuOf(a.gpuUuid, a.pciBusId);
    const c = cgroupOf(a.pid);
    if (c === undefined) unattributedProcesses++;
    if (gpu === undefined || c === undefined) continue;
    const list = running.get(gpu) ?? [];
    list.push(fromCgroup(c));
    running.set(gpu, list);
  }

  const gpuJobs: Attribution["gpuJobs"] = [];
  for (const gpu of new Set([...allocated.keys(), ...running.keys()])) {
    for (const job of mergeGpu(unique(allocated.get(gpu) ?? []), unique(running.get(gpu) ?? []))) gpuJobs.push({ gpu, job });
  }

  let unattributedRanks = 0;
  const rankJobs: Attribution["rankJobs"] = [];
  for (const r of input.ranks) {
    const c = r.nodePid !== undefined ? cgroupOf(r.nodePid) : undefined;
    const gpu = r.pciBusId !== undefined ? byBus.get(canonicalBusId(r.pciBusId)) : undefined;
    const given = unique(gpu !== undefined ? (allocated.get(gpu) ?? []) : []);
    const own = c !== undefined ? [fromCgroup(c)] : [];
    const jobs = mergeGpu(given, own);
    // Several candidates (a shared GPU and no cgroup to tell): the cgroup's, else none.
    const job = jobs.length === 1 ? jobs[0] : own[0];
    if (job === undefined) {
      unattributedRanks++;
      continue;
    }
    rankJobs.push({ commId: r.commId, rank: String(r.rank), job });
  }
  return { gpuJobs, rankJobs, unattributedProcesses, unattributedRanks, unmatchedDevices };
}
