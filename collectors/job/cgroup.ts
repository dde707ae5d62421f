/**
 * Pure: the Kubernetes pod and the Slurm job and step a process belongs to, from the text of its
 * /proc/<pid>/cgroup. Lines are `hierarchy-id:controllers:path`; cgroup v2 has one `0::/path` line,
 * v1 one line per hierarchy (`11:freezer:/...`), hybrid both. The unified line is read first, then
 * each v1 line, until one names a pod or a job.
 *
 * Pods (the kubelet's cgroup drivers, under any prefix: kind, minikube, `kubelet.slice/`):
 *   systemd  `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid, _ for ->.slice/<runtime>-<id>.scope`
 *            (runtimes: cri-containerd, crio, docker, cri-dockerd); containerd's v1 form
 *            `/kubepods-besteffort-pod<uid>.slice:cri-containerd:<id>`, also under `/system.slice/containerd.service/`
 *   cgroupfs `/kubepods/burstable/pod<uid>/<id>`, `/kubepods/pod<uid>/<id>` (guaranteed)
 *   Static pods carry their 32-hex config hash as uid: `kubepods-burstable-pod36b6d6be73b1065af369b3985edafa09.slice`.
 * Slurm (task/cgroup, proctrack/cgroup):
 *   v1  `/slurm/uid_<uid>/job_<id>/step_<step>/task_<n>` (`/slurm_<node>/...` with multiple slurmd)
 *   v2  `/system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n>` (`<node>_slurmstepd.scope`
 *       with multiple slurmd); Slurm 26.05 keys the job directory by its SLUID instead of `job_<id>`
 *       unless CgroupJobIdPaths=yes: that directory name is taken as the job.
 *   steps: a number, `batch`, `extern`, `interactive` (the `step_` prefix dropped).
 * Fixtures with their sources: test/fixtures/procfs/SOURCES-job.md.
 */

export interface CgroupJob {
  /** The pod's UID with dashes (a static pod's 32-hex hash as is). */
  podUid?: string;
  /** The container's runtime id (64 hex), where the path names it. */
  containerId?: string;
  slurmJob?: string;
  /** `0`, `batch`, `extern`, `interactive`. */
  slurmStep?: string;
}

const UUID = "[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|[0-9a-f]{32}";
/** A pod segment of either driver: `kubepods-burstable-pod<uid>.slice` or `pod<uid>`, under a kubepods parent. */
const POD = new RegExp(`kubepods[^:]*?(?:^|[/-])pod(${UUID})(?:\\.slice)?(?=$|[/:])`);
/** What follows the pod segment: `/cri-containerd-<id>.scope`, `/<id>`, `:cri-containerd:<id>`. */
const CONTAINER = /^(?:\/(?:[a-z-]+-)?|:[a-z-]+:)([0-9a-f]{64})(?:\.scope)?(?=$|\/)/;
const SLURM_PARENT = /^(?:slurm(?:_[^/]+)?|uid_\d+|(?:[^/]+_)?slurmstepd\.scope)$/;
const STEP = /^step_([A-Za-z0-9]+)$/;
/** Slurm 26.05's job key (`s5K1KKYAYG5D00`): letters and digits, no `job_`. */
const SLUID = /^[A-Za-z0-9]{6,32}$/;

function pod(path: string): Pick<CgroupJob, "podUid" | "containerId"> | undefined {
  const m = POD.exec(path);
  if (!m?.[1]) return undefined;
  const uid = m[1].replaceAll("_", "-");
  const rest = path.slice(m.index + m[0].length);
  const c = CONTAINER.exec(rest);
  return c?.[1] ? { podUid: uid, containerId: c[1] } : { podUid: uid };
}

function slurm(path: string): Pick<CgroupJob, "slurmJob" | "slurmStep"> | undefined {
  const seg = path.split("/");
  for (let i = 1; i < seg.length; i++) {
    const parent = seg[i - 1] ?? "";
    const s = seg[i] ?? "";
    if (!SLURM_PARENT.test(parent)) continue;
    let job: string | undefined;
    if (s.startsWith("job_") && s.length > 4) job = s.slice(4);
    else if (parent.endsWith("slurmstepd.scope") && s !== "system" && SLUID.test(s)) job = s;
    if (job === undefined) continue;
    const step = STEP.exec(seg[i + 1] ?? "")?.[1];
    return step !== undefined ? { slurmJob: job, slurmStep: step } : { slurmJob: job };
  }
  return undefined;
}

/** The job of one cgroup path, or undefined when it names neither a pod nor a Slurm job. */
export function jobOfPath(path: string): CgroupJob | undefined {
  const p = pod(path);
  const s = slurm(path);
  if (p === undefined && s === undefined) return undefined;
  return { ...p, ...s };
}

/** The job of a /proc/<pid>/cgroup text; undefined for a process of neither (a bare process, a plain container). */
export function parseCgroup(text: string): CgroupJob | undefined {
  const paths: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const a = line.indexOf(":");
    const b = a < 0 ? -1 : line.indexOf(":", a + 1);
    if (b < 0) continue;
    const path = line.slice(b + 1);
    if (!path.startsWith("/")) continue;
    // The unified hierarchy first.
    if (line.startsWith("0::")) paths.unshift(path);
    else paths.push(path);
  }
  for (const p of paths) {
    const job = jobOfPath(p);
    if (job !== undefined) return job;
  }
  return undefined;
}
