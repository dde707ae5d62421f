/**
 * attribute()'s NCCL rank processes: ranks are grouped into their processes (logged pid and node
 * pid), each process has at most one job and one entry, however many communicators and GPUs its
 * ranks are on, and each process without a job is counted once.
 */
import { describe, expect, it } from "vitest";
import { attribute, type AttributionInput, type Job } from "../../../collectors/job/attribution.js";
import type { CgroupJob } from "../../../collectors/job/cgroup.js";
import type { GpuIdentityReading, NcclRankProcess } from "../../../collectors/job/peers.js";
import type { PodDevice } from "../../../collectors/job/pod-resources.js";

const UUID = ["GPU-aaaaaaaa-0000-0000-0000-000000000000", "GPU-aaaaaaaa-0000-0000-0000-000000000001", "GPU-aaaaaaaa-0000-0000-0000-000000000002"];
const BUS = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0"];
const gpus = new Map<string, GpuIdentityReading>(UUID.map((uuid, i) => [String(i), { index: String(i), uuid, pciBusId: BUS[i] }]));
const UID_A = "0125ec2f-b64a-4868-8f5b-94b56cbab864";
const UID_B = "dc430cd3-34b7-4ea6-be26-ddfd88d7ddff";
const EMPTY: Job = { namespace: "", pod: "", container: "", pod_uid: "", slurm_job: "", slurm_step: "" };

const device = (pod: string, gpu: number): PodDevice => ({
  namespace: "train",
  pod,
  container: "trainer",
  resourceName: "nvidia.com/gpu",
  deviceId: UUID[gpu] ?? "",
});
const rank = (commId: string, r: number, pid: number, nodePid: number | undefined, gpu: number | undefined): NcclRankProcess => ({
  commId,
  rank: r,
  pid,
  nodePid,
  pciBusId: gpu !== undefined ? BUS[gpu] : undefined,
});

function run(ranks: NcclRankProcess[], devices: PodDevice[], cgroups: Record<number, CgroupJob> = {}): ReturnType<typeof attribute> {
  const read: number[] = [];
  const cgroupOf = (pid: number): CgroupJob | undefined => {
    read.push(pid);
    return cgroups[pid];
  };
  const input: AttributionInput = { gpus, devices, mig: new Map(), apps: [], ranks, cgroupOf };
  const a = attribute(input);
  // Each process's cgroup is read once, whatever its number of ranks.
  expect(read).toEqual([...new Set(read)]);
  return a;
}

describe("attribute: NCCL rank processes", () => {
  it("a process in many communicators is one entry with its logged pid, merged with its GPU's single container", () => {
    const ranks = Array.from({ length: 50 }, (_, i) => rank(`0x${(0x1000 + i).toString(16)}`, 3, 77, 2202, 0));
    const a = run(ranks, [device("llama-worker-0", 0)], { 2202: { podUid: UID_A } });
    expect(a.rankProcessJobs).toEqual([
      { pid: "77", hostPid: "2202", job: { ...EMPTY, namespace: "train", pod: "llama-worker-0", container: "trainer", pod_uid: UID_A } },
    ]);
    expect(a.unattributedRankProcesses).toBe(0);
  });

  it("one process on two GPUs given to its one container: one job, though the process was not found on the node", () => {
    const a = run([rank("0x1", 0, 12, undefined, 0), rank("0x1", 1, 12, undefined, 1)], [device("w-0", 0), device("w-0", 1)]);
    expect(a.rankProcessJobs).toEqual([{ pid: "12", hostPid: "", job: { ...EMPTY, namespace: "train", pod: "w-0", container: "trainer" } }]);
    expect(a.unattributedRankProcesses).toBe(0);
  });

  it("two processes of one logged pid in two pods: two entries, told apart by their node pid, once both were found on the node; none (one unattributed) before", () => {
    const devices = [device("w-0", 0), device("w-1", 1)];
    const found = run([rank("0x1", 0, 12, 2202, 0), rank("0x1", 1, 12, 2206, 1)], devices, { 2202: { podUid: UID_A }, 2206: { podUid: UID_B } });
    expect(found.rankProcessJobs).toEqual([
      { pid: "12", hostPid: "2202", job: { ...EMPTY, namespace: "train", pod: "w-0", container: "trainer", pod_uid: UID_A } },
      { pid: "12", hostPid: "2206", job: { ...EMPTY, namespace: "train", pod: "w-1", container: "trainer", pod_uid: UID_B } },
    ]);
    expect(found.unattributedRankProcesses).toBe(0);
    // Not found: one process as far as can be told, on GPUs of two containers; no job rather than a wrong one.
    const notFound = run([rank("0x1", 0, 12, undefined, 0), rank("0x1", 1, 12, undefined, 1)], devices);
    expect(notFound.rankProcessJobs).toEqual([]);
    expect(notFound.unattributedRankProcesses).toBe(1);
  });

  it("GPUs given to several containers: the process's cgroup, else none; processes without a job counted once each", () => {
    const devices = [device("w-0", 0), device("w-1", 1)];
    const a = run(
      [
        rank("0x1", 0, 30, 3001, 0),
        rank("0x2", 0, 30, 3001, 1),
        rank("0x1", 1, 31, undefined, 0),
        rank("0x2", 1, 31, undefined, 1),
        rank("0x1", 2, 32, 3302, undefined),
        rank("0x2", 2, 32, 3302, undefined),
        rank("0x3", 2, 32, 3302, 2),
      ],
      devices,
      { 3001: { slurmJob: "4242", slurmStep: "0" } },
    );
    expect(a.rankProcessJobs).toEqual([{ pid: "30", hostPid: "3001", job: { ...EMPTY, slurm_job: "4242", slurm_step: "0" } }]);
    // 31: two containers and no cgroup; 32: a bare process on a GPU nobody was given.
    expect(a.unattributedRankProcesses).toBe(2);
  });
});
