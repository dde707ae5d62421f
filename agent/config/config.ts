/**
 * Command line, environment and YAML file → one validated AgentConfig. Every problem is a
 * ConfigError with one clear line; main prints it and exits 2.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { intervalToCron } from "../../collectors/settings/interval.js";
import { parseDuration } from "../../collectors/settings/duration.js";
import { FLAGS, envName, type FlagDef } from "./flags.js";
import { parseRasAddress, type RasAddress } from "../../collectors/nccl/ras/client.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface ListenAddress {
  /** undefined = all interfaces */
  host: string | undefined;
  port: number;
}

export interface AgentConfig {
  listen: ListenAddress;
  telemetryPath: string;
  /** --web.config.file; undefined = plain HTTP without auth. */
  webConfigFile: string | undefined;
  sysfsRoot: string;
  procfsRoot: string;
  logLevel: LogLevel;
  once: boolean;
  timeoutMs: number;
  gpu: { enabled: boolean; nvidiaSmi: string; intervalSeconds: number; dmonGroups: string };
  infiniband: {
    enabled: boolean;
    source: "auto" | "sysfs" | "tools";
    ibstat: string;
    perfquery: string;
    deviceInclude: RegExp | undefined;
    deviceExclude: RegExp | undefined;
    intervalMs: number;
  };
  gdr: { enabled: boolean; lsmod: string; intervalMs: number };
  mtu: { enabled: boolean; ip: string; deviceInclude: RegExp | undefined; deviceExclude: RegExp | undefined; intervalMs: number };
  nccl: {
    enabled: boolean;
    paths: string[];
    hangThresholdMs: number;
    maxCommunicators: number;
    retireAfterMs: number;
    checkPids: boolean;
    polling: boolean | "auto";
    /** NCCL RAS queries during a hang; undefined when --no-collector.nccl.ras. */
    ras: { address: RasAddress; intervalMs: number } | undefined;
  };
}

/** What the command line asked for besides settings. */
export type CliAction = { kind: "run"; config: AgentConfig } | { kind: "help" } | { kind: "version" };

const BY_NAME = new Map(FLAGS.map((f) => [f.name, f]));

/** Raw settings as text, keyed by flag name. */
type RawSettings = Map<string, string>;

function parseArgv(argv: readonly string[]): { raw: RawSettings; help: boolean; version: boolean } {
  const raw: RawSettings = new Map();
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "-h" || arg === "--help") {
      help = true;
      continue;
    }
    if (arg === "--version") {
      version = true;
      continue;
    }
    if (!arg.startsWith("--")) throw new ConfigError(`unexpected argument "${arg}" (flags look like --name=value; see --help)`);
    const body = arg.slice(2);
    const eq = body.indexOf("=");
    let name = eq < 0 ? body : body.slice(0, eq);
    let value: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (!BY_NAME.has(name) && name.startsWith("no-") && BY_NAME.get(name.slice(3))?.kind === "bool") {
      if (value !== undefined) throw new ConfigError(`flag --${name} takes no value`);
      name = name.slice(3);
      value = "false";
    }
    const def = BY_NAME.get(name);
    if (!def) throw new ConfigError(`unknown flag --${name} (see --help)`);
    if (value === undefined) {
      if (def.kind === "bool") value = "true";
      else {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith("--")) throw new ConfigError(`flag --${name} needs a value`);
        value = next;
        i++;
      }
    }
    if (def.kind === "list" && raw.has(name)) raw.set(name, `${raw.get(name) ?? ""}\n${value}`);
    else raw.set(name, value);
  }
  return { raw, help, version };
}

function fromEnv(env: NodeJS.ProcessEnv): RawSettings {
  const raw: RawSettings = new Map();
  for (const def of FLAGS) {
    const v = env[envName(def.name)];
    if (v !== undefined && v !== "") raw.set(def.name, v);
  }
  return raw;
}

/** Flattens nested YAML mappings to dotted keys; `enabled` under a bool flag's name sets that flag. */
function flatten(obj: unknown, prefix: string, out: Map<string, unknown>): void {
  if (obj !== null && typeof obj === "object" && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (k === "enabled" && prefix) out.set(prefix, v);
      else flatten(v, key, out);
    }
    return;
  }
  out.set(prefix, obj);
}

export function readYamlSettings(path: string): RawSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(err as Error).message.split("\n")[0] ?? ""}`);
  }
  const raw: RawSettings = new Map();
  if (doc === null || doc === undefined) return raw;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError(`config file ${path}: top level must be a mapping`);
  const flat = new Map<string, unknown>();
  flatten(doc, "", flat);
  for (const [key, value] of flat) {
    const def = BY_NAME.get(key);
    if (!def) throw new ConfigError(`config file ${path}: unknown setting "${key}"`);
    if (def.kind === "list" && Array.isArray(value) && value.every((v) => typeof v === "string")) {
      raw.set(key, value.join("\n"));
      continue;
    }
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw new ConfigError(`config file ${path}: "${key}" must be a single value`);
    }
    raw.set(key, String(value));
  }
  return raw;
}

function parseBool(def: FlagDef, v: string): boolean {
  const s = v.trim().toLowerCase();
  if (["true", "1", "yes", "on"].includes(s)) return true;
  if (["false", "0", "no", "off"].includes(s)) return false;
  throw new ConfigError(`invalid value "${v}" for --${def.name}: expected true or false`);
}

export function parseListenAddress(v: string): ListenAddress {
  const s = v.trim();
  const colon = s.lastIndexOf(":");
  if (colon < 0) throw new ConfigError(`invalid value "${v}" for --web.listen-address: expected [host]:port`);
  let host = s.slice(0, colon);
  const portText = s.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new ConfigError(`invalid port in --web.listen-address "${v}"`);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return { host: host === "" ? undefined : host, port: Number(portText) };
}

/** Resolves one flag's effective text: flag > env > file > default. */
function pick(name: string, layers: readonly RawSettings[]): string | undefined {
  for (const layer of layers) {
    const v = layer.get(name);
    if (v !== undefined) return v;
  }
  return BY_NAME.get(name)?.default;
}

function buildConfig(layers: readonly RawSettings[]): AgentConfig {
  const str = (n: string): string => pick(n, layers) ?? "";
  const def = (n: string): FlagDef => BY_NAME.get(n) as FlagDef;
  const bool = (n: string): boolean => parseBool(def(n), str(n));
  const regex = (n: string): RegExp | undefined => {
    const v = pick(n, layers);
    if (v === undefined || v === "") return undefined;
    try {
      return new RegExp(v);
    } catch {
      throw new ConfigError(`invalid regular expression "${v}" for --${n}`);
    }
  };
  const duration = (n: string, fallback?: string): number => {
    const v = pick(n, layers) ?? (fallback !== undefined ? pick(fallback, layers) : undefined) ?? "";
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0) throw new ConfigError(`invalid duration "${v}" for --${n} (examples: 500ms, 15s, 1m)`);
    return ms;
  };
  const pollInterval = (n: string): number => {
    const ms = duration(n, "collector.interval");
    if (intervalToCron(ms) === undefined) {
      const which = pick(n, layers) !== undefined ? n : "collector.interval";
      throw new ConfigError(`invalid interval for --${which}: must divide a minute (1s..30s, 60s) or an hour (whole minutes)`);
    }
    return ms;
  };
  const choice = <T extends string>(n: string): T => {
    const v = str(n);
    const d = def(n);
    if (!d.choices?.includes(v)) throw new ConfigError(`invalid value "${v}" for --${n}: expected one of ${d.choices?.join(", ")}`);
    return v as T;
  };
  const list = (n: string): string[] =>
    str(n)
      .split(/[\n,]/)
      .map((x) => x.trim())
      .filter((x) => x.length > 0);
  const int = (n: string, min: number): number => {
    const v = str(n);
    if (!/^\d+$/.test(v) || Number(v) < min) throw new ConfigError(`invalid value "${v}" for --${n}: expected a whole number >= ${min}`);
    return Number(v);
  };
  const ncclPaths = list("collector.nccl.path");
  if (ncclPaths.length === 0) throw new ConfigError("invalid value for --collector.nccl.path: at least one directory or glob");
  const polling = choice<"auto" | "true" | "false">("collector.nccl.polling");
  const ras = (): { address: RasAddress; intervalMs: number } | undefined => {
    if (!bool("collector.nccl.ras")) return undefined;
    const address = parseRasAddress(str("collector.nccl.ras-addr"));
    if (address === undefined) throw new ConfigError(`invalid value "${str("collector.nccl.ras-addr")}" for --collector.nccl.ras-addr: expected HOST:PORT (e.g. localhost:28028, [::1]:28028)`);
    return { address, intervalMs: duration("collector.nccl.ras-interval") };
  };
  const gpuMs = duration("collector.gpu.interval");
  if (gpuMs % 1000 !== 0) throw new ConfigError(`invalid value for --collector.gpu.interval: dmon samples in whole seconds`);
  const groups = str("collector.gpu.dmon-groups");
  if (!/^[pucvmet]+$/.test(groups)) throw new ConfigError(`invalid value "${groups}" for --collector.gpu.dmon-groups: letters of pucvmet`);
  const telemetryPath = str("web.telemetry-path");
  if (!telemetryPath.startsWith("/")) throw new ConfigError(`invalid value "${telemetryPath}" for --web.telemetry-path: must start with /`);

  return {
    listen: parseListenAddress(str("web.listen-address")),
    telemetryPath,
    webConfigFile: pick("web.config.file", layers) || undefined,
    sysfsRoot: str("path.sysfs"),
    procfsRoot: str("path.procfs"),
    logLevel: choice<LogLevel>("log.level"),
    once: bool("once"),
    timeoutMs: duration("collector.timeout"),
    gpu: { enabled: bool("collector.gpu"), nvidiaSmi: str("collector.gpu.nvidia-smi"), intervalSeconds: gpuMs / 1000, dmonGroups: groups },
    infiniband: {
      enabled: bool("collector.infiniband"),
      source: choice("collector.infiniband.source"),
      ibstat: str("collector.infiniband.ibstat"),
      perfquery: str("collector.infiniband.perfquery"),
      deviceInclude: regex("collector.infiniband.device-include"),
      deviceExclude: regex("collector.infiniband.device-exclude"),
      intervalMs: pollInterval("collector.infiniband.interval"),
    },
    gdr: { enabled: bool("collector.gdr"), lsmod: str("collector.gdr.lsmod"), intervalMs: pollInterval("collector.gdr.interval") },
    mtu: {
      enabled: bool("collector.mtu"),
      ip: str("collector.mtu.ip"),
      deviceInclude: regex("collector.mtu.device-include"),
      deviceExclude: regex("collector.mtu.device-exclude"),
      intervalMs: pollInterval("collector.mtu.interval"),
    },
    nccl: {
      enabled: bool("collector.nccl"),
      paths: ncclPaths,
      hangThresholdMs: duration("collector.nccl.hang-threshold"),
      maxCommunicators: int("collector.nccl.max-communicators", 1),
      retireAfterMs: duration("collector.nccl.retire-after"),
      checkPids: bool("collector.nccl.check-pids"),
      polling: polling === "auto" ? "auto" : polling === "true",
      ras: ras(),
    },
  };
}

/** Parses the command line (without node and script), the environment and the optional YAML file. */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliAction {
  const { raw: flags, help, version } = parseArgv(argv);
  if (help) return { kind: "help" };
  if (version) return { kind: "version" };
  const envRaw = fromEnv(env);
  const file = flags.get("config.file") ?? envRaw.get("config.file");
  const fileRaw = file ? readYamlSettings(file) : new Map<string, string>();
  return { kind: "run", config: buildConfig([flags, envRaw, fileRaw]) };
}

export function helpText(): string {
  const lines = ["usage: ringwatch [flags]", "       ringwatch analyze [--json] FILE...", "", "Flags (each also as env RINGWATCH_<NAME> and as a YAML key in --config.file):"];
  for (const f of FLAGS) {
    const head = f.kind === "bool" ? `  --[no-]${f.name}` : `  --${f.name}=${f.kind.toUpperCase()}`;
    const dflt = f.default !== undefined ? ` (default: ${f.default})` : "";
    lines.push(`${head}`, `      ${f.help}${dflt}  [env ${envName(f.name)}]`);
  }
  lines.push("  -h, --help", "      Show this help.", "  --version", "      Show the version.");
  return lines.join("\n") + "\n";
}
