/**
 * What a SIGHUP reload changes, setting by setting: applied by the agent at once ("live"), by
 * collectors' reconfigure() (the settings their module lists as reloadable), or only after a
 * restart. The table is derived from the flag declarations (agent/config/flags.ts) and the
 * collector modules, so a new setting cannot be forgotten here.
 */
import type { Collector } from "../../collectors/collector.js";
import { intervalFlag, type CollectorModule } from "../../collectors/module.js";
import { POLL_FLAGS } from "../../collectors/settings/common.js";
import { COLLECTOR_INTERVAL_FLAG } from "../../collectors/settings/reader.js";
import type { AgentConfig } from "./config.js";
import { DISABLE_DEFAULTS_FLAG, FLAGS, MODULES } from "./flags.js";

/** What a reload needs to know of a module. */
export type ReloadDeclaration = Pick<CollectorModule, "name" | "flags" | "uses" | "poll" | "reloadable">;

/** Who applies a changed setting: the agent at once, nobody before a restart, or these collectors. */
export type Applier = "live" | "restart" | readonly string[];

export interface Setting {
  flag: string;
  by: Applier;
}

/** The agent's own settings: the web server is bound at start; the log level and web config change at once. */
const AGENT_APPLIERS: Readonly<Record<string, Applier>> = {
  "web.listen-address": "restart",
  "web.telemetry-path": "restart",
  "web.config.file": "live",
  "log.level": "live",
  once: "restart",
};

/**
 * Not compared: the file is read again at every reload; --collector.interval shows in each poll
 * collector's interval, and --collector.disable-defaults in each collector's switch (a restart).
 */
const NOT_COMPARED = new Set(["config.file", COLLECTOR_INTERVAL_FLAG, DISABLE_DEFAULTS_FLAG.name]);

/** Every setting, in flag order, and who applies a change of it. */
export function reloadSettings(modules: readonly ReloadDeclaration[] = MODULES): Setting[] {
  const out: Setting[] = [];
  const shared = new Set(["path.sysfs", "path.procfs", ...POLL_FLAGS.map((f) => f.name)]);
  for (const f of FLAGS) {
    if (NOT_COMPARED.has(f.name)) continue;
    const agent = AGENT_APPLIERS[f.name];
    if (agent !== undefined) {
      out.push({ flag: f.name, by: agent });
      continue;
    }
    if (shared.has(f.name)) {
      out.push({ flag: f.name, by: modules.filter((m) => (m.uses as readonly string[]).includes(f.name)).map((m) => m.name) });
      continue;
    }
    const interval = (x: ReloadDeclaration): string | undefined => (x.poll ? intervalFlag(x).name : undefined);
    const m = modules.find((x) => f.name === `collector.${x.name}` || f.name === interval(x) || x.flags.some((g) => g.name === f.name));
    if (m === undefined) throw new Error(`flag --${f.name} has no owner to apply it on SIGHUP`);
    if (f.name === `collector.${m.name}`) out.push({ flag: f.name, by: "restart" });
    else if (f.name === interval(m))
      out.push({ flag: f.name, by: "live" }); // the runner reschedules it
    else out.push({ flag: f.name, by: [m.name] });
  }
  return out;
}

export const SETTINGS: readonly Setting[] = reloadSettings();

export interface RestartNeeded {
  flag: string;
  /** The value in force (the one at start). */
  running: string;
  wanted: string;
  /** For a collector setting: the collectors that keep the old value. */
  collectors?: string[];
}

export interface ReloadPlan {
  /** Changed settings the agent applies at once. */
  live: string[];
  /** Collectors whose reconfigure() is called, with their changed settings. */
  reconfigure: Map<string, string[]>;
  /** Changed settings that take effect only after a restart. */
  restart: RestartNeeded[];
}

const show = (c: AgentConfig, flag: string): string => c.shown.get(flag) ?? "";

/**
 * What a reload from `current` (last applied) to `next` changes. Restart-only settings are compared
 * with `started`, the values really in force, so that a pending restart is named at every reload.
 * `modules` (default: collectors/index.ts) say which settings each collector applies live.
 */
export function planReload(a: {
  started: AgentConfig;
  current: AgentConfig;
  next: AgentConfig;
  collectors: readonly Collector[];
  modules?: readonly ReloadDeclaration[];
}): ReloadPlan {
  const plan: ReloadPlan = { live: [], reconfigure: new Map(), restart: [] };
  const running = new Map(a.collectors.map((c) => [c.name, c]));
  const modules = a.modules ?? MODULES;
  const declared = new Map(modules.map((m) => [m.name, new Set(m.reloadable)]));
  for (const s of a.modules ? reloadSettings(a.modules) : SETTINGS) {
    const wanted = show(a.next, s.flag);
    const changedSinceStart = show(a.started, s.flag) !== wanted;
    const changed = show(a.current, s.flag) !== wanted;
    if (s.by === "live") {
      if (changed) plan.live.push(s.flag);
      continue;
    }
    if (s.by === "restart") {
      if (changedSinceStart) plan.restart.push({ flag: s.flag, running: show(a.started, s.flag), wanted });
      continue;
    }
    const stuck: string[] = [];
    for (const name of s.by) {
      const c = running.get(name);
      if (!c) continue; // not running: its settings do not matter until it is enabled, which needs a restart
      if (c.reconfigure && declared.get(name)?.has(s.flag)) {
        if (changed) plan.reconfigure.set(name, [...(plan.reconfigure.get(name) ?? []), s.flag]);
      } else if (changedSinceStart) stuck.push(name);
    }
    if (stuck.length > 0) plan.restart.push({ flag: s.flag, running: show(a.started, s.flag), wanted, collectors: stuck });
  }
  return plan;
}
