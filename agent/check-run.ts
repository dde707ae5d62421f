/**
 * One run of the collectors for `ringwatch check`, as `ringwatch --once` runs them (app.ts): the
 * same configuration (agent/config/), the same collectors (buildCollectors), each once() under the
 * collector time limit, into a registry of their own. Three defaults differ, because a check is not
 * the agent: the nccl and job collectors are off unless named on the command line (a health check
 * follows no job's logs), the kmsg collector keeps no read position (it must see the whole kernel
 * buffer, never skip what the agent already read, never move the agent's position), and logs go to
 * stderr at `error` unless --log.level is given. Every source's outcome is kept with its reason.
 */
import type { Logger } from "pino";
import { Registry, type MetricObjectWithValues, type MetricValue } from "prom-client";
import { CollectorError, type Collector } from "../collectors/collector.js";
import { createExec } from "../collectors/exec.js";
import { buildCollectors } from "./app.js";
import { parseCli, type AgentConfig, type CliAction } from "./config/config.js";
import { MODULES } from "./config/flags.js";
import { sysfsGpus } from "./check-sysfs.js";
import { SteadyClock } from "./steady-clock.js";

/** What became of one collector's source: ran, not on this machine, failed, or switched off. */
export type SourceState = "ok" | "absent" | "failed" | "off";

export interface Source {
  collector: string;
  state: SourceState;
  /** Why it is not ok: the collector's one line. */
  reason?: string;
}

/** One metric family as the registry gives it (getMetricsAsJSON). */
export type MetricFamily = MetricObjectWithValues<MetricValue<string>>;

export interface CollectedNode {
  /** What /metrics would have said after the run. */
  metrics: MetricFamily[];
  sources: ReadonlyMap<string, Source>;
  /** PCI addresses of the GPUs bound to nvidia in sysfs; undefined where sysfs has none (check-sysfs.ts). */
  sysfsGpus: string[] | undefined;
  /** When the collectors were read (Unix ms). */
  nowMs: number;
}

/** The agent's settings for a check: the agent's own parser, with the check's three defaults. */
export function checkSettings(agentArgs: readonly string[], env: NodeJS.ProcessEnv): CliAction {
  const named = (flag: string): boolean => agentArgs.some((a) => a === `--${flag}` || a === `--no-${flag}` || a.startsWith(`--${flag}=`));
  const defaults = named("log.level") ? [] : ["--log.level=error"];
  for (const c of ["nccl", "job"]) if (!named(`collector.${c}`)) defaults.push(`--no-collector.${c}`);
  // Flags that come later win: the defaults go first, the kmsg collector's position last.
  return parseCli([...defaults, ...agentArgs, "--collector.kmsg.state-file="], env);
}

class TimedOut extends Error {}

function limit<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(message)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function outcome(c: Collector, err: unknown): Source {
  if (err instanceof CollectorError) return { collector: c.name, state: err.absent ? "absent" : "failed", reason: err.message };
  return { collector: c.name, state: "failed", reason: err instanceof Error ? err.message : String(err) };
}

/**
 * Runs every enabled collector once, all at once as `ringwatch --once` does. Resolves by
 * `deadlineMs` (Unix ms) at the latest: a collector still running then is a failed source, and its
 * children are killed. (The kmsg collector names a GPU by the gpu collector's index when it has
 * read them, else by sysfs's bus order, which is nvidia-smi's: collectors/kmsg/device-names.ts.)
 */
export async function collectOnce(config: AgentConfig, logger: Logger, deadlineMs: number): Promise<CollectedNode> {
  const clock = new SteadyClock();
  const registry = new Registry();
  const exec = createExec();
  const collectors = buildCollectors(config, { registry, logger, exec, now: clock.now });
  const sources = new Map<string, Source>(MODULES.map((m) => [m.name, { collector: m.name, state: "off" }]));
  const late = "did not finish within --check.timeout";
  const left = (): number => Math.max(0, deadlineMs - Date.now());
  const own = config.timeoutMs + 2000;
  const run = async (c: Collector): Promise<void> => {
    try {
      await limit(limit(c.once(), own, `collector ${c.name} took longer than ${own / 1000}s`), left(), late);
      sources.set(c.name, { collector: c.name, state: "ok" });
    } catch (err) {
      sources.set(c.name, err instanceof TimedOut ? { collector: c.name, state: "failed", reason: err.message } : outcome(c, err));
    }
  };
  const gpus = limit(sysfsGpus(config.sysfsRoot), left(), late).catch(() => undefined);
  await Promise.all(collectors.map(run));
  const node: CollectedNode = { metrics: await registry.getMetricsAsJSON(), sources: new Map(sources), sysfsGpus: await gpus, nowMs: clock.now() };
  // Children first (a tool still running past the deadline), then each collector's own stop, bounded.
  await exec.killAll(500);
  await limit(Promise.all(collectors.map((c) => (c.stop ? c.stop() : Promise.resolve()))), 1000, "").catch(() => undefined);
  return node;
}
