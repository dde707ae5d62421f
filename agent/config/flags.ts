/**
 * Every flag of the binary, in --help order: the agent's own, the settings collectors share
 * (collectors/settings/common.ts), then each collector's switch and flags as its module declares
 * them (collectors/index.ts). Precedence: flag > environment > YAML file > default.
 */
import { COLLECTOR_MODULES } from "../../collectors/index.js";
import { intervalFlag, switchFlag, type CollectorModule } from "../../collectors/module.js";
import { PATH_FLAGS, POLL_FLAGS } from "../../collectors/settings/common.js";
import type { FlagDef } from "../../collectors/settings/flags.js";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** Default listen port: 9742 (not 9100 node_exporter, 9400 dcgm-exporter, 9835, 9315/9683, 15132). */
export const DEFAULT_PORT = 9742;

const WEB_FLAGS: readonly FlagDef[] = [
  { name: "web.listen-address", kind: "address", default: `:${DEFAULT_PORT}`, help: "Address to serve /metrics, /healthz and / on: [host]:port." },
  { name: "web.telemetry-path", kind: "string", default: "/metrics", help: "Path under which to expose metrics." },
  {
    name: "web.config.file",
    kind: "string",
    help: "Optional exporter-toolkit web config file: TLS, client certificates, basic auth, headers, rate limit (re-read when it or a certificate changes).",
  },
];

const AGENT_FLAGS: readonly FlagDef[] = [
  { name: "config.file", kind: "string", help: "Optional YAML file with the same settings (keys are flag names, nested or dotted)." },
  { name: "log.level", kind: "level", default: "info", choices: LOG_LEVELS, help: "Only log messages at or above this level: debug, info, warn, error." },
  { name: "once", kind: "bool", default: "false", help: "Run every enabled collector once, print the exposition to stdout and exit 0." },
];

/**
 * --collector.disable-defaults, node_exporter's flag: every collector's switch defaults to off, so only
 * the collectors switched on explicitly run (agent/config/config.ts).
 */
export const DISABLE_DEFAULTS_FLAG: FlagDef = {
  name: "collector.disable-defaults",
  kind: "bool",
  default: "false",
  help: "Start with every collector off: only those switched on explicitly run (--collector.<name>, or its environment variable or YAML key).",
};

/** The collectors' modules, each with the settings type hidden: what code that treats them alike holds. */
export const MODULES: readonly CollectorModule[] = COLLECTOR_MODULES;

/** A module's flags: its switch, its own flags, and a poll collector's interval. */
export function moduleFlags(m: CollectorModule): FlagDef[] {
  return [switchFlag(m), ...m.flags, ...(m.poll ? [intervalFlag(m)] : [])];
}

export const FLAGS: readonly FlagDef[] = [...WEB_FLAGS, ...PATH_FLAGS, ...AGENT_FLAGS, ...POLL_FLAGS, DISABLE_DEFAULTS_FLAG, ...MODULES.flatMap(moduleFlags)];

/** The flags by what they set, as docs/configuration.md lists them. */
export const FLAG_GROUPS: ReadonlyArray<{ title: string; flags: readonly FlagDef[] }> = [
  { title: "Agent", flags: [...WEB_FLAGS, ...AGENT_FLAGS] },
  { title: "All collectors", flags: [...PATH_FLAGS, ...POLL_FLAGS, DISABLE_DEFAULTS_FLAG] },
  ...MODULES.map((m) => ({ title: `Collector ${m.name}`, flags: moduleFlags(m) })),
];

export const FLAGS_BY_NAME: ReadonlyMap<string, FlagDef> = new Map(FLAGS.map((f) => [f.name, f]));
