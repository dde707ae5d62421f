/**
 * MIG devices in pod-resources, mapped to their GPU: a fake kubelet pod-resources server on a real
 * unix socket lists MIG ids (new `MIG-<uuid>` and old `MIG-GPU-<uuid>/<gi>/<ci>` forms), the fake
 * nvidia-smi replays real `-L` and `-q` captures of one machine through the real exec module.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createJobCollector, type JobOptions } from "../../../collectors/job/collector.js";
import { REFRESH_MS } from "../../../collectors/job/mig.js";
import type { GpuIdentityReading } from "../../../collectors/job/peers.js";
import type { CollectorDeps } from "../../../collectors/collector.js";
import { fakesDir, makeDeps, series, useToolRig, valueOf } from "../../helpers/collector-deps.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { memoryLogger } from "../../helpers/memory-logger.js";
import { gpuPod, startPodResourcesServer, type FakePod, type FakePodResources } from "../../helpers/pod-resources-server.js";

const PROCFS = join(fixturesDir, "procfs/job-cgroups");
const NVSMI = join(fakesDir, "nvidia-smi");
const fixture = (p: string): string => join(fixturesDir, "tools", p);
// The H200 of nvidia_smi_list/02 and nvidia_smi_q/02 (masked identity), and a whole GPU beside it.
const H200 = "GPU-00000000-0000-0000-0000-000000000000";
const WHOLE_GPU = "GPU-5d5ba0d6-1111-4a6b-9c2d-000000000001";
const MIG = (n: number): string => `MIG-0000000${n}-0000-0000-0000-00000000000${n}`;
// The A100 of nvidia_smi_list/07 (old form: 3g.20gb, 2g.10gb, 1g.5gb on GPU instances 2, 3, 9).
const A100 = "GPU-4200ccc0-2667-d4cb-9137-f932c716232a";
const OLD = (gi: number): string => `MIG-GPU-4200ccc0-2667-d4cb-9137-f932c716232a/${gi}/0`;
// Pod uid of fixture pid 2202 (containerd, v1).
const UID_2202 = "0125ec2f-b64a-4868-8f5b-94b56cbab864";

const EMPTY = { namespace: "", pod: "", container: "", pod_uid: "", slurm_job: "", slurm_step: "" };

const rig = useToolRig("rw-job-mig-");
const servers: FakePodResources[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

function migPod(namespace: string, name: string, container: string, resource: string, ids: string[]): FakePod {
  return { name, namespace, containers: [{ name: container, devices: [{ resource_name: resource, device_ids: ids }] }] };
}

async function server(pods: FakePod[]): Promise<{ socket: string; fake: FakePodResources }> {
  const socket = join(rig.tmp(), "kubelet.sock");
  const fake = await startPodResourcesServer(socket, pods);
  servers.push(fake);
  return { socket, fake };
}

/** nvidia-smi replays these captures; every run is logged. */
function nvsmi(list: string | undefined, q: string | undefined): void {
  if (list !== undefined) vi.stubEnv("FAKE_NVSMI_LIST", fixture(list));
  if (q !== undefined) vi.stubEnv("FAKE_NVSMI_Q", fixture(q));
  vi.stubEnv("FAKE_NVSMI_LOG", join(rig.tmp(), "nvsmi.log"));
}

/** The nvidia-smi runs so far, as their arguments. */
function runs(): string[] {
  try {
    return readFileSync(join(rig.tmp(), "nvsmi.log"), "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.slice(l.indexOf(" ") + 1));
  } catch {
    return [];
  }
}
const migRuns = (): string[] => runs().filter((r) => r === "-L" || r === "-q");

function make(gpus: Record<string, string>, o: Partial<JobOptions>, deps: CollectorDeps = rig.deps()): ReturnType<typeof createJobCollector> {
  const ids = new Map<string, GpuIdentityReading>(Object.entries(gpus).map(([index, uuid]) => [index, { index, uuid }]));
  return createJobCollector(deps, { procfsRoot: PROCFS, podResourcesSocket: "", nvidiaSmi: NVSMI, timeoutMs: 3000, gpu: { identities: () => ids }, ...o });
}

const key = (l: Record<string, string | number>): string => JSON.stringify(Object.entries(l).sort());
const sorted = (xs: { labels: Record<string, string | number> }[]): string[] => xs.map((x) => key(x.labels)).sort();
const want = (ls: Record<string, string>[]): string[] => ls.map(key).sort();

describe("job collector: MIG devices", () => {
  it("maps new-form MIG ids to their GPU, GPU instance and profile (nvidia-smi -L and -q); two pods on one GPU are two series", async () => {
    nvsmi("nvidia_smi_list/02-nvgpuexp-h200-MIG-590.48.01.txt", "nvidia_smi_q/02-nvgpuexp-h200-MIG-590.48.01-load.txt");
    const { socket } = await server([
      // Two compute instances of GPU instance 2.
      migPod("infer", "a-0", "app", "nvidia.com/mig-1c.3g.71gb", [MIG(0)]),
      migPod("infer", "b-0", "app", "nvidia.com/mig-2c.3g.71gb", [MIG(1)]),
      // Two 1g.18gb devices, one with a sharing replica suffix.
      migPod("train", "c-0", "trainer", "nvidia.com/mig-1g.18gb", [MIG(3)]),
      migPod("train", "d-0", "trainer", "nvidia.com/mig-1g.18gb.shared", [`${MIG(4)}::2`]),
      // A whole GPU beside it; and a MIG id nvidia-smi does not list.
      gpuPod("train", "e-0", "trainer", [WHOLE_GPU]),
      migPod("infer", "ghost", "app", "nvidia.com/mig-1g.18gb", ["MIG-5a1b2c3d-0000-5e6f-8a9b-000000000000"]),
    ]);
    const c = make({ "0": H200, "1": WHOLE_GPU }, { podResourcesSocket: socket });
    await c.update?.();
    const reg = rig.deps().registry;
    expect(sorted(await series(reg, "ringwatch_gpu_job_info"))).toEqual(
      want([
        { gpu: "0", gpu_instance: "2", mig_profile: "1c.3g.71gb", ...EMPTY, namespace: "infer", pod: "a-0", container: "app" },
        { gpu: "0", gpu_instance: "2", mig_profile: "2c.3g.71gb", ...EMPTY, namespace: "infer", pod: "b-0", container: "app" },
        { gpu: "0", gpu_instance: "9", mig_profile: "1g.18gb", ...EMPTY, namespace: "train", pod: "c-0", container: "trainer" },
        { gpu: "0", gpu_instance: "10", mig_profile: "1g.18gb", ...EMPTY, namespace: "train", pod: "d-0", container: "trainer" },
        { gpu: "1", gpu_instance: "", mig_profile: "", ...EMPTY, namespace: "train", pod: "e-0", container: "trainer" },
      ]),
    );
    expect(await valueOf(reg, "ringwatch_job_unmatched_devices")).toBe(1);
    expect(migRuns()).toEqual(["-L", "-q"]);
  });

  it("the same container on two MIG devices of one GPU, with its process: both series carry the pod UID", async () => {
    nvsmi("nvidia_smi_list/02-nvgpuexp-h200-MIG-590.48.01.txt", "nvidia_smi_q/02-nvgpuexp-h200-MIG-590.48.01-load.txt");
    const { socket } = await server([migPod("train", "llama-0", "trainer", "nvidia.com/mig-1g.18gb", [MIG(3), MIG(4)])]);
    // nvidia-smi names the whole GPU (its UUID) for a process on a MIG device.
    const apps = join(rig.tmp(), "apps.csv");
    writeFileSync(apps, `2202, ${H200}, 00000000:83:00.0\n`);
    vi.stubEnv("FAKE_NVSMI_APPS", apps);
    await make({ "0": H200 }, { podResourcesSocket: socket }).update?.();
    expect(sorted(await series(rig.deps().registry, "ringwatch_gpu_job_info"))).toEqual(
      want(
        ["9", "10"].map((gi) => ({
          gpu: "0",
          gpu_instance: gi,
          mig_profile: "1g.18gb",
          ...EMPTY,
          namespace: "train",
          pod: "llama-0",
          container: "trainer",
          pod_uid: UID_2202,
        })),
      ),
    );
  });

  it("old-form ids carry their GPU and GPU instance: -L gives the profile, -q is not run", async () => {
    nvsmi("nvidia_smi_list/07-cloud-native-docs-a100-old-form-mixed-DOCS.txt", undefined);
    const { socket } = await server([
      migPod("infer", "a-0", "app", "nvidia.com/mig-2g.10gb", [OLD(3)]),
      migPod("infer", "b-0", "app", "nvidia.com/mig-1g.5gb", [OLD(9)]),
    ]);
    await make({ "2": A100 }, { podResourcesSocket: socket }).update?.();
    const reg = rig.deps().registry;
    expect(sorted(await series(reg, "ringwatch_gpu_job_info"))).toEqual(
      want([
        { gpu: "2", gpu_instance: "3", mig_profile: "2g.10gb", ...EMPTY, namespace: "infer", pod: "a-0", container: "app" },
        { gpu: "2", gpu_instance: "9", mig_profile: "1g.5gb", ...EMPTY, namespace: "infer", pod: "b-0", container: "app" },
      ]),
    );
    expect(await valueOf(reg, "ringwatch_job_unmatched_devices")).toBe(0);
    expect(migRuns()).toEqual(["-L"]);
  });

  it("no nvidia-smi: new-form ids stay unmatched, old-form ids are mapped from the id alone; one info line, no failure", async () => {
    const { logger, lines } = memoryLogger("info");
    const deps = { ...makeDeps(), logger };
    const { socket } = await server([
      migPod("infer", "a-0", "app", "nvidia.com/mig-1g.18gb", [MIG(3)]),
      migPod("infer", "b-0", "app", "nvidia.com/mig-2g.10gb", [OLD(3)]),
    ]);
    const c = make({ "0": H200, "2": A100 }, { podResourcesSocket: socket, nvidiaSmi: join(rig.tmp(), "no-nvidia-smi") }, deps);
    await c.update?.();
    await c.update?.();
    expect(await series(deps.registry, "ringwatch_gpu_job_info")).toEqual([
      { labels: { gpu: "2", gpu_instance: "3", mig_profile: "", ...EMPTY, namespace: "infer", pod: "b-0", container: "app" }, value: 1 },
    ]);
    expect(await valueOf(deps.registry, "ringwatch_job_unmatched_devices")).toBe(1);
    const said = lines().filter((l) => String(l["msg"]).includes("MIG"));
    expect(said).toHaveLength(1);
    expect(said[0]?.["level"]).toBe(30);
    expect(String(said[0]?.["msg"])).toContain("not found");
  });

  it("nvidia-smi -L failing: ids stay unmatched and a warning says why, once; pod-resources still answers", async () => {
    const { logger, lines } = memoryLogger("info");
    const deps = { ...makeDeps(), logger };
    nvsmi(undefined, undefined);
    vi.stubEnv("FAKE_NVSMI_MODE", "fail");
    const { socket } = await server([migPod("infer", "a-0", "app", "nvidia.com/mig-1g.18gb", [MIG(3)])]);
    const c = make({ "0": H200 }, { podResourcesSocket: socket }, deps);
    await c.update?.();
    await c.update?.();
    expect(await series(deps.registry, "ringwatch_gpu_job_info")).toEqual([]);
    expect(await valueOf(deps.registry, "ringwatch_job_unmatched_devices")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_job_source_up", { source: "pod_resources" })).toBe(1);
    const warned = lines().filter((l) => l["level"] === 40 && String(l["msg"]).includes("nvidia-smi -L failed"));
    expect(warned).toHaveLength(1);
    expect(String(warned[0]?.["msg"])).toContain("couldn't communicate with the NVIDIA driver");
    // The failed answer counts as an answer: the second poll did not ask again.
    expect(migRuns()).toEqual(["-L"]);
  });

  it("nvidia-smi -q failing: devices are on their GPU with their profile, gpu_instance empty", async () => {
    nvsmi("nvidia_smi_list/02-nvgpuexp-h200-MIG-590.48.01.txt", undefined);
    const { socket } = await server([migPod("infer", "a-0", "app", "nvidia.com/mig-2g.35gb", [MIG(2)])]);
    await make({ "0": H200 }, { podResourcesSocket: socket }).update?.();
    expect(await series(rig.deps().registry, "ringwatch_gpu_job_info")).toEqual([
      { labels: { gpu: "0", gpu_instance: "", mig_profile: "2g.35gb", ...EMPTY, namespace: "infer", pod: "a-0", container: "app" }, value: 1 },
    ]);
    expect(migRuns()).toEqual(["-L", "-q"]);
  });

  it("asks nvidia-smi only when pod-resources lists MIG ids; again after the refresh period, or once for a MIG id it did not list", async () => {
    nvsmi("nvidia_smi_list/01-nvgpuexp-h100-MIG-590.48.01.txt", "nvidia_smi_q/01-nvgpuexp-h100-MIG-590.48.01-idle.txt");
    let now = 1_000_000;
    const deps = makeDeps({ now: () => now });
    const { socket, fake } = await server([gpuPod("train", "e-0", "trainer", [H200])]);
    const c = make({ "0": H200 }, { podResourcesSocket: socket }, deps);
    await c.update?.();
    expect(migRuns()).toEqual([]); // no MIG id: no fork
    fake.setPods([migPod("infer", "a-0", "app", "nvidia.com/mig-1g.10gb", [MIG(2)])]);
    await c.update?.();
    expect(migRuns()).toHaveLength(2);
    expect(await series(deps.registry, "ringwatch_gpu_job_info")).toEqual([
      { labels: { gpu: "0", gpu_instance: "9", mig_profile: "1g.10gb", ...EMPTY, namespace: "infer", pod: "a-0", container: "app" }, value: 1 },
    ]);
    // A listed id on the next polls: the kept answer.
    fake.setPods([migPod("infer", "a-0", "app", "nvidia.com/mig-1g.10gb", [MIG(2)]), migPod("infer", "b-0", "app", "nvidia.com/mig-1g.10gb", [MIG(3)])]);
    now += 60_000;
    await c.update?.();
    expect(migRuns()).toHaveLength(2);
    expect(
      await valueOf(deps.registry, "ringwatch_gpu_job_info", {
        gpu: "0",
        gpu_instance: "10",
        mig_profile: "1g.10gb",
        ...EMPTY,
        namespace: "infer",
        pod: "b-0",
        container: "app",
      }),
    ).toBe(1);
    // An id the answer did not list: asked once, not at every poll.
    fake.setPods([migPod("infer", "ghost", "app", "nvidia.com/mig-1g.10gb", ["MIG-5a1b2c3d-0000-5e6f-8a9b-000000000000"])]);
    await c.update?.();
    await c.update?.();
    expect(migRuns()).toHaveLength(4);
    expect(await valueOf(deps.registry, "ringwatch_job_unmatched_devices")).toBe(1);
    // The refresh period passed: asked again.
    now += REFRESH_MS;
    await c.update?.();
    expect(migRuns()).toEqual(["-L", "-q", "-L", "-q", "-L", "-q"]);
  });
});
