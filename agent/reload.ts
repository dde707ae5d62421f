/**
 * SIGHUP: read the same command line, the environment, --config.file and --web.config.file again.
 * An invalid result is logged in one line and counted; the running configuration stays. A valid one
 * is applied where that can be done live (log level, poll intervals and time limit, web config, and
 * every collector that implements reconfigure()), without losing any state; each other setting that
 * changed is named in a warning, as it takes effect only after a restart.
 */
import type { Logger } from "pino";
import type { Collector, CollectorName } from "../collectors/collector.js";
import { ConfigError, parseCli, type AgentConfig } from "./config/config.js";
import { formatDuration } from "../collectors/settings/duration.js";
import type { SelfMetrics } from "./self-metrics.js";
import { WebConfigError } from "./web/config.js";
import { loadWebConfig, type LoadedWebConfig } from "./web/source.js";

/** Who applies a setting: the agent itself at once ("live"), nobody before a restart, or these collectors' reconfigure(). */
type Applier = "live" | "restart" | readonly CollectorName[];

interface Setting {
  flag: string;
  /** The value as a log line shows it; equal text = unchanged. */
  show(c: AgentConfig): string;
  by: Applier;
}

const re = (r: RegExp | undefined): string => r?.source ?? "";
/** `host:port`, an IPv6 host in brackets; no host (all interfaces) as `:port`. */
const hostPort = (host: string | undefined, port: number): string => `${host?.includes(":") ? `[${host}]` : (host ?? "")}:${port}`;
const ms = (v: number): string => formatDuration(v);

/** Every setting, and who applies a change of it. */
export const SETTINGS: readonly Setting[] = [
  { flag: "web.listen-address", show: (c) => hostPort(c.listen.host, c.listen.port), by: "restart" },
  { flag: "web.telemetry-path", show: (c) => c.telemetryPath, by: "restart" },
  { flag: "web.config.file", show: (c) => c.webConfigFile ?? "", by: "live" },
  { flag: "log.level", show: (c) => c.logLevel, by: "live" },
  { flag: "once", show: (c) => String(c.once), by: "restart" },
  { flag: "path.sysfs", show: (c) => c.sysfsRoot, by: ["infiniband"] },
  { flag: "path.procfs", show: (c) => c.procfsRoot, by: ["gdr", "nccl"] },
  // The runner's limit on a poll changes at once; the limit on each command is the collectors'.
  { flag: "collector.timeout", show: (c) => ms(c.timeoutMs), by: ["gpu", "infiniband", "gdr", "mtu"] },
  { flag: "collector.gpu", show: (c) => String(c.gpu.enabled), by: "restart" },
  { flag: "collector.gpu.nvidia-smi", show: (c) => c.gpu.nvidiaSmi, by: ["gpu"] },
  { flag: "collector.gpu.interval", show: (c) => `${c.gpu.intervalSeconds}s`, by: ["gpu"] },
  { flag: "collector.gpu.dmon-groups", show: (c) => c.gpu.dmonGroups, by: ["gpu"] },
  { flag: "collector.infiniband", show: (c) => String(c.infiniband.enabled), by: "restart" },
  { flag: "collector.infiniband.source", show: (c) => c.infiniband.source, by: ["infiniband"] },
  { flag: "collector.infiniband.ibstat", show: (c) => c.infiniband.ibstat, by: ["infiniband"] },
  { flag: "collector.infiniband.perfquery", show: (c) => c.infiniband.perfquery, by: ["infiniband"] },
  { flag: "collector.infiniband.device-include", show: (c) => re(c.infiniband.deviceInclude), by: ["infiniband"] },
  { flag: "collector.infiniband.device-exclude", show: (c) => re(c.infiniband.deviceExclude), by: ["infiniband"] },
  { flag: "collector.infiniband.interval", show: (c) => ms(c.infiniband.intervalMs), by: "live" },
  { flag: "collector.gdr", show: (c) => String(c.gdr.enabled), by: "restart" },
  { flag: "collector.gdr.lsmod", show: (c) => c.gdr.lsmod, by: ["gdr"] },
  { flag: "collector.gdr.interval", show: (c) => ms(c.gdr.intervalMs), by: "live" },
  { flag: "collector.mtu", show: (c) => String(c.mtu.enabled), by: "restart" },
  { flag: "collector.mtu.ip", show: (c) => c.mtu.ip, by: ["mtu"] },
  { flag: "collector.mtu.device-include", show: (c) => re(c.mtu.deviceInclude), by: ["mtu"] },
  { flag: "collector.mtu.device-exclude", show: (c) => re(c.mtu.deviceExclude), by: ["mtu"] },
  { flag: "collector.mtu.interval", show: (c) => ms(c.mtu.intervalMs), by: "live" },
  { flag: "collector.nccl", show: (c) => String(c.nccl.enabled), by: "restart" },
  { flag: "collector.nccl.path", show: (c) => c.nccl.paths.join(","), by: ["nccl"] },
  { flag: "collector.nccl.hang-threshold", show: (c) => ms(c.nccl.hangThresholdMs), by: ["nccl"] },
  { flag: "collector.nccl.max-communicators", show: (c) => String(c.nccl.maxCommunicators), by: ["nccl"] },
  { flag: "collector.nccl.retire-after", show: (c) => ms(c.nccl.retireAfterMs), by: ["nccl"] },
  { flag: "collector.nccl.check-pids", show: (c) => String(c.nccl.checkPids), by: ["nccl"] },
  { flag: "collector.nccl.polling", show: (c) => String(c.nccl.polling), by: ["nccl"] },
  { flag: "collector.nccl.ras", show: (c) => String(c.nccl.ras !== undefined), by: ["nccl"] },
  { flag: "collector.nccl.ras-addr", show: (c) => (c.nccl.ras ? hostPort(c.nccl.ras.address.host, c.nccl.ras.address.port) : ""), by: ["nccl"] },
  { flag: "collector.nccl.ras-interval", show: (c) => (c.nccl.ras ? ms(c.nccl.ras.intervalMs) : ""), by: ["nccl"] },
];

export interface RestartNeeded {
  flag: string;
  /** The value in force (the one at start). */
  running: string;
  wanted: string;
  /** For a collector setting: the collectors that keep the old value. */
  collectors?: CollectorName[];
}

export interface ReloadPlan {
  /** Changed settings the agent applies at once. */
  live: string[];
  /** Collectors whose reconfigure() is called, with their changed settings. */
  reconfigure: Map<CollectorName, string[]>;
  /** Changed settings that take effect only after a restart. */
  restart: RestartNeeded[];
}

/**
 * What a reload from `current` (last applied) to `next` changes. Restart-only settings are compared
 * with `started`, the values really in force, so that a pending restart is named at every reload.
 */
export function planReload(a: { started: AgentConfig; current: AgentConfig; next: AgentConfig; collectors: readonly Collector[] }): ReloadPlan {
  const plan: ReloadPlan = { live: [], reconfigure: new Map(), restart: [] };
  const running = new Map(a.collectors.map((c) => [c.name, c]));
  for (const s of SETTINGS) {
    const wanted = s.show(a.next);
    const changedSinceStart = s.show(a.started) !== wanted;
    const changed = s.show(a.current) !== wanted;
    if (s.by === "live") {
      if (changed) plan.live.push(s.flag);
      continue;
    }
    if (s.by === "restart") {
      if (changedSinceStart) plan.restart.push({ flag: s.flag, running: s.show(a.started), wanted });
      continue;
    }
    const stuck: CollectorName[] = [];
    for (const name of s.by) {
      const c = running.get(name);
      if (!c) continue; // not running: its settings do not matter until it is enabled, which needs a restart
      if (c.reconfigure) {
        if (changed) plan.reconfigure.set(name, [...(plan.reconfigure.get(name) ?? []), s.flag]);
      } else if (changedSinceStart) stuck.push(name);
    }
    if (stuck.length > 0) plan.restart.push({ flag: s.flag, running: s.show(a.started), wanted, collectors: stuck });
  }
  return plan;
}

/** The parts of a running agent a reload touches. */
export interface ReloadTarget {
  logger: Logger;
  collectors: readonly Collector[];
  self: SelfMetrics;
  now: () => number;
  /** New poll time limit and intervals (the runner reschedules what changed). */
  reconfigureRunner(next: AgentConfig): CollectorName[];
  /** False when the web config could not be put in force (it would turn TLS on or off). */
  replaceWebConfig(path: string | undefined, web: LoadedWebConfig): boolean;
}

/** Applies a valid configuration; returns false (counted as a failed reload) if a collector could not take its settings. */
export function applyReload(t: ReloadTarget, started: AgentConfig, current: AgentConfig, next: AgentConfig, web: LoadedWebConfig): boolean {
  const plan = planReload({ started, current, next, collectors: t.collectors });
  t.logger.level = next.logLevel;
  const rescheduled = t.reconfigureRunner(next);
  const restart = [...plan.restart];
  if (!t.replaceWebConfig(next.webConfigFile, web)) {
    restart.push({ flag: "web.config.file", running: current.webConfigFile ?? "", wanted: `${next.webConfigFile ?? ""} (turns TLS ${web.tls ? "on" : "off"})` });
  }
  let ok = true;
  const reconfigured: CollectorName[] = [];
  for (const c of t.collectors) {
    const flags = plan.reconfigure.get(c.name);
    if (!flags || !c.reconfigure) continue;
    try {
      c.reconfigure(next);
      reconfigured.push(c.name);
    } catch (err) {
      ok = false;
      t.logger.error({ collector: c.name, settings: flags, reason: err instanceof Error ? err.message : String(err) }, "collector could not apply its new settings");
    }
  }
  for (const r of restart) {
    const who = r.collectors ? ` (collector ${r.collectors.join(", ")} cannot change it while running)` : "";
    t.logger.warn({ setting: `--${r.flag}`, running: r.running, wanted: r.wanted, ...(r.collectors ? { collectors: r.collectors } : {}) }, `--${r.flag} changed; it takes effect after a restart${who}`);
  }
  t.self.configReloads.inc({ result: ok ? "success" : "failure" });
  if (ok) t.self.configLastReloadSuccess.set(t.now() / 1000);
  t.logger.info(
    { ok, applied: [...plan.live, ...[...plan.reconfigure.values()].flat()], rescheduled, reconfigured, needs_restart: restart.map((r) => r.flag) },
    "configuration reloaded",
  );
  return ok;
}

export interface LoadedSettings {
  config: AgentConfig;
  web: LoadedWebConfig;
}

/** Command line, environment, --config.file and --web.config.file, read and checked again; throws ConfigError or WebConfigError. */
export function loadSettings(argv: readonly string[], env: NodeJS.ProcessEnv): LoadedSettings {
  const action = parseCli(argv, env);
  if (action.kind !== "run") throw new ConfigError("the command line asks for help or the version");
  return { config: action.config, web: loadWebConfig(action.config.webConfigFile) };
}

/** A reload that could not even be read or applied: one error line, counted; the running configuration stays. */
export function reloadFailed(t: Pick<ReloadTarget, "logger" | "self">, err: unknown): void {
  t.self.configReloads.inc({ result: "failure" });
  const expected = err instanceof ConfigError || err instanceof WebConfigError;
  const reason = err instanceof Error ? err.message : String(err);
  t.logger.error({ reason: expected ? reason : `unexpected error: ${reason}` }, "configuration reload failed; keeping the running configuration");
}
