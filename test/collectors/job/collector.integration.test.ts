/**
 * The job collector on real sources: a fake kubelet pod-resources server (same proto, @grpc/grpc-js)
 * on a real unix socket, the fake nvidia-smi run through the real exec for its compute processes,
 * and real cgroup files (test/fixtures/procfs/job-cgroups, SOURCES-job.md) as procfs.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createJobCollector, type JobOptions } from "../../../collectors/job/collector.js";
import type { GpuIdentityReading, NcclRankProcess } from "../../../collectors/job/peers.js";
import { collectorError, fakesDir, makeDeps, series, useToolRig, valueOf } from "../../helpers/collector-deps.js";
import type { CollectorDeps } from "../../../collectors/collector.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { gpuPod, startPodResourcesServer, type FakePodResources } from "../../helpers/pod-resources-server.js";

const PROCFS = join(fixturesDir, "procfs/job-cgroups");
const NVSMI = join(fakesDir, "nvidia-smi");
const UUID = [
  "GPU-0d1e7c3a-1111-4a6b-9c2d-000000000000",
  "GPU-0d1e7c3a-1111-4a6b-9c2d-000000000001",
  "GPU-0d1e7c3a-1111-4a6b-9c2d-000000000002",
  "GPU-0d1e7c3a-1111-4a6b-9c2d-000000000003",
];
const BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0"];
const gpus = new Map<string, GpuIdentityReading>(UUID.map((uuid, i) => [String(i), { index: String(i), uuid, pciBusId: BUS[i] }]));
const gpuPeer = { identities: () => gpus };
// Pod uids of fixture pids 2202 (containerd, v1) and 2206 (guaranteed pod, v2); pid 1101 is Slurm's (v2).
const UID_2202 = "0125ec2f-b64a-4868-8f5b-94b56cbab864";
const UID_2206 = "dc430cd3-34b7-4ea6-be26-ddfd88d7ddff";

const rig = useToolRig("rw-job-");
const servers: FakePodResources[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(
  pods = [gpuPod("train", "llama-worker-0", "trainer", [UUID[0] ?? "", UUID[1] ?? ""])],
): Promise<{ socket: string; fake: FakePodResources }> {
  const socket = join(rig.tmp(), "kubelet.sock");
  const fake = await startPodResourcesServer(socket, pods);
  servers.push(fake);
  return { socket, fake };
}

function apps(rows: string[]): void {
  const file = join(rig.tmp(), "apps.csv");
  writeFileSync(file, rows.map((r) => r + "\n").join(""));
  vi.stubEnv("FAKE_NVSMI_APPS", file);
}

function make(o: Partial<JobOptions>, ranks?: NcclRankProcess[], deps: CollectorDeps = rig.deps()): ReturnType<typeof createJobCollector> {
  return createJobCollector(deps, {
    procfsRoot: PROCFS,
    podResourcesSocket: "",
    nvidiaSmi: "",
    timeoutMs: 3000,
    gpu: gpuPeer,
    ...(ranks ? { nccl: { rankProcesses: () => ranks } } : {}),
    ...o,
  });
}

const EMPTY = { namespace: "", pod: "", container: "", pod_uid: "", slurm_job: "", slurm_step: "" };
/** ringwatch_gpu_job_info of a whole GPU: no MIG device. */
const WHOLE = { gpu_instance: "", mig_profile: "" };
const sortBy = (xs: { labels: Record<string, string | number> }[]): string[] => xs.map((x) => JSON.stringify(Object.entries(x.labels).sort())).sort();
const labelsOf = (ls: Record<string, string>[]): string[] => ls.map((l) => JSON.stringify(Object.entries(l).sort())).sort();

describe("job collector", () => {
  it("joins pod-resources, compute processes and cgroups into one series per GPU and job, and one per rank process", async () => {
    const { socket } = await server([
      gpuPod("train", "llama-worker-0", "trainer", [UUID[0] ?? "", UUID[1] ?? ""]),
      // Time-slicing: two pods share GPU 2 through replica ids.
      gpuPod("infer", "bert-0", "server", [`${UUID[2]}::1`]),
      gpuPod("infer", "bert-1", "server", [`${UUID[2]}::2`]),
      // A MIG device nvidia-smi -L does not list (the fake has no -L here): it matches no GPU.
      gpuPod("infer", "mig-user", "app", ["MIG-5a1b2c3d-0000-5e6f-8a9b-000000000000"]),
      // Not a GPU.
      { name: "net", namespace: "kube-system", containers: [{ name: "sriov", devices: [{ resource_name: "nvidia.com/rdma", device_ids: ["0000:3b:00.1"] }] }] },
    ]);
    apps([`2202, ${UUID[0]}, ${BUS[0]}`, `1101, ${UUID[3]}, ${BUS[3]}`, `3302, ${UUID[1]}, ${BUS[1]}`]);
    const c = make({ podResourcesSocket: socket, nvidiaSmi: NVSMI }, [
      { commId: "0x49bbd7790311d5eb", rank: 0, pid: 45, nodePid: 2202, pciBusId: "0:18:00.0" },
      { commId: "0x49bbd7790311d5eb", rank: 1, pid: 46, nodePid: undefined, pciBusId: "0:2a:00.0" },
      { commId: "0x77aa", rank: 5, pid: 1101, nodePid: 1101, pciBusId: "0:5d:00.0" },
      { commId: "0x77aa", rank: 6, pid: 99, nodePid: 3302, pciBusId: undefined },
      // The same three processes in a second communicator: no more series, no more unattributed.
      { commId: "0x5150", rank: 0, pid: 45, nodePid: 2202, pciBusId: "0:18:00.0" },
      { commId: "0x5150", rank: 1, pid: 46, nodePid: undefined, pciBusId: "0:2a:00.0" },
      { commId: "0x5150", rank: 2, pid: 99, nodePid: 3302, pciBusId: undefined },
      // Another pod's process that logged pid 45 too (its own PID namespace), found at node pid 2206, on
      // GPU 2 (time-sliced between two pods): its own series with its cgroup's pod UID.
      { commId: "0x6262", rank: 0, pid: 45, nodePid: 2206, pciBusId: "0:3a:00.0" },
    ]);
    await c.update?.();
    const reg = rig.deps().registry;
    expect(sortBy(await series(reg, "ringwatch_gpu_job_info"))).toEqual(
      labelsOf([
        { gpu: "0", ...WHOLE, ...EMPTY, namespace: "train", pod: "llama-worker-0", container: "trainer", pod_uid: UID_2202 },
        // The bare process on GPU 1 is no job; the allocation is.
        { gpu: "1", ...WHOLE, ...EMPTY, namespace: "train", pod: "llama-worker-0", container: "trainer" },
        { gpu: "2", ...WHOLE, ...EMPTY, namespace: "infer", pod: "bert-0", container: "server" },
        { gpu: "2", ...WHOLE, ...EMPTY, namespace: "infer", pod: "bert-1", container: "server" },
        { gpu: "3", ...WHOLE, ...EMPTY, slurm_job: "1392969", slurm_step: "0" },
      ]),
    );
    // One series per process, labelled with the pid it logged and its pid on the node (ringwatch_nccl_rank_info's
    // pid and host_pid): the two processes that logged pid 45 are told apart by host_pid.
    expect(sortBy(await series(reg, "ringwatch_nccl_process_job_info"))).toEqual(
      labelsOf([
        { pid: "45", host_pid: "2202", ...EMPTY, namespace: "train", pod: "llama-worker-0", container: "trainer", pod_uid: UID_2202 },
        { pid: "45", host_pid: "2206", ...EMPTY, pod_uid: UID_2206 },
        // Not found on the node (no cgroup): the single container its GPU was given.
        { pid: "46", host_pid: "", ...EMPTY, namespace: "train", pod: "llama-worker-0", container: "trainer" },
        { pid: "1101", host_pid: "1101", ...EMPTY, slurm_job: "1392969", slurm_step: "0" },
      ]),
    );
    // The per-rank series is gone.
    expect(reg.getSingleMetric("ringwatch_nccl_rank_job_info")).toBeUndefined();
    expect(await valueOf(reg, "ringwatch_gpu_job_info", { gpu: "2", ...WHOLE, ...EMPTY, namespace: "infer", pod: "bert-1", container: "server" })).toBe(1);
    expect(await valueOf(reg, "ringwatch_job_unattributed", { kind: "gpu_process" })).toBe(1);
    // pid 99 (a login session's cgroup, no GPU): one process, in two communicators.
    expect(await valueOf(reg, "ringwatch_job_unattributed", { kind: "nccl_rank" })).toBe(1);
    expect(await valueOf(reg, "ringwatch_job_unmatched_devices")).toBe(1);
    expect(await valueOf(reg, "ringwatch_job_source_up", { source: "pod_resources" })).toBe(1);
    expect(await valueOf(reg, "ringwatch_job_source_up", { source: "compute_apps" })).toBe(1);
  });

  it("a finished job's series disappear at the next poll", async () => {
    const { socket, fake } = await server();
    apps([`2202, ${UUID[0]}, ${BUS[0]}`]);
    const c = make({ podResourcesSocket: socket, nvidiaSmi: NVSMI });
    await c.update?.();
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toHaveLength(2);
    fake.setPods([]);
    apps([]);
    await c.update?.();
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toEqual([]);
    expect(fake.calls).toBe(2);
  });

  it("without a socket, nvidia-smi or ranks: absent; with the nccl collector on, it succeeds with nothing to say", async () => {
    const gone = { podResourcesSocket: join(rig.tmp(), "no", "kubelet.sock"), nvidiaSmi: join(rig.tmp(), "no-nvidia-smi") };
    const err = await collectorError(make(gone).update?.() ?? Promise.resolve());
    expect(err.absent).toBe(true);
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toEqual([]);
    const deps = makeDeps();
    await make(gone, [], deps).update?.();
    expect(await valueOf(deps.registry, "ringwatch_job_source_up", { source: "pod_resources" })).toBe(0);
    expect(await valueOf(deps.registry, "ringwatch_job_source_up", { source: "compute_apps" })).toBe(0);
    expect(await valueOf(deps.registry, "ringwatch_job_unattributed", { kind: "nccl_rank" })).toBe(0);
  });

  it("a socket nobody serves is a failure when nothing else answers, and only a source down when nvidia-smi does", async () => {
    const stale = join(rig.tmp(), "stale.sock");
    writeFileSync(stale, "");
    const err = await collectorError(make({ podResourcesSocket: stale }, []).update?.() ?? Promise.resolve());
    expect(err.absent).toBe(false);
    expect(err.message).toContain(stale);
    apps([`1102, ${UUID[1]}, ${BUS[1]}`]);
    const deps = makeDeps();
    await make({ podResourcesSocket: stale, nvidiaSmi: NVSMI }, undefined, deps).update?.();
    expect(await valueOf(deps.registry, "ringwatch_job_source_up", { source: "pod_resources" })).toBe(0);
    expect(await series(deps.registry, "ringwatch_gpu_job_info")).toEqual([
      { labels: { gpu: "1", ...WHOLE, ...EMPTY, slurm_job: "280678", slurm_step: "interactive" }, value: 1 },
    ]);
  });

  it("nvidia-smi failing leaves pod-resources' answer", async () => {
    const { socket } = await server();
    vi.stubEnv("FAKE_NVSMI_MODE", "fail");
    await make({ podResourcesSocket: socket, nvidiaSmi: NVSMI }).update?.();
    expect(await valueOf(rig.deps().registry, "ringwatch_job_source_up", { source: "compute_apps" })).toBe(0);
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toHaveLength(2);
  });

  it("does not look up nvidia-smi's pids in a procfs of another PID namespace", async () => {
    const procfs = join(rig.tmp(), "proc");
    mkdirSync(join(procfs, "2202"), { recursive: true });
    writeFileSync(
      join(procfs, "2202", "cgroup"),
      `0::/kubepods.slice/kubepods-pod${UID_2202.replaceAll("-", "_")}.slice/cri-containerd-${"a".repeat(64)}.scope\n`,
    );
    symlinkSync(String(process.pid + 1), join(procfs, "self"));
    apps([`2202, ${UUID[0]}, ${BUS[0]}`]);
    await make({ procfsRoot: procfs, nvidiaSmi: NVSMI }).update?.();
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toEqual([]);
  });
});
