/**
 * job collector (poll): whose job each GPU and each process running NCCL ranks on this node belongs
 * to, as info series to join in PromQL. Sources, each optional: the kubelet's pod-resources socket
 * (which containers were given which GPU), nvidia-smi's compute processes (which pids compute on
 * which GPU), each process's <procfs>/<pid>/cgroup (pod UID, Slurm job and step), and the nccl
 * collector's ranks with their processes. Reports itself absent only when it has none of them.
 * When pod-resources lists MIG devices, nvidia-smi -L (and -q) say which GPU and GPU instance each
 * is on (mig.ts, kept between polls).
 */
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { CollectorError, type Collector, type CollectorDeps } from "../collector.js";
import { attribute, gpuDeviceId } from "./attribution.js";
import { parseCgroup, type CgroupJob } from "./cgroup.js";
import { queryComputeApps, type ComputeApp, type ComputeAppsResult } from "./compute-apps.js";
import { JobMetrics, type SourceName } from "./metrics.js";
import { MigTable, type MigDevice } from "./mig.js";
import type { GpuIdentities, NcclRanks } from "./peers.js";
import { listPodResources, type PodResourcesResult } from "./pod-resources.js";

export interface JobOptions {
  /** Root of procfs (--path.procfs): <root>/<pid>/cgroup. */
  procfsRoot: string;
  /** The kubelet's pod-resources socket; "" turns the source off. */
  podResourcesSocket: string;
  /** nvidia-smi for --query-compute-apps, and -L / -q for MIG devices; "" turns both off. */
  nvidiaSmi: string;
  /** Limit of the List call and of nvidia-smi, ms. */
  timeoutMs: number;
  gpu?: GpuIdentities;
  nccl?: NcclRanks;
}

type Outcome = PodResourcesResult | ComputeAppsResult | { state: "off" };

/**
 * Whether pids this process sees are <procfsRoot>'s: its `self` link names our own pid (or it has
 * none, as a fixture tree). A DaemonSet without hostPID reads the host's /proc under another PID
 * namespace: nvidia-smi's pids are then not the host's, and are not looked up.
 */
export function samePidNamespace(procfsRoot: string): boolean {
  try {
    return readlinkSync(join(procfsRoot, "self")) === String(process.pid);
  } catch {
    return true;
  }
}

function cgroupReader(procfsRoot: string): (pid: number) => CgroupJob | undefined {
  return (pid) => {
    try {
      // A cgroup file is a few hundred bytes; more than 64 KiB is not one.
      const text = readFileSync(join(procfsRoot, String(pid), "cgroup"), "latin1");
      return text.length > 65536 ? undefined : parseCgroup(text);
    } catch {
      return undefined; // gone meanwhile, or hidden (hidepid)
    }
  };
}

/** The job collector; the nccl collector reads its GPU compute processes (nccl/ras/gpu-processes.ts). */
export interface JobCollector extends Collector {
  /** Pids of the GPU compute processes of the last poll (none before the first, or in another PID namespace). */
  computePids(): readonly number[];
}

export function createJobCollector(deps: CollectorDeps, opts: JobOptions): JobCollector {
  const log = deps.logger;
  const metrics = new JobMetrics(deps.registry);
  const logged = new Map<SourceName, string>();
  let namespaceLogged = false;
  const migTable =
    opts.nvidiaSmi !== "" ? new MigTable({ exec: deps.exec, nvidiaSmi: opts.nvidiaSmi, timeoutMs: opts.timeoutMs, now: deps.now, log }) : undefined;
  const noMig: ReadonlyMap<string, MigDevice> = new Map();

  /** The MIG devices of the MIG ids pod-resources listed (none listed: nothing asked). */
  async function migDevices(pods: PodResourcesResult | { state: "off" }, started: number): Promise<ReadonlyMap<string, MigDevice>> {
    if (migTable === undefined || pods.state !== "ok") return noMig;
    const ids = new Set(pods.devices.map((d) => gpuDeviceId(d.deviceId)).filter((id): id is string => id?.startsWith("mig-") === true));
    // The poll as a whole runs under --collector.timeout: a refresh gets what is left of it.
    return migTable.lookup(ids, opts.timeoutMs - (performance.now() - started) - 250);
  }

  /** One log line per change of a source's state; absence is normal and logged at debug. */
  function note(source: SourceName, o: Outcome): void {
    const msg = o.state === "ok" || o.state === "off" ? "" : `${o.state}: ${o.message}`;
    if (logged.get(source) === msg) return;
    const before = logged.get(source);
    logged.set(source, msg);
    if (msg === "") {
      if (before !== undefined) log.info({ source }, `job: ${source} answers again`);
    } else if (o.state === "absent") log.debug({ source, reason: msg }, `job: ${source} not present`);
    else if (o.state === "denied")
      log.warn(
        { source, reason: msg },
        `job: cannot read the kubelet's pod-resources socket: permission denied; it needs uid 0 (or the socket's owner): collectors/job/README.md, "Privileges". Pods are still found by their cgroup.`,
      );
    else log.warn({ source, reason: msg }, `job: ${source} failed`);
  }

  /** The GPU compute processes of the last poll (the nccl collector's RAS check asks: ras/gpu-processes.ts). */
  let gpuPids: readonly number[] = [];

  async function update(): Promise<void> {
    const started = performance.now();
    const off = { state: "off" } as const;
    const podsP: Promise<PodResourcesResult | typeof off> =
      opts.podResourcesSocket !== "" ? listPodResources(opts.podResourcesSocket, opts.timeoutMs) : Promise.resolve(off);
    const appsP: Promise<ComputeAppsResult | typeof off> =
      opts.nvidiaSmi !== "" ? queryComputeApps(deps.exec, opts.nvidiaSmi, opts.timeoutMs) : Promise.resolve(off);
    const migP = podsP.then((p) => migDevices(p, started));
    const [pods, apps, mig] = await Promise.all([podsP, appsP, migP]);
    note("pod_resources", pods);
    note("compute_apps", apps);
    const up = new Map<SourceName, boolean>();
    if (pods.state !== "off") up.set("pod_resources", pods.state === "ok");
    if (apps.state !== "off") up.set("compute_apps", apps.state === "ok");
    metrics.sources(up);

    let computeApps: readonly ComputeApp[] = apps.state === "ok" ? apps.apps : [];
    if (computeApps.length > 0 && !samePidNamespace(opts.procfsRoot)) {
      if (!namespaceLogged)
        log.info(
          `job: nvidia-smi runs in another PID namespace than ${opts.procfsRoot}: its pids are not looked up (pods are found through pod-resources and the NCCL ranks' processes)`,
        );
      namespaceLogged = true;
      computeApps = [];
    }
    gpuPids = computeApps.map((a) => a.pid);
    const ranks = opts.nccl?.rankProcesses() ?? [];

    const present = [pods, apps].filter((o) => o.state !== "off" && o.state !== "absent");
    if (present.length === 0 && opts.nccl === undefined) {
      metrics.withdraw();
      throw new CollectorError("no attribution source: no pod-resources socket, no nvidia-smi, and the nccl collector is off", { absent: true });
    }
    const answered = pods.state === "ok" || apps.state === "ok" || ranks.length > 0;
    if (!answered && (pods.state === "denied" || pods.state === "error")) {
      metrics.withdraw();
      throw new CollectorError(`job: no source answered; pod-resources: ${pods.message}`);
    }
    metrics.publish(
      attribute({
        gpus: opts.gpu?.identities() ?? new Map(),
        devices: pods.state === "ok" ? pods.devices : [],
        mig,
        apps: computeApps,
        ranks,
        cgroupOf: cgroupReader(opts.procfsRoot),
      }),
    );
  }

  return { name: "job", mode: "poll", update, once: update, computePids: () => gpuPids };
}
