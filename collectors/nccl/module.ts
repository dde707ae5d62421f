/** The nccl collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { ConfigError } from "../settings/flags.js";
import { formatHostPort } from "../settings/host-port.js";
import { createNcclCollector } from "./collector.js";
import { isGpuReadings } from "./verdict/gpu-readings.js";
import { isGpuProcesses } from "./ras/gpu-processes.js";
import { parseRasAddress, type RasAddress } from "./ras/client.js";
import type { NcclSettings } from "./settings.js";

/** --collector.nccl.path's default: where no job has logged yet, its absence is logged at info. */
const DEFAULT_LOG_PATH = "/var/log/nccl";

const FLAGS = [
  {
    name: "collector.nccl.path",
    kind: "list",
    default: DEFAULT_LOG_PATH,
    help: "Directory or glob of NCCL / PyTorch log files to follow; repeat the flag for more (environment and YAML: comma-separated or a list).",
  },
  {
    name: "collector.nccl.hang-threshold",
    kind: "duration",
    default: "120s",
    help: "Silence of every live rank of a communicator after which a hang is suspected (stretched to 10x the communicator's recent p99 gap, at most 30m).",
  },
  {
    name: "collector.nccl.max-communicators",
    kind: "int",
    default: "256",
    help: "Communicators tracked at once; more are dropped and counted (ringwatch_nccl_communicators_dropped_total).",
  },
  {
    name: "collector.nccl.rank-series",
    kind: "enum",
    choices: ["suspect", "always"],
    default: "suspect",
    help: "When each rank of a communicator has its own series (rank_info, rank_progress, rank_last_progress_timestamp_seconds): suspect, only while its communicator is hung, mismatched, has a rank behind or a straggler (candidate); always, every rank of every communicator (small clusters; docs/metrics.md, NCCL series budget).",
  },
  {
    name: "collector.nccl.max-series",
    kind: "int",
    default: "2000",
    help: "At most this many NCCL series of communicators, ranks and rank processes per scrape; the least urgent are left out, counted (ringwatch_nccl_series_dropped) and logged once.",
  },
  {
    name: "collector.nccl.retire-after",
    kind: "duration",
    default: "1h",
    help: "Forget a process whose liveness cannot be checked (another host's or another PID namespace's pid) after this long without a line.",
  },
  {
    name: "collector.nccl.check-pids",
    kind: "bool",
    default: "true",
    help: "Check that each rank's process still runs, to tell a finished job from a hung one: its pid in <path.procfs>, or in a container the process whose innermost NSpid is that pid and that has the log open.",
  },
  {
    name: "collector.nccl.ras",
    kind: "bool",
    default: "true",
    help: "Ask NCCL's RAS service (NCCL 2.24+, on by default in every job) for the job-wide status every interval: the hang verdict and the ranks behind, on every node, with no COLL line (docs/nccl.md, production mode).",
  },
  {
    name: "collector.nccl.ras-addr",
    kind: "string",
    default: "localhost:28028",
    help: "Address of NCCL's RAS client socket, HOST:PORT as the job's NCCL_RAS_ADDR sets it (NCCL's default is localhost:28028).",
  },
  {
    name: "collector.nccl.ras-interval",
    kind: "duration",
    default: "30s",
    help: "Ask NCCL's RAS service this often (±10 % jitter): a RAS hang is called within the hang threshold plus this. Each query makes every process of the job send its counts over RAS's own TCP network; nothing listening costs one refused connection.",
  },
  {
    name: "collector.nccl.ras-querier",
    kind: "enum",
    default: "elected",
    choices: ["elected", "every-node"],
    help: "Who asks NCCL RAS on a timer: elected, one node per job (the one that hosts rank 0 of its largest communicator; the others ask only on local suspicion, and take over when its agent is gone), or every-node (each node every interval: a job of N nodes pays N job-wide collections per interval).",
  },
  {
    name: "collector.nccl.ras-settle",
    kind: "duration",
    default: "2m",
    help: "No RAS query for this long after a job's RAS service appears, or after a report shows a rank still in init: a query while communicators are created has crashed jobs (NVIDIA/nccl#1669, #2346).",
  },
  {
    name: "collector.nccl.ras-poll-known-defective",
    kind: "bool",
    default: "false",
    help: "Ask NCCL RAS on a timer even where the job's NCCL version has a known RAS defect that a query can set off (docs/nccl.md lists them); by default those are asked only on local suspicion of a hang.",
  },
  {
    name: "collector.nccl.ras-inspector-switch",
    kind: "bool",
    default: "false",
    help: "When a hang begins, the job's RAS querier switches NCCL Inspector on job-wide (CONTROL PROFILER_MASK through RAS, NCCL 2.31.2+, the job loading the Inspector plugin) for --collector.nccl.ras-inspector-window, then always off again.",
  },
  {
    name: "collector.nccl.ras-inspector-window",
    kind: "duration",
    default: "2m",
    help: "How long NCCL Inspector stays switched on by --collector.nccl.ras-inspector-switch (it goes off sooner when the hang ends or the agent stops).",
  },
  {
    name: "collector.nccl.ras-peer-port",
    kind: "int",
    default: "9742",
    help: "Port of the other nodes' ringwatch agents: a node that is not its job's RAS querier reads the querier's /nccl/ras-role there, to take over when that agent or node is gone (0: never; no takeover).",
  },
  {
    name: "collector.nccl.node-address",
    kind: "list",
    default: "",
    help: "The addresses NCCL RAS names this node by (its ranks' bootstrap addresses); repeat for more; empty: every address of this node's interfaces.",
  },
  {
    name: "collector.nccl.flight-recorder.dump",
    kind: "string",
    default: "",
    help: "The job's TORCH_FR_DUMP_TEMP_FILE (older PyTorch: TORCH_NCCL_DEBUG_INFO_TEMP_FILE), as a path prefix: the Flight Recorder dumps <prefix><rank> are read and analyzed when they appear (empty: off).",
  },
  {
    name: "collector.nccl.flight-recorder.pipe",
    kind: "string",
    default: "",
    help: "The job's TORCH_NCCL_DEBUG_INFO_PIPE_FILE, as a path prefix: when a hang is suspected, each rank here is asked through <prefix><rank>.pipe to dump its Flight Recorder (needs --collector.nccl.flight-recorder.dump; empty: only dumps PyTorch writes by itself are read).",
  },
  {
    name: "collector.nccl.inspector.path",
    kind: "list",
    default: "",
    help: "Directory or glob of NCCL Inspector output, the job's NCCL_INSPECTOR_DUMP_DIR (its <hostname>-pid<pid>.log JSON files are followed: completed collectives, GPU-timed execution and bus bandwidth per rank, stragglers, bandwidth drops); repeat for more; empty: off.",
  },
  {
    name: "collector.nccl.stacks.source",
    kind: "enum",
    default: "worker",
    choices: ["off", "worker", "py-spy", "auto"],
    help: "Where the Python stacks of this node's ranks of a suspect communicator (a hang, a rank behind) come from, once per episode: worker, the job's own PyTorch worker server at --collector.nccl.stacks.worker-socket (nothing while that is empty); py-spy, `py-spy dump --nonblocking` (needs py-spy on PATH and CAP_SYS_PTRACE: the opt-in overlays systemd/ringwatch-stacks.conf and deploy/kubernetes/py-spy/); auto, the worker server where the rank's socket is there, else py-spy; off (docs/nccl.md, live stacks).",
  },
  {
    name: "collector.nccl.stacks.worker-socket",
    kind: "string",
    default: "",
    help: "The Unix socket of each rank's PyTorch worker server, as the job sets TORCH_WORKER_SERVER_SOCKET per rank, with {rank} (the global rank) and/or {pid} (the rank's pid as the job sees it), e.g. /run/torch-debug/rank{rank}.sock; empty: none.",
  },
  {
    name: "collector.nccl.stacks.timeout",
    kind: "duration",
    default: "10s",
    help: "How long one rank process's stack collection may take (the worker server's answer, or py-spy, which is then killed).",
  },
  {
    name: "collector.nccl.stacks.max-per-minute",
    kind: "int",
    default: "16",
    help: "At most this many rank processes' stacks are taken a minute, in all (an episode over it waits, counted as rate_limited in ringwatch_nccl_stack_collections_total).",
  },
  {
    name: "collector.nccl.polling",
    kind: "enum",
    default: "auto",
    choices: ["auto", "true", "false"],
    help: "Poll log files instead of inotify: auto polls on NFS, Lustre, GPFS, CIFS and FUSE, where inotify misses writes.",
  },
] as const;

const RESTART_ONLY = new Set([
  "collector.nccl.inspector.path",
  "collector.nccl.ras-querier",
  "collector.nccl.ras-peer-port",
  "collector.nccl.node-address",
  "collector.nccl.ras-inspector-switch",
]);

function rasAddress(text: string): RasAddress {
  const address = parseRasAddress(text);
  if (address === undefined)
    throw new ConfigError(`invalid value "${text}" for --collector.nccl.ras-addr: expected HOST:PORT (e.g. localhost:28028, [::1]:28028)`);
  return address;
}

function peerPort(n: number): number {
  if (n > 65535) throw new ConfigError(`invalid value "${n}" for --collector.nccl.ras-peer-port: a TCP port (1-65535), or 0 for none`);
  return n;
}

function socketPattern(p: string): string {
  if (p === "") return p;
  if (!p.startsWith("/")) throw new ConfigError(`invalid value "${p}" for --collector.nccl.stacks.worker-socket: an absolute path`);
  if (!p.includes("{rank}") && !p.includes("{pid}"))
    throw new ConfigError(`invalid value "${p}" for --collector.nccl.stacks.worker-socket: one socket per rank, named with {rank} or {pid}`);
  return p;
}

export const ncclModule: CollectorModule<"nccl", NcclSettings> = {
  name: "nccl",
  enabledByDefault: true,
  switchHelp: "Enable the nccl collector (follows NCCL_DEBUG_FILE and PyTorch logs, detects hangs).",
  flags: FLAGS,
  uses: ["path.procfs"],
  poll: false,
  // reconfigure() applies every one of its settings without losing state.
  // The RAS election's settings shape the watch when it is made: a change needs a restart.
  reloadable: [...FLAGS.filter((f) => !RESTART_ONLY.has(f.name)).map((f) => f.name), "path.procfs"],
  read(r) {
    const paths = r.list("collector.nccl.path");
    if (paths.length === 0) throw new ConfigError("invalid value for --collector.nccl.path: at least one directory or glob");
    const polling = r.choice<"auto" | "true" | "false">("collector.nccl.polling");
    const ras = r.bool("collector.nccl.ras")
      ? {
          address: r.parsed("collector.nccl.ras-addr", rasAddress, (a) => formatHostPort(a.host, a.port)),
          intervalMs: r.duration("collector.nccl.ras-interval"),
          elected: r.choice<"elected" | "every-node">("collector.nccl.ras-querier") === "elected",
          settleMs: r.duration("collector.nccl.ras-settle"),
          pollKnownDefective: r.bool("collector.nccl.ras-poll-known-defective"),
          peerPort: peerPort(r.int("collector.nccl.ras-peer-port", 0)),
          nodeAddresses: r.list("collector.nccl.node-address"),
          inspectorWindowMs: r.bool("collector.nccl.ras-inspector-switch") ? r.duration("collector.nccl.ras-inspector-window") : undefined,
        }
      : undefined;
    const frDump = r.text("collector.nccl.flight-recorder.dump");
    const frPipe = r.text("collector.nccl.flight-recorder.pipe");
    if (frPipe !== "" && frDump === "")
      throw new ConfigError("--collector.nccl.flight-recorder.pipe needs --collector.nccl.flight-recorder.dump (where the ranks write their dumps)");
    return {
      paths,
      hangThresholdMs: r.duration("collector.nccl.hang-threshold"),
      maxCommunicators: r.int("collector.nccl.max-communicators", 1),
      series: { rankSeries: r.choice("collector.nccl.rank-series") === "always" ? "always" : "suspect", maxSeries: r.int("collector.nccl.max-series", 1) },
      retireAfterMs: r.duration("collector.nccl.retire-after"),
      checkPids: r.bool("collector.nccl.check-pids"),
      polling: polling === "auto" ? "auto" : polling === "true",
      ras,
      inspectorPaths: r.list("collector.nccl.inspector.path"),
      flightRecorder: frDump === "" ? undefined : { dumpPrefix: frDump, ...(frPipe !== "" ? { pipePrefix: frPipe } : {}) },
      stacks: {
        source: r.choice<"off" | "worker" | "py-spy" | "auto">("collector.nccl.stacks.source"),
        workerSocket: socketPattern(r.text("collector.nccl.stacks.worker-socket")),
        timeoutMs: r.duration("collector.nccl.stacks.timeout"),
        maxPerMinute: r.int("collector.nccl.stacks.max-per-minute", 1),
      },
    };
  },
  create({ deps, settings: n, common, peer }) {
    const gpu = peer("gpu");
    return createNcclCollector(deps, {
      paths: n.paths,
      quietWhenMissing: [DEFAULT_LOG_PATH],
      procfsRoot: common.procfsRoot,
      hangThresholdMs: n.hangThresholdMs,
      maxComms: n.maxCommunicators,
      series: n.series,
      retireAfterMs: n.retireAfterMs,
      checkPids: n.checkPids,
      usePolling: n.polling,
      ...(isGpuReadings(gpu) ? { gpu } : {}),
      // The job collector comes later in the list: asked when a RAS answer is checked, not now.
      gpuProcesses: () => {
        const job = peer("job");
        return isGpuProcesses(job) ? job.computePids() : [];
      },
      ...(n.ras !== undefined ? { ras: n.ras } : {}),
      ...(n.flightRecorder !== undefined ? { flightRecorder: n.flightRecorder } : {}),
      ...(n.inspectorPaths.length > 0 ? { inspectorPaths: n.inspectorPaths } : {}),
      stacks: n.stacks,
    });
  },
};
