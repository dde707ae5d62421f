/**
 * Command line, environment and YAML file → one validated AgentConfig. Every problem is a
 * ConfigError with one clear line; main prints it and exits 2.
 */
import type { COLLECTOR_MODULES } from "../../collectors/index.js";
import { intervalFlag, switchFlag, type CollectorModule } from "../../collectors/module.js";
import { readCommonSettings, type CommonSettings } from "../../collectors/settings/common.js";
import { ConfigError } from "../../collectors/settings/flags.js";
import { formatHostPort } from "../../collectors/settings/host-port.js";
import { LayeredSettings } from "../../collectors/settings/reader.js";
import { DISABLE_DEFAULTS_FLAG, FLAGS_BY_NAME, MODULES, type LOG_LEVELS } from "./flags.js";
import { fromEnv, parseArgv, readYamlSettings, type RawSettings } from "./sources.js";

export { ConfigError };

export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ListenAddress {
  /** undefined = all interfaces */
  host: string | undefined;
  port: number;
}

type SettingsOf<M> = M extends CollectorModule<string, infer S> ? S : never;

/** What the agent itself keeps of every collector: its switch and, for a poll collector, its interval (ms). */
export interface CollectorSwitch {
  enabled: boolean;
  intervalMs?: number;
}

/** Per collector (collectors/index.ts): its switch, its interval, and the settings its module reads. */
export type CollectorConfigs = { [M in (typeof COLLECTOR_MODULES)[number] as M["name"]]: CollectorSwitch & SettingsOf<M> };

export interface AgentConfig extends CommonSettings {
  listen: ListenAddress;
  telemetryPath: string;
  /** --web.config.file; undefined = plain HTTP without auth. */
  webConfigFile: string | undefined;
  logLevel: LogLevel;
  once: boolean;
  collectors: CollectorConfigs;
  /** Every setting read, as logs show it: what a reload compares (agent/config/reload-plan.ts). */
  shown: ReadonlyMap<string, string>;
}

/** What the command line asked for besides settings. */
export type CliAction = { kind: "run"; config: AgentConfig } | { kind: "help" } | { kind: "version" };

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

/** The collectors' switches, --collector.<name>: the defaults that --collector.disable-defaults turns off. */
const SWITCHES: ReadonlySet<string> = new Set(MODULES.map((m) => switchFlag(m).name));

/**
 * Resolves one flag's effective text: flag > env > file > default. With `defaultsOff`
 * (--collector.disable-defaults), a collector's switch that no layer sets is off.
 */
function pick(name: string, layers: readonly RawSettings[], defaultsOff: boolean): string | undefined {
  for (const layer of layers) {
    const v = layer.get(name);
    if (v !== undefined) return v;
  }
  if (defaultsOff && SWITCHES.has(name)) return "false";
  return FLAGS_BY_NAME.get(name)?.default;
}

function buildConfig(layers: readonly RawSettings[]): AgentConfig {
  // Read first, with the declared defaults: it decides the default of every collector's switch.
  const defaultsOff = new LayeredSettings(FLAGS_BY_NAME, (name) => pick(name, layers, false)).bool(DISABLE_DEFAULTS_FLAG.name);
  const r = new LayeredSettings(FLAGS_BY_NAME, (name) => pick(name, layers, defaultsOff));
  const listen = r.parsed("web.listen-address", parseListenAddress, (a) => formatHostPort(a.host, a.port));
  const telemetryPath = r.text("web.telemetry-path");
  if (!telemetryPath.startsWith("/")) throw new ConfigError(`invalid value "${telemetryPath}" for --web.telemetry-path: must start with /`);
  const webConfigFile = r.optionalText("web.config.file");
  const common = readCommonSettings(r);
  const logLevel = r.choice<LogLevel>("log.level");
  const once = r.bool("once");
  const collectors: Record<string, object> = {};
  for (const m of MODULES) {
    const interval = m.poll ? { intervalMs: r.pollInterval(intervalFlag(m).name) } : {};
    collectors[m.name] = { enabled: r.bool(`collector.${m.name}`), ...m.read(r), ...interval };
  }
  return { listen, telemetryPath, webConfigFile, ...common, logLevel, once, collectors: collectors as CollectorConfigs, shown: r.shown };
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
