/**
 * The agent's metrics about itself: per-collector success, duration, last success; build info;
 * and prom-client's process_* and nodejs_* metrics.
 */
import { Counter, Gauge, collectDefaultMetrics, type Registry } from "prom-client";
import { SOURCE_STATES, type SourceState } from "../collectors/collector.js";

export interface SelfMetrics {
  success: Gauge<"collector">;
  duration: Gauge<"collector">;
  lastSuccess: Gauge<"collector">;
  /** Whether each collector's source is present, absent or failing (one series per state, 1 on the current one). */
  source: Gauge<"collector" | "state">;
  /** SIGHUP reloads of the whole configuration. */
  configReloads: Counter<"result">;
  configLastReloadSuccess: Gauge;
  /** Re-reads of --web.config.file after it or a certificate changed. */
  webConfigReloads: Counter<"result">;
  /** Requests and connections the HTTP server turned away at once, by reason (WEB_REFUSALS). */
  webRefused: Counter<"reason">;
}

/** Why the HTTP server turned a request or connection away (docs/configuration.md, HTTP endpoints). */
export const WEB_REFUSALS = ["password_checks_busy", "rate_limit", "connection_limit", "client_connection_share"] as const;
export type WebRefusal = (typeof WEB_REFUSALS)[number];

function resultCounter(registry: Registry, name: string, help: string): Counter<"result"> {
  const c = new Counter({ name, help, labelNames: ["result"], registers: [registry] });
  c.inc({ result: "success" }, 0);
  c.inc({ result: "failure" }, 0);
  return c;
}

function refusedCounter(registry: Registry): Counter<"reason"> {
  const c = new Counter({
    name: "ringwatch_web_refused_total",
    help: "Requests answered 429 and connections closed at once by the HTTP server, by reason: password_checks_busy, rate_limit, connection_limit, client_connection_share.",
    labelNames: ["reason"],
    registers: [registry],
  });
  for (const reason of WEB_REFUSALS) c.inc({ reason }, 0);
  return c;
}

/** Sets a collector's source state (1 on `state`, 0 on the others); undefined: its series go (not known yet). */
export function setSourceState(self: Pick<SelfMetrics, "source">, collector: string, state: SourceState | undefined): void {
  for (const s of SOURCE_STATES) {
    if (state === undefined) self.source.remove({ collector, state: s });
    else self.source.set({ collector, state: s }, s === state ? 1 : 0);
  }
}

export function createSelfMetrics(registry: Registry, version: string, onScrape: () => void = () => undefined): SelfMetrics {
  const build = new Gauge({
    name: "ringwatch_build_info",
    help: "Always 1; labels carry the ringwatch version and the Node.js version running it.",
    labelNames: ["version", "nodejs_version"],
    registers: [registry],
  });
  build.set({ version, nodejs_version: process.versions.node }, 1);
  const lastReload = new Gauge({
    name: "ringwatch_config_last_reload_success_timestamp_seconds",
    help: "Unix time of the last successful configuration load: the start, or the last SIGHUP reload that succeeded.",
    registers: [registry],
  });
  return {
    success: new Gauge({
      name: "ringwatch_collector_success",
      help: "1 if the collector's last run (poll) or current stream succeeded, 0 if it failed or its source is absent.",
      labelNames: ["collector"],
      registers: [registry],
      // Stream collectors report health continuously; read it at scrape time.
      collect: onScrape,
    }),
    duration: new Gauge({
      name: "ringwatch_collector_duration_seconds",
      help: "Seconds the collector's last run took.",
      labelNames: ["collector"],
      registers: [registry],
    }),
    lastSuccess: new Gauge({
      name: "ringwatch_collector_last_success_timestamp_seconds",
      help: "Unix time of the collector's last successful run or sample.",
      labelNames: ["collector"],
      registers: [registry],
    }),
    source: new Gauge({
      name: "ringwatch_collector_source_state",
      help: "1 for the state of the collector's source, 0 for the others: present, absent (not on this machine), failing (there, but cannot be read). No series before the first run or while a stream starts.",
      labelNames: ["collector", "state"],
      registers: [registry],
    }),
    configReloads: resultCounter(
      registry,
      "ringwatch_config_reloads_total",
      "Configuration reloads on SIGHUP, by result (failure: the new configuration was invalid and the running one was kept).",
    ),
    configLastReloadSuccess: lastReload,
    webRefused: refusedCounter(registry),
    webConfigReloads: resultCounter(
      registry,
      "ringwatch_web_config_reloads_total",
      "Re-reads of --web.config.file after it or a file it names changed, by result (failure: the previous web config was kept).",
    ),
  };
}

/**
 * prom-client's gauges named like counters, which `promtool check metrics` rejects (a `_total`
 * suffix on a gauge): each is the sum of its per-type gauge, which stays
 * (`nodejs_active_handles_total` is `sum without (type) (nodejs_active_handles)`).
 */
const DROPPED_DEFAULT_METRICS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"] as const;

/** prom-client's default process_* and nodejs_* metrics, less DROPPED_DEFAULT_METRICS. */
export function registerProcessMetrics(registry: Registry): void {
  // Event-loop lag sampled every 100 ms, not prom-client's default 10 ms: 100 wake-ups a second cost ~1 % of a core.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
}
