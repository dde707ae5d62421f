/**
 * Every setting of the agent, declared once. Each has a flag (`--name=value`), an environment
 * variable (RINGWATCH_ + name upper-cased, `.` and `-` as `_`) and a YAML key (the same dotted
 * name, nested or flat). Precedence: flag > environment > YAML file > default.
 */
import { DEFAULT_DEVICE_EXCLUDE } from "../../collectors/mtu/filter.js";

export type FlagKind = "string" | "bool" | "duration" | "regex" | "address" | "enum" | "level" | "list" | "int";

export interface FlagDef {
  name: string;
  kind: FlagKind;
  help: string;
  /** Default as it would be written on the command line (undefined = unset). */
  default?: string;
  /** Allowed values for kind "enum" / "level". */
  choices?: readonly string[];
}

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** Default listen port: 9742 (not 9100 node_exporter, 9400 dcgm-exporter, 9835, 9315/9683, 15132). */
export const DEFAULT_PORT = 9742;

export const FLAGS: readonly FlagDef[] = [
  { name: "web.listen-address", kind: "address", default: `:${DEFAULT_PORT}`, help: "Address to serve /metrics, /healthz and / on: [host]:port." },
  { name: "web.telemetry-path", kind: "string", default: "/metrics", help: "Path under which to expose metrics." },
  { name: "web.config.file", kind: "string", help: "Optional exporter-toolkit web config file: TLS, client certificates, basic auth, headers, rate limit (re-read when it or a certificate changes)." },
  { name: "path.sysfs", kind: "string", default: "/sys", help: "sysfs mount point (the InfiniBand collector reads <path>/class/infiniband)." },
  { name: "path.procfs", kind: "string", default: "/proc", help: "procfs mount point (the gdr collector reads <path>/modules)." },
  { name: "config.file", kind: "string", help: "Optional YAML file with the same settings (keys are flag names, nested or dotted)." },
  { name: "log.level", kind: "level", default: "info", choices: LOG_LEVELS, help: "Only log messages at or above this level: debug, info, warn, error." },
  { name: "once", kind: "bool", default: "false", help: "Run every enabled collector once, print the exposition to stdout and exit 0." },
  { name: "collector.interval", kind: "duration", default: "15s", help: "Poll interval of the infiniband, gdr and mtu collectors (must divide a minute or an hour)." },
  { name: "collector.timeout", kind: "duration", default: "10s", help: "Time limit of one poll, and of every external command it runs (the command is killed)." },
  { name: "collector.gpu", kind: "bool", default: "true", help: "Enable the gpu collector (one long-lived nvidia-smi dmon)." },
  { name: "collector.gpu.nvidia-smi", kind: "string", default: "nvidia-smi", help: "Path of nvidia-smi." },
  { name: "collector.gpu.interval", kind: "duration", default: "5s", help: "dmon sampling interval (-d), whole seconds." },
  { name: "collector.gpu.dmon-groups", kind: "string", default: "pucvmet", help: "dmon metric groups (-s)." },
  { name: "collector.infiniband", kind: "bool", default: "true", help: "Enable the infiniband collector." },
  { name: "collector.infiniband.source", kind: "enum", default: "auto", choices: ["auto", "sysfs", "tools"], help: "Where to read ports and counters: auto (sysfs when present, else tools), sysfs, tools (ibstat + perfquery)." },
  { name: "collector.infiniband.ibstat", kind: "string", default: "ibstat", help: "Path of ibstat." },
  { name: "collector.infiniband.perfquery", kind: "string", default: "perfquery", help: "Path of perfquery." },
  { name: "collector.infiniband.device-include", kind: "regex", help: "Only report HCAs whose name matches this regular expression." },
  { name: "collector.infiniband.device-exclude", kind: "regex", help: "Do not report HCAs whose name matches this regular expression." },
  { name: "collector.infiniband.interval", kind: "duration", help: "Poll interval of the infiniband collector (default: --collector.interval)." },
  { name: "collector.gdr", kind: "bool", default: "true", help: "Enable the gdr (GPUDirect RDMA readiness) collector." },
  { name: "collector.gdr.lsmod", kind: "string", default: "lsmod", help: "Path of lsmod, used only when <path.procfs>/modules is absent." },
  { name: "collector.gdr.interval", kind: "duration", help: "Poll interval of the gdr collector (default: --collector.interval)." },
  { name: "collector.mtu", kind: "bool", default: "true", help: "Enable the mtu collector (ip -j -d link show)." },
  { name: "collector.mtu.ip", kind: "string", default: "ip", help: "Path of ip (iproute2)." },
  { name: "collector.mtu.device-include", kind: "regex", help: "Only report interfaces whose name matches this regular expression." },
  { name: "collector.mtu.device-exclude", kind: "regex", default: DEFAULT_DEVICE_EXCLUDE.source, help: "Do not report interfaces whose name matches this regular expression; empty reports all (default: per-pod, per-VM and overlay interfaces)." },
  { name: "collector.mtu.interval", kind: "duration", help: "Poll interval of the mtu collector (default: --collector.interval)." },
  { name: "collector.nccl", kind: "bool", default: "true", help: "Enable the nccl collector (follows NCCL_DEBUG_FILE and PyTorch logs, detects hangs)." },
  { name: "collector.nccl.path", kind: "list", default: "/var/log/nccl", help: "Directory or glob of NCCL / PyTorch log files to follow; repeat the flag for more (environment and YAML: comma-separated or a list)." },
  { name: "collector.nccl.hang-threshold", kind: "duration", default: "120s", help: "Silence of every live rank of a communicator after which a hang is suspected (stretched to 10x the communicator's recent p99 gap, at most 30m)." },
  { name: "collector.nccl.max-communicators", kind: "int", default: "256", help: "Communicators tracked at once; more are dropped and counted (ringwatch_nccl_communicators_dropped_total)." },
  { name: "collector.nccl.retire-after", kind: "duration", default: "1h", help: "Forget a process whose liveness cannot be checked (another host's or another PID namespace's pid) after this long without a line." },
  { name: "collector.nccl.check-pids", kind: "bool", default: "true", help: "Check that each rank's process still runs, to tell a finished job from a hung one: its pid in <path.procfs>, or in a container the process whose innermost NSpid is that pid and that has the log open." },
  { name: "collector.nccl.ras", kind: "bool", default: "true", help: "While a hang is suspected on this node, ask NCCL's RAS service (NCCL 2.24+) for the job-wide status: it names the ranks behind on every node (ringwatch_nccl_ras_*)." },
  { name: "collector.nccl.ras-addr", kind: "string", default: "localhost:28028", help: "Address of NCCL's RAS client socket, HOST:PORT as the job's NCCL_RAS_ADDR sets it (NCCL's default is localhost:28028)." },
  { name: "collector.nccl.ras-interval", kind: "duration", default: "60s", help: "While a hang lasts, ask NCCL's RAS service again this often (each query makes every process of the job answer)." },
  { name: "collector.nccl.polling", kind: "enum", default: "auto", choices: ["auto", "true", "false"], help: "Poll log files instead of inotify: auto polls on NFS, Lustre, GPFS, CIFS and FUSE, where inotify misses writes." },
];

export function envName(flag: string): string {
  return "RINGWATCH_" + flag.toUpperCase().replace(/[.-]/g, "_");
}
