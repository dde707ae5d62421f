/**
 * Wires one agent together: registry, the process runner, the enabled collectors, the poll/stream
 * runner and the HTTP server. Constructing it starts nothing; start() / runOnce() / stop() do.
 */
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { Collector, CollectorDeps } from "../collectors/collector.js";
import { createExec, type Exec } from "../collectors/exec.js";
import type { AgentConfig, CollectorSwitch } from "./config/config.js";
import { MODULES } from "./config/flags.js";
import { applyReload, reloadFailed } from "./reload.js";
import { Runner, type RunnerOptions } from "./runner.js";
import { createSelfMetrics, registerProcessMetrics } from "./self-metrics.js";
import { createMetricsServer, type MetricsServer } from "./web/server.js";
import { loadWebConfig, type LoadedWebConfig } from "./web/source.js";
import { VERSION } from "./version.js";
import { exposition } from "./web/exposition.js";
import { SteadyClock } from "./steady-clock.js";

export interface Agent {
  readonly registry: Registry;
  readonly exec: Exec;
  readonly collectors: readonly Collector[];
  /** Starts collectors and the HTTP server; resolves with the bound port. */
  start(): Promise<number>;
  /** Runs every collector once and returns the exposition text. */
  runOnce(): Promise<string>;
  /** Stops collectors, kills every child, closes the server. */
  stop(): Promise<void>;
  /** SIGHUP: applies a valid new configuration without losing state (reload.ts); false when part of it could not be applied. */
  reload(next: AgentConfig, web: LoadedWebConfig): boolean;
  /** SIGHUP with a configuration that could not be read or applied: logged in one line and counted. */
  reloadFailed(err: unknown): void;
}

export interface AgentDeps {
  logger: Logger;
  /** The web config of config.webConfigFile, already checked by loadWebConfig() (loaded at start() otherwise). */
  webConfig?: LoadedWebConfig;
  now?: () => number;
}

/** The enabled collectors, built in the order of collectors/index.ts; each may use those built before it. */
export function buildCollectors(config: AgentConfig, deps: CollectorDeps): Collector[] {
  const out: Collector[] = [];
  const settings = config.collectors as Readonly<Record<string, CollectorSwitch>>;
  for (const m of MODULES) {
    const s = settings[m.name];
    if (!s?.enabled) continue;
    const child: CollectorDeps = { ...deps, logger: deps.logger.child({ collector: m.name }) };
    out.push(m.create({ deps: child, settings: s, common: config, peer: (name) => out.find((c) => c.name === name) }));
  }
  return out;
}

/** The runner's time limit and poll intervals for a configuration. */
function runnerLimits(config: AgentConfig): Pick<RunnerOptions, "timeoutMs" | "intervalsMs"> {
  const settings = config.collectors as Readonly<Record<string, CollectorSwitch>>;
  const intervalsMs: Record<string, number> = {};
  for (const m of MODULES) {
    const ms = settings[m.name]?.intervalMs;
    if (ms !== undefined) intervalsMs[m.name] = ms;
  }
  return { timeoutMs: config.timeoutMs + 2000, intervalsMs };
}

export function createAgent(config: AgentConfig, deps: AgentDeps): Agent {
  // Monotonic Unix ms: a step of the system clock neither hides nor fakes a silence (steady-clock.ts).
  const now = deps.now ?? new SteadyClock().now;
  const registry = new Registry();
  if (!config.once) registerProcessMetrics(registry);
  const exec = createExec();
  const onScrape = { refresh: (): void => undefined };
  const self = createSelfMetrics(registry, VERSION, () => onScrape.refresh());
  self.configLastReloadSuccess.set(now() / 1000); // the configuration was loaded just now
  const collectors = buildCollectors(config, { registry, logger: deps.logger, exec, now });
  const runner = new Runner(collectors, self, deps.logger, { ...runnerLimits(config), now });
  onScrape.refresh = () => runner.refreshStreams();
  let server: MetricsServer | undefined;
  /** The web config the server starts with (a reload before start() replaces it). */
  let web = { path: config.webConfigFile, loaded: deps.webConfig };
  /** The last configuration applied; restart-only settings keep the values of `config`. */
  let current = config;
  const reloadTarget = {
    logger: deps.logger,
    collectors,
    self,
    now,
    reconfigureRunner: (next: AgentConfig) => runner.reconfigure(runnerLimits(next)),
    replaceWebConfig: (path: string | undefined, loaded: LoadedWebConfig): boolean => {
      if (server) return server.replaceWebConfig(path, loaded);
      web = { path, loaded };
      return true;
    },
  };

  return {
    registry,
    exec,
    collectors,
    async start(): Promise<number> {
      const onReload = (result: "success" | "failure"): void => self.webConfigReloads.inc({ result });
      const loaded = web.loaded ?? loadWebConfig(web.path);
      server = createMetricsServer(registry, deps.logger, {
        telemetryPath: config.telemetryPath,
        version: VERSION,
        web: { path: web.path, loaded, onReload },
        onRefused: (reason) => self.webRefused.inc({ reason }),
        documents: new Map(collectors.flatMap((c) => [...(c.documents?.() ?? [])])),
      });
      const port = await server.listen(config.listen);
      runner.start();
      return port;
    },
    async runOnce(): Promise<string> {
      await runner.runOnce();
      const text = await exposition(registry);
      await Promise.all(collectors.map((c) => (c.stop ? c.stop() : Promise.resolve())));
      await exec.killAll();
      return text;
    },
    async stop(): Promise<void> {
      // Collectors and children first; the server last, so that scrapes already sent (maybe still
      // unread in their sockets) are answered, not reset.
      await runner.stop();
      await exec.killAll(1500);
      await server?.close(2000);
    },
    reload(next: AgentConfig, loaded: LoadedWebConfig): boolean {
      const ok = applyReload(reloadTarget, config, current, next, loaded);
      current = next;
      return ok;
    },
    reloadFailed(err: unknown): void {
      reloadFailed(reloadTarget, err);
    },
  };
}
