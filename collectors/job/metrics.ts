/** The job collector's series; each poll replaces them all (publish.ts), so finished jobs' series go. */
import type { Gauge, Registry } from "prom-client";
import { gauge, publishGauge } from "../publish.js";
import type { Attribution } from "./attribution.js";

export type SourceName = "pod_resources" | "compute_apps";

const JOB_LABELS = ["namespace", "pod", "container", "pod_uid", "slurm_job", "slurm_step"] as const;

export class JobMetrics {
  private readonly gpuJob: Gauge;
  private readonly processJob: Gauge;
  private readonly sourceUp: Gauge<"source">;
  private readonly unattributed: Gauge<"kind">;
  private readonly unmatched: Gauge;

  constructor(registry: Registry) {
    this.gpuJob = gauge(
      registry,
      "ringwatch_gpu_job_info",
      "Always 1: a job on this GPU (gpu is dmon's index): the Kubernetes container the kubelet gave it (pod-resources) and the pod UID and Slurm job and step of the processes computing on it (their cgroup); empty where unknown. A container given a MIG device of the GPU has its GPU instance id (gpu_instance) and profile (mig_profile, from nvidia-smi -L); both are empty for a whole GPU and for processes. One series per GPU, MIG device and job.",
      ["gpu", "gpu_instance", "mig_profile", ...JOB_LABELS],
    );
    this.processJob = gauge(
      registry,
      "ringwatch_nccl_process_job_info",
      "Always 1: the job of a process on this node that runs NCCL ranks (its cgroup, and the container its ranks' GPUs were given); empty where unknown. pid is the pid the process logged and host_pid its pid on the node (empty until found there), as ringwatch_nccl_rank_info labels them: join on (instance, pid, host_pid). One series per process, however many communicators it is in; none for a process whose job is not known.",
      ["pid", "host_pid", ...JOB_LABELS],
    );
    this.sourceUp = gauge(
      registry,
      "ringwatch_job_source_up",
      "1 if this attribution source answered at the last poll, 0 if not (absent, permission denied, failed: the log says which): pod_resources (the kubelet's socket), compute_apps (nvidia-smi --query-compute-apps). Only sources that are configured.",
      ["source"],
    );
    this.unattributed = gauge(
      registry,
      "ringwatch_job_unattributed",
      "GPU compute processes (gpu_process) and processes running NCCL ranks (nccl_rank: processes, not ranks; one process in several communicators counts once) on this node whose job was not found at the last poll: bare processes, or processes whose cgroup could not be read.",
      ["kind"],
    );
    this.unmatched = gauge(
      registry,
      "ringwatch_job_unmatched_devices",
      "GPU device ids the kubelet's pod-resources lists that match no GPU the gpu collector identified, directly or through their MIG device's GPU (the gpu collector off, a MIG device nvidia-smi -L did not list, or nvidia-smi absent).",
      [],
    );
    this.unmatched.remove({});
  }

  publish(a: Attribution): void {
    publishGauge(
      this.gpuJob,
      a.gpuJobs.map(({ gpu, gpuInstance, migProfile, job }) => ({ labels: { gpu, gpu_instance: gpuInstance, mig_profile: migProfile, ...job }, value: 1 })),
    );
    publishGauge(
      this.processJob,
      a.rankProcessJobs.map(({ pid, hostPid, job }) => ({ labels: { pid, host_pid: hostPid, ...job }, value: 1 })),
    );
    publishGauge(this.unattributed, [
      { labels: { kind: "gpu_process" }, value: a.unattributedProcesses },
      { labels: { kind: "nccl_rank" }, value: a.unattributedRankProcesses },
    ]);
    publishGauge(this.unmatched, [{ labels: {}, value: a.unmatchedDevices }]);
  }

  sources(up: ReadonlyMap<SourceName, boolean>): void {
    publishGauge(
      this.sourceUp,
      [...up].map(([source, ok]) => ({ labels: { source }, value: ok ? 1 : 0 })),
    );
  }

  /** No attribution at all (the poll failed): the info series and counts go; source_up stays. */
  withdraw(): void {
    for (const g of [this.gpuJob, this.processJob, this.unattributed]) g.reset();
    this.unmatched.reset();
    this.unmatched.remove({});
  }
}
