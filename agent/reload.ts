/**
 * SIGHUP: read the same command line, the environment, --config.file and --web.config.file again.
 * An invalid result is logged in one line and counted; the running configuration stays. A valid one
 * is applied where that can be done live (log level, poll intervals and time limit, web config, and
 * the settings each collector's module lists as reloadable), without losing any state; each other
 * setting that changed is named in a warning, as it takes effect only after a restart
 * (agent/config/reload-plan.ts sorts them).
 */
import type { Logger } from "pino";
import type { Collector } from "../collectors/collector.js";
import { ConfigError, parseCli, type AgentConfig } from "./config/config.js";
import { planReload, type ReloadDeclaration } from "./config/reload-plan.js";
import type { SelfMetrics } from "./self-metrics.js";
import { WebConfigError } from "./web/config.js";
import { loadWebConfig, type LoadedWebConfig } from "./web/source.js";

/** The parts of a running agent a reload touches. */
export interface ReloadTarget {
  logger: Logger;
  collectors: readonly Collector[];
  self: SelfMetrics;
  now: () => number;
  /** What each collector applies live (default: the modules of collectors/index.ts). */
  modules?: readonly ReloadDeclaration[];
  /** New poll time limit and intervals (the runner reschedules what changed). */
  reconfigureRunner(next: AgentConfig): string[];
  /** False when the web config could not be put in force (it would turn TLS on or off). */
  replaceWebConfig(path: string | undefined, web: LoadedWebConfig): boolean;
}

/** Applies a valid configuration; returns false (counted as a failed reload) if a collector could not take its settings. */
export function applyReload(t: ReloadTarget, started: AgentConfig, current: AgentConfig, next: AgentConfig, web: LoadedWebConfig): boolean {
  const plan = planReload({ started, current, next, collectors: t.collectors, ...(t.modules ? { modules: t.modules } : {}) });
  t.logger.level = next.logLevel;
  const rescheduled = t.reconfigureRunner(next);
  const restart = [...plan.restart];
  if (!t.replaceWebConfig(next.webConfigFile, web)) {
    restart.push({
      flag: "web.config.file",
      running: current.webConfigFile ?? "",
      wanted: `${next.webConfigFile ?? ""} (turns TLS ${web.tls ? "on" : "off"})`,
    });
  }
  let ok = true;
  const reconfigured: string[] = [];
  for (const c of t.collectors) {
    const flags = plan.reconfigure.get(c.name);
    if (!flags || !c.reconfigure) continue;
    try {
      c.reconfigure(next.collectors[c.name as keyof AgentConfig["collectors"]], next);
      reconfigured.push(c.name);
    } catch (err) {
      ok = false;
      t.logger.error(
        { collector: c.name, settings: flags, reason: err instanceof Error ? err.message : String(err) },
        "collector could not apply its new settings",
      );
    }
  }
  for (const r of restart) {
    const who = r.collectors ? ` (collector ${r.collectors.join(", ")} cannot change it while running)` : "";
    t.logger.warn(
      { setting: `--${r.flag}`, running: r.running, wanted: r.wanted, ...(r.collectors ? { collectors: r.collectors } : {}) },
      `--${r.flag} changed; it takes effect after a restart${who}`,
    );
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
