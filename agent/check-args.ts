/**
 * The command line of `ringwatch check`: its own flags (`--check.*`, `--json`, `--help`) are taken
 * out, and every other argument is the agent's (collector settings, paths, tools), read by the
 * agent's parser as `ringwatch --once` reads them. A bad flag is one line and exit 2 (docs/check.md).
 */
import { ConfigError, type FlagDef } from "../collectors/settings/flags.js";

export const USAGE = "usage: ringwatch check [--json] [--check.file=FILE] [--check.<expectation>=VALUE ...] [agent flags ...]";

/** The expectations and limits of the check, each also a key of --check.file without `check.` (docs/check.md). */
export const CHECK_FLAGS: readonly FlagDef[] = [
  { name: "check.file", kind: "string", help: "YAML file of expectations: the keys below without `check.`, nested or dotted." },
  { name: "check.gpu.count", kind: "int", help: "GPUs nvidia-smi must list (gpu.count)." },
  { name: "check.ib.ports", kind: "int", help: "InfiniBand/RoCE ports that must be present (ib.port.count)." },
  { name: "check.ib.rate", kind: "string", help: "Rate every ACTIVE port must run at, in Gb/s: 400, 200, 56 (ib.port.rate)." },
  {
    name: "check.ib.devices",
    kind: "list",
    help: "Ports judged, as device or device/port, * and ? as wildcards: mlx5_*, mlx5_0/1; each must match one (default: every port).",
  },
  {
    name: "check.gdr.peermem",
    kind: "bool",
    default: "false",
    help: "GPUDirect RDMA is expected: nvidia_peermem (or nv_peer_mem) must be loaded (gdr.peermem).",
  },
  { name: "check.mtu", kind: "list", help: "IFACE=BYTES, repeated or comma-separated, * and ? as wildcards: ib0=4092 (net.mtu)." },
  {
    name: "check.xid.window",
    kind: "duration",
    help: "Judge only Xids and SXids of this last while (1h, 30m); default: since boot, as far as the kernel's buffer reaches.",
  },
  {
    name: "check.xid.actions",
    kind: "list",
    default: "reset_gpu,reboot_node,drain_node",
    help: "Actions of NVIDIA's Xid catalogue that fail gpu.xid: none, restart_job, reset_gpu, reboot_node, drain_node, unknown.",
  },
  {
    name: "check.agent-url",
    kind: "string",
    help: "The node's running agent's /metrics, e.g. http://127.0.0.1:9742/metrics: nccl.ras judges the NCCL RAS diagnostics it holds (default: nccl.ras is skipped).",
  },
  { name: "check.timeout", kind: "duration", default: "30s", help: "The whole check's time limit: what has not answered by then could not be checked." },
];

/** How --help writes a flag's value where its kind says too little. */
const VALUE: Readonly<Record<string, string>> = { "check.file": "FILE", "check.ib.rate": "GBPS", "check.mtu": "IFACE=BYTES", "check.agent-url": "URL" };

export const CHECK_FLAGS_BY_NAME: ReadonlyMap<string, FlagDef> = new Map(CHECK_FLAGS.map((f) => [f.name, f]));

export const HELP = [
  USAGE,
  "  Runs the collectors once, as `ringwatch --once` does, and judges the node against the",
  "  expectations: one line per check, then a summary. Exit 0 healthy, 1 unhealthy, 2 could not check.",
  "",
  "  --json                 print one JSON document instead of lines",
  ...CHECK_FLAGS.map(
    (f) =>
      `  --${f.kind === "bool" ? `[no-]${f.name}` : `${f.name}=${VALUE[f.name] ?? f.kind.toUpperCase()}`}\n      ${f.help}${f.default ? ` (default: ${f.default})` : ""}`,
  ),
  "  -h, --help             show this help",
  "",
  "  Agent flags (ringwatch --help) choose the collectors and where they read: --path.sysfs, --path.procfs,",
  "  --collector.gpu.nvidia-smi, --collector.kmsg.device, ... The checks, their names and the JSON fields: docs/check.md.",
  "",
].join("\n");

export interface CheckArgs {
  /** --check.* values as text, by flag name (list flags joined by newlines). */
  raw: Map<string, string>;
  /** Every argument that is not the check's, in order: the agent's flags. */
  agent: string[];
  json: boolean;
  help: boolean;
}

/** The flag a `--check.x`/`--no-check.x` argument names, and its value when written `=value`. */
function checkFlag(arg: string): { def: FlagDef; name: string; value: string | undefined } | undefined {
  const body = arg.slice(2);
  const eq = body.indexOf("=");
  const name = eq < 0 ? body : body.slice(0, eq);
  const value = eq < 0 ? undefined : body.slice(eq + 1);
  const negated = name.startsWith("no-check.");
  if (!name.startsWith("check.") && !negated) return undefined;
  const def = CHECK_FLAGS_BY_NAME.get(negated ? name.slice(3) : name);
  if (def === undefined) throw new ConfigError(`unknown flag --${name} (ringwatch check --help)`);
  if (negated) {
    if (def.kind !== "bool") throw new ConfigError(`unknown flag --${name} (ringwatch check --help)`);
    if (value !== undefined) throw new ConfigError(`flag --${name} takes no value`);
    return { def, name: def.name, value: "false" };
  }
  return { def, name: def.name, value };
}

/** Splits argv into the check's flags and the agent's; throws ConfigError with one line. */
export function parseCheckArgs(argv: readonly string[]): CheckArgs {
  const out: CheckArgs = { raw: new Map(), agent: [], json: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--json") out.json = true;
    else if (arg === "-h" || arg === "--help") out.help = true;
    else if (!arg.startsWith("--")) out.agent.push(arg);
    else {
      const flag = checkFlag(arg);
      if (flag === undefined) {
        out.agent.push(arg);
        continue;
      }
      let value = flag.value;
      if (value === undefined) {
        if (flag.def.kind === "bool") value = "true";
        else {
          const next = argv[i + 1];
          if (next === undefined || next.startsWith("--")) throw new ConfigError(`flag --${flag.name} needs a value`);
          value = next;
          i++;
        }
      }
      const before = out.raw.get(flag.name);
      out.raw.set(flag.name, flag.def.kind === "list" && before !== undefined ? `${before}\n${value}` : value);
    }
  }
  return out;
}
