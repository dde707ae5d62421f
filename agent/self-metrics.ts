/** The agent's metrics about itself: per-collector success, duration, last success; build info. */
import { Gauge, type Registry } from "prom-client";

export interface SelfMetrics {
  success: Gauge<"collector">;
  duration: Gauge<"collector">;
  lastSuccess: Gauge<"collector">;
}

export function createSelfMetrics(registry: Registry, version: string, onScrape: () => void = () => undefined): SelfMetrics {
  const build = new Gauge({
    name: "ringwatch_build_info",
    help: "Always 1; labels carry the ringwatch version and the Node.js version running it.",
    labelNames: ["version", "nodejs_version"],
    registers: [registry],
  });
  build.set({ version, nodejs_version: process.versions.node }, 1);
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
  };
}
