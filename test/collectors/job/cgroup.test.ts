/** The cgroup parser on every real /proc/<pid>/cgroup in test/fixtures/procfs/job-cgroups (SOURCES-job.md). */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jobOfPath, parseCgroup } from "../../../collectors/job/cgroup.js";
import { fixturesDir } from "../../helpers/fixtures.js";

const root = join(fixturesDir, "procfs/job-cgroups");
const read = (pid: number): string => readFileSync(join(root, String(pid), "cgroup"), "utf8");

const GOLDEN: Record<number, ReturnType<typeof parseCgroup>> = {
  1101: { slurmJob: "1392969", slurmStep: "0" },
  1102: { slurmJob: "280678", slurmStep: "interactive" },
  1103: { slurmJob: "4", slurmStep: "0" },
  1104: undefined,
  1105: { slurmJob: "17", slurmStep: "0" },
  1106: { slurmJob: "42", slurmStep: "extern" },
  1107: { slurmJob: "195428", slurmStep: "batch" },
  2201: { podUid: "a5c1f8d5-1919-434d-add7-4afaafdaef89", containerId: "5eed917563583925ffdbd40a64efb2aaffe58638e57add8becaf460fe74f5b1c" },
  2202: { podUid: "0125ec2f-b64a-4868-8f5b-94b56cbab864", containerId: "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459" },
  2203: { podUid: "b96a7488-3ee1-4bdc-9c98-155cc887b417", containerId: "6ef14b5a76df7b5d24285e3a04ccbc6fd323620272b3787b5dc440fc1b75d294" },
  2204: { podUid: "7d4424e6-bb13-42f4-a47a-45a4828bf54d", containerId: "d0b3604b67ac7930dd34ba3a796627e3e4717d12309e90a4afe3f38b6816ac98" },
  2205: { podUid: "55c6c714-b240-4dec-9a45-57b61696ab6e", containerId: "2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36" },
  2206: { podUid: "dc430cd3-34b7-4ea6-be26-ddfd88d7ddff", containerId: "8564224395a4fbf7f2792baa22ee16dfc8f8e862e20342d3b2bcc211a3939af6" },
  2207: { podUid: "18d34ce4-50c7-452c-9df8-53c4a3fdf363", containerId: "a684bbdd0c4b6937b5ece9713bed661305ab0de570eb12b7c28a032aaf602937" },
  2208: { podUid: "85401dd3-38cd-47b6-a90a-e16c0e1c06e6", containerId: "dbc9f149296cec5d12b78385eb5b2c0cfe20b476f117c15c76d981cff44053c1" },
  2209: { podUid: "1e597579-417e-482f-bf65-5fe170c3aebd", containerId: "a09bc17f5aa29b0dbdec9ede5f46cf1396d2405917ab02e6f1eb1019f388396e" },
  2210: { podUid: "36b6d6be73b1065af369b3985edafa09", containerId: "79fedb3bd23ca77c9d9ccb41909038316f713df22b54b7d942b71d3812e7c74e" },
  3301: undefined,
  3302: undefined,
  3303: undefined,
};

describe("parseCgroup on real cgroup files", () => {
  it("has a golden answer for every fixture", () => {
    const pids = readdirSync(root).map(Number).sort();
    expect(pids).toEqual(Object.keys(GOLDEN).map(Number).sort());
  });
  for (const [pid, want] of Object.entries(GOLDEN)) {
    it(`pid ${pid}`, () => expect(parseCgroup(read(Number(pid)))).toEqual(want));
  }
});

describe("cgroup paths", () => {
  it("multiple slurmd: <node>_slurmstepd.scope (v2) and slurm_<node> (v1)", () => {
    expect(jobOfPath("/system.slice/gpu07_slurmstepd.scope/job_123/step_batch/user/task_special")).toEqual({ slurmJob: "123", slurmStep: "batch" });
    expect(jobOfPath("/slurm_gpu07/uid_1000/job_9/step_3/task_1")).toEqual({ slurmJob: "9", slurmStep: "3" });
  });
  it("Slurm 26.05's SLUID directory is the job; a job with no step yet has no step", () => {
    expect(jobOfPath("/system.slice/slurmstepd.scope/s5K1KKYAYG5D00/step_0/user/task_0")).toEqual({ slurmJob: "s5K1KKYAYG5D00", slurmStep: "0" });
    expect(jobOfPath("/system.slice/slurmstepd.scope/job_77")).toEqual({ slurmJob: "77" });
  });
  it("a pod without a container segment (the pod slice itself) gives the pod only", () => {
    expect(jobOfPath("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod2ca4a155_3599_498d_bb9d_4446693fa3ea.slice")).toEqual({
      podUid: "2ca4a155-3599-498d-bb9d-4446693fa3ea",
    });
  });
  it("slurmd in a pod: the job's cgroup under the pod gives both", () => {
    expect(
      jobOfPath(
        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poda101c1c8_1589_4313_acf5_02e3ca8d3994.slice/system.slice/slurmstepd.scope/job_5/step_0/user/task_0",
      ),
    ).toEqual({
      podUid: "a101c1c8-1589-4313-acf5-02e3ca8d3994",
      slurmJob: "5",
      slurmStep: "0",
    });
  });
  it("neither: a pod-like name outside kubepods, a job_ directory outside Slurm, garbage", () => {
    expect(jobOfPath("/system.slice/pod12345678-1234-1234-1234-123456789012.service")).toBeUndefined();
    expect(jobOfPath("/user.slice/job_12/step_0")).toBeUndefined();
    expect(parseCgroup("random garbage\n\u0000\u0001\n::\n")).toBeUndefined();
    expect(parseCgroup("")).toBeUndefined();
  });
});
