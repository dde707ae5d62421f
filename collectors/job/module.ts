/** The job collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createJobCollector } from "./collector.js";
import { isGpuIdentities, isNcclRanks } from "./peers.js";

export interface JobSettings {
  podResourcesSocket: string;
  nvidiaSmi: string;
}

export const jobModule: CollectorModule<"job", JobSettings> = {
  name: "job",
  enabledByDefault: true,
  switchHelp: "Enable the job collector (whose Kubernetes pod or Slurm job each GPU and NCCL rank belongs to).",
  flags: [
    {
      name: "collector.job.pod-resources-socket",
      kind: "string",
      default: "/var/lib/kubelet/pod-resources/kubelet.sock",
      help: "The kubelet's pod-resources socket (v1 List: which container was given which GPU); empty: off. Absent on nodes without a kubelet, which is normal.",
    },
    {
      name: "collector.job.nvidia-smi",
      kind: "string",
      default: "nvidia-smi",
      help: "nvidia-smi run once per poll with --query-compute-apps (which pids compute on which GPU; their cgroup names the pod or Slurm job), and with -L (and -q) when pod-resources lists MIG devices, for each one's GPU and GPU instance (the answer is kept 5 minutes); empty: off.",
    },
  ],
  uses: ["path.procfs", "collector.timeout"],
  poll: true,
  // One nvidia-smi per poll: attribution changes when jobs start, so every 30 s is enough.
  intervalDefault: "30s",
  reloadable: [],
  read: (r) => ({ podResourcesSocket: r.text("collector.job.pod-resources-socket"), nvidiaSmi: r.text("collector.job.nvidia-smi") }),
  create({ deps, settings, common, peer }) {
    const gpu = peer("gpu");
    const nccl = peer("nccl");
    return createJobCollector(deps, {
      procfsRoot: common.procfsRoot,
      podResourcesSocket: settings.podResourcesSocket,
      nvidiaSmi: settings.nvidiaSmi,
      timeoutMs: common.timeoutMs,
      ...(isGpuIdentities(gpu) ? { gpu } : {}),
      ...(isNcclRanks(nccl) ? { nccl } : {}),
    });
  },
};
