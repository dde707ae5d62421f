/**
 * The built agent attributes GPUs and NCCL ranks to their jobs: a fake kubelet pod-resources server
 * (the kubelet's proto, @grpc/grpc-js) on a real unix socket, the fake nvidia-smi replaying an H100
 * and listing one compute process, a procfs tree whose process has a real containerd cgroup line
 * (test/fixtures/procfs/job-cgroups/2202) and an NCCL log of that pid's ranks in two communicators
 * (one process: one ringwatch_nccl_process_job_info series). And an H100 in MIG
 * mode: its dmon, --query-gpu, -L and -q captures, all of one machine.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { gpuPod, startPodResourcesServer, type FakePodResources } from "../helpers/pod-resources-server.js";
import { DMON_H100_LOAD, QUERY_H100, fixture, tempDir } from "./env.js";

const COMM = "0x49bbd7790311d5eb";
const COMM2 = "0x7a1f00d2c4e5b6a8";
const UID = "0125ec2f-b64a-4868-8f5b-94b56cbab864";
// The H100 capture's GPU 0 (masked identity).
const UUID = "GPU-00000000-0000-0000-0000-000000000000";
const PID = 4242;
/** Its pid on the node: the process runs in its pod's own PID namespace (NSpid: node pid, then its own). */
const NODE_PID = 31042;

const agents: RunningAgent[] = [];
const servers: FakePodResources[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop("SIGTERM");
  for (const s of servers.splice(0)) await s.close();
});

function procfs(dir: string): string {
  const root = join(dir, "proc");
  const p = join(root, String(NODE_PID));
  mkdirSync(p, { recursive: true });
  writeFileSync(join(p, "cgroup"), readFileSync(join(fixturesDir, "procfs/job-cgroups/2202/cgroup")));
  writeFileSync(join(p, "status"), `Name:\tpython\nPid:\t${NODE_PID}\nNSpid:\t${NODE_PID}\t${PID}\n`);
  writeFileSync(join(p, "stat"), `${NODE_PID} (python) S 1 ${NODE_PID} ${NODE_PID} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n`);
  return root;
}

function rankLog(dir: string): string {
  const logs = join(dir, "nccl");
  mkdirSync(logs);
  const host = hostname().split(".")[0] ?? "";
  // busId 90 is 0000:00:09.0, the H100 capture's GPU 0 (the GPU given to the pod).
  writeFileSync(
    join(logs, `nccl-${host}-${PID}.log`),
    `${host}:${PID}:${PID} [0] NCCL INFO comm 0x55aa00 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 90 commId ${COMM} - Init COMPLETE\n` +
      `${host}:${PID}:${PID} [0] NCCL INFO comm 0x55bb00 rank 1 nranks 4 cudaDev 0 nvmlDev 0 busId 90 commId ${COMM2} - Init COMPLETE\n`,
  );
  return logs;
}

describe("job collector end to end", () => {
  it("serves ringwatch_gpu_job_info and ringwatch_nccl_process_job_info from the socket, nvidia-smi and cgroups", async () => {
    const dir = tempDir();
    const socket = join(dir, "kubelet.sock");
    servers.push(await startPodResourcesServer(socket, [gpuPod("train", "llama-worker-0", "trainer", [UUID])]));
    const apps = join(dir, "apps.csv");
    writeFileSync(apps, `${NODE_PID}, ${UUID}, 00000000:00:09.0\n`);
    const a = await startAgent(
      [
        `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.gpu.interval=1s",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        `--path.procfs=${procfs(dir)}`,
        `--collector.nccl.path=${rankLog(dir)}`,
        "--no-collector.nccl.ras",
        `--collector.job.pod-resources-socket=${socket}`,
        `--collector.job.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.job.interval=1s",
        "--collector.timeout=3s",
      ],
      { FAKE_NVSMI_DMON: DMON_H100_LOAD, FAKE_NVSMI_QUERY: QUERY_H100, FAKE_NVSMI_PACE_MS: "250", FAKE_NVSMI_APPS: apps },
    );
    agents.push(a);
    const text = await eventually(async () => {
      const t = await a.scrape();
      // Until the nccl collector finds the process in procfs, its job is its GPU's container alone (no pod UID).
      const found = samplesOf(t, "ringwatch_nccl_process_job_info").some((s) => s.includes(`pod_uid="${UID}"`));
      return samplesOf(t, "ringwatch_gpu_job_info").length > 0 && found ? t : undefined;
    }, 20_000);
    // GPU 0 went to one container and its one process is of that pod: one series with both.
    expect(samplesOf(text, "ringwatch_gpu_job_info")).toEqual([
      `ringwatch_gpu_job_info{gpu="0",gpu_instance="",mig_profile="",namespace="train",pod="llama-worker-0",container="trainer",pod_uid="${UID}",slurm_job="",slurm_step=""} 1`,
    ]);
    // The ranks' process, found by its NSpid in procfs, is in that pod's cgroup on that pod's GPU: one
    // series for both its communicators, with the pid its log lines give and its pid on the node.
    expect(samplesOf(text, "ringwatch_nccl_process_job_info")).toEqual([
      `ringwatch_nccl_process_job_info{pid="${PID}",host_pid="${NODE_PID}",namespace="train",pod="llama-worker-0",container="trainer",pod_uid="${UID}",slurm_job="",slurm_step=""} 1`,
    ]);
    expect(samplesOf(text, "ringwatch_nccl_rank_job_info")).toEqual([]);
    expect(sample(text, 'ringwatch_job_unattributed{kind="nccl_rank"}')).toBe(0);
    expect(sample(text, 'ringwatch_job_source_up{source="pod_resources"}')).toBe(1);
    expect(sample(text, 'ringwatch_job_source_up{source="compute_apps"}')).toBe(1);
    expect(sample(text, 'ringwatch_collector_success{collector="job"}')).toBe(1);
  });

  it("names the GPU instance of each pod's MIG device (H100 in MIG mode: dmon, --query-gpu, -L and -q of one machine)", async () => {
    const dir = tempDir();
    const socket = join(dir, "kubelet.sock");
    // nvidia_smi_list/01: Device 2 and 3 (1g.10gb) are GPU instances 9 and 10 (nvidia_smi_q/01).
    servers.push(
      await startPodResourcesServer(socket, [
        {
          name: "infer-0",
          namespace: "serve",
          containers: [{ name: "server", devices: [{ resource_name: "nvidia.com/mig-1g.10gb", device_ids: ["MIG-00000002-0000-0000-0000-000000000002"] }] }],
        },
        {
          name: "infer-1",
          namespace: "serve",
          containers: [{ name: "server", devices: [{ resource_name: "nvidia.com/mig-1g.10gb", device_ids: ["MIG-00000003-0000-0000-0000-000000000003"] }] }],
        },
      ]),
    );
    const a = await startAgent(
      [
        `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.gpu.interval=1s",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        "--no-collector.nccl",
        `--collector.job.pod-resources-socket=${socket}`,
        `--collector.job.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.job.interval=1s",
        "--collector.timeout=3s",
      ],
      {
        FAKE_NVSMI_DMON: fixture("tools/nvidia_smi_dmon/07-nvgpuexp-h100-MIG-590.48.01-idle.txt"),
        FAKE_NVSMI_QUERY: fixture("tools/nvidia_smi_query_csv/05-nvgpuexp-h100-MIG-590.48.01-allfields.txt"),
        FAKE_NVSMI_LIST: fixture("tools/nvidia_smi_list/01-nvgpuexp-h100-MIG-590.48.01.txt"),
        FAKE_NVSMI_Q: fixture("tools/nvidia_smi_q/01-nvgpuexp-h100-MIG-590.48.01-idle.txt"),
        FAKE_NVSMI_PACE_MS: "250",
      },
    );
    agents.push(a);
    const text = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_gpu_job_info").length >= 2 ? t : undefined;
    }, 20_000);
    expect(samplesOf(text, "ringwatch_gpu_job_info").sort()).toEqual([
      'ringwatch_gpu_job_info{gpu="0",gpu_instance="10",mig_profile="1g.10gb",namespace="serve",pod="infer-1",container="server",pod_uid="",slurm_job="",slurm_step=""} 1',
      'ringwatch_gpu_job_info{gpu="0",gpu_instance="9",mig_profile="1g.10gb",namespace="serve",pod="infer-0",container="server",pod_uid="",slurm_job="",slurm_step=""} 1',
    ]);
    expect(sample(text, "ringwatch_job_unmatched_devices")).toBe(0);
    expect(sample(text, 'ringwatch_collector_success{collector="job"}')).toBe(1);
  });
});
