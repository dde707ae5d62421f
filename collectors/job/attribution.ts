/**
 * Pure: whose job each GPU and each NCCL rank process belongs to, from what the sources said this poll.
 *
 * A GPU's jobs are the containers the kubelet gave it (pod-resources: namespace, pod, container) and
 * the jobs of the processes computing on it (their cgroup: pod UID, Slurm job and step). The two
 * name one pod when the GPU went to one container only and its processes show at most one pod
 * UID: then one series carries both. pod-resources gives no pod UID, so where several containers
 * share a GPU (time-slicing, MIG) or processes of several pods run on it, each is its own series.
 * A container given a MIG device is on that device's GPU, with its GPU instance and profile (mig.ts);
 * processes are on the whole GPU (nvidia-smi names no instance for them).
 * A job is a property of a process, not of a rank: the nccl collector's ranks are grouped into their
 * processes (the pid the rank logged and its pid on the node), and a process's job comes from its
 * cgroup and from the containers its ranks' GPUs (NCCL's busId) were given, merged the same way; a
 * process has at most one job, however many communicators it is in.
 */
import { canonicalBusId } from "../pci.js";
import type { CgroupJob } from "./cgroup.js";
import type { ComputeApp } from "./compute-apps.js";
import { oldFormMig, type MigDevice } from "./mig.js";
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
  /** MIG devices by lowercased UUID (mig.ts; empty when nvidia-smi was not asked or did not answer). */
  mig: ReadonlyMap<string, MigDevice>;
  /** Compute processes whose pids are the procfs root's ([] when none or not usable). */
  apps: readonly ComputeApp[];
  ranks: readonly NcclRankProcess[];
  /** The job in <procfs>/<pid>/cgroup; undefined for a bare process or an unreadable file. */
  cgroupOf(pid: number): CgroupJob | undefined;
}

/** A job on a GPU: on the whole GPU (gpuInstance and migProfile "") or on one of its MIG devices. */
export interface GpuJob {
  gpu: string;
  /** The MIG GPU instance id; "" for a whole GPU, and where nvidia-smi did not say. */
  gpuInstance: string;
  /** The MIG device's profile (`1g.10gb`); "" for a whole GPU, and where nvidia-smi did not say. */
  migProfile: string;
  job: Job;
}

/** The job of a process that runs NCCL ranks on this node. */
export interface RankProcessJob {
  /** The pid the process logged (its own PID namespace's), as ringwatch_nccl_rank_info's pid label. */
  pid: string;
  /** Its pid on the node (--path.procfs), as ringwatch_nccl_rank_info's host_pid label; "" until the nccl collector found it there. */
  hostPid: string;
  job: Job;
}

export interface Attribution {
  gpuJobs: GpuJob[];
  /** One per NCCL rank process whose job was found (two processes of one logged pid and one job, not found on the node: one entry). */
  rankProcessJobs: RankProcessJob[];
  /** GPU compute processes whose job was not found. */
  unattributedProcesses: number;
  /** NCCL rank processes (not ranks) whose job was not found. */
  unattributedRankProcesses: number;
  /** Device ids of GPUs (GPU-/MIG- UUIDs) in pod-resources that match no GPU identity here, directly or through their MIG device's GPU. */
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

/** A job where it runs on its GPU: the GpuJob without the GPU. */
type Placed = Omit<GpuJob, "gpu">;

const WHOLE = { gpuInstance: "", migProfile: "" } as const;

function uniquePlaced(xs: Iterable<Placed>): Placed[] {
  const m = new Map<string, Placed>();
  for (const x of xs) m.set(JSON.stringify([keyOf(x.job), x.gpuInstance, x.migProfile]), x);
  return [...m.values()];
}

/**
 * One GPU's allocations (pod-resources, each on the whole GPU or one MIG device) and its processes'
 * cgroup jobs, merged where they surely name one pod: every allocation is of one container.
 */
function mergeGpu(allocated: readonly Placed[], processes: readonly Job[]): Placed[] {
  const podUids = new Set(processes.filter((p) => p.pod_uid !== "").map((p) => p.pod_uid));
  const containers = new Set(allocated.map((a) => keyOf(a.job)));
  if (allocated.length > 0 && containers.size === 1 && podUids.size <= 1) {
    const uid = [...podUids][0] ?? "";
    // Processes of that pod (and their Slurm job, if the pod runs one) merge into its allocations.
    const merged = processes
      .filter((p) => p.pod_uid === uid && uid !== "")
      .flatMap((p) => allocated.map((a) => ({ ...a, job: { ...a.job, pod_uid: uid, slurm_job: p.slurm_job, slurm_step: p.slurm_step } })));
    const rest = processes.filter((p) => p.pod_uid === "").map((job) => ({ job, ...WHOLE }));
    return uniquePlaced(merged.length > 0 ? [...merged, ...rest] : [...allocated, ...rest]);
  }
  return uniquePlaced([...allocated, ...processes.map((job) => ({ job, ...WHOLE }))]);
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

  /** The GPU a device id names, and the MIG device on it: a GPU's UUID, a MIG device nvidia-smi listed, or an old-form MIG id. */
  const placeOf = (id: string): { gpu: string; gpuInstance: string; migProfile: string } | undefined => {
    if (id.startsWith("gpu-")) {
      const gpu = byUuid.get(id);
      return gpu !== undefined ? { gpu, ...WHOLE } : undefined;
    }
    const listed = input.mig.get(id);
    const old = oldFormMig(id);
    const parent = listed?.gpuUuid ?? old?.gpuUuid;
    const gpu = parent !== undefined ? byUuid.get(parent) : undefined;
    if (gpu === undefined) return undefined;
    return { gpu, gpuInstance: listed?.gpuInstance ?? old?.gpuInstance ?? "", migProfile: listed?.profile ?? "" };
  };

  let unmatchedDevices = 0;
  const allocated = new Map<string, Placed[]>();
  for (const d of input.devices) {
    const id = gpuDeviceId(d.deviceId);
    if (id === undefined) continue;
    const place = placeOf(id);
    if (place === undefined) {
      unmatchedDevices++;
      continue;
    }
    const list = allocated.get(place.gpu) ?? [];
    list.push({ gpuInstance: place.gpuInstance, migProfile: place.migProfile, job: fromDevice(d) });
    allocated.set(place.gpu, list);
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

  const gpuJobs: GpuJob[] = [];
  for (const gpu of new Set([...allocated.keys(), ...running.keys()])) {
    for (const placed of mergeGpu(uniquePlaced(allocated.get(gpu) ?? []), unique(running.get(gpu) ?? []))) gpuJobs.push({ gpu, ...placed });
  }

  // A process runs a rank in each communicator it is in: its ranks are one process when they logged
  // the same pid and were found at the same node pid (or both not found). Two processes of one logged
  // pid in two PID namespaces (two pods) are two, once the nccl collector found them on the node.
  const processes = new Map<string, { pid: number; nodePid: number | undefined; gpus: Set<string> }>();
  for (const r of input.ranks) {
    const key = `${r.pid}/${r.nodePid ?? ""}`;
    const p = processes.get(key) ?? { pid: r.pid, nodePid: r.nodePid, gpus: new Set<string>() };
    processes.set(key, p);
    const gpu = r.pciBusId !== undefined ? byBus.get(canonicalBusId(r.pciBusId)) : undefined;
    if (gpu !== undefined) p.gpus.add(gpu);
  }

  let unattributedRankProcesses = 0;
  const published = new Map<string, RankProcessJob>();
  for (const p of processes.values()) {
    const c = p.nodePid !== undefined ? cgroupOf(p.nodePid) : undefined;
    // Its ranks run on whole GPUs as NCCL sees them: the MIG device one runs on does not matter here.
    const given = uniquePlaced([...p.gpus].flatMap((gpu) => allocated.get(gpu) ?? []));
    const own = c !== undefined ? [fromCgroup(c)] : [];
    const jobs = unique(mergeGpu(given, own).map((x) => x.job));
    // Several candidates (its GPUs shared or given to several containers, and no cgroup to tell): the cgroup's, else none.
    const job = jobs.length === 1 ? jobs[0] : own[0];
    if (job === undefined) {
      unattributedRankProcesses++;
      continue;
    }
    const pid = String(p.pid);
    const hostPid = String(p.nodePid ?? "");
    published.set(JSON.stringify([pid, hostPid, keyOf(job)]), { pid, hostPid, job });
  }
  return { gpuJobs, rankProcessJobs: [...published.values()], unattributedProcesses, unattributedRankProcesses, unmatchedDevices };
}
