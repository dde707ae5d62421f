/**
 * What a collector declares about itself, in its folder's module.ts: its name, whether it runs by
 * default, its flags, how its settings are read, which of them SIGHUP applies live, and how it is
 * built. collectors/index.ts lists the modules; from that list the agent builds its flag parser,
 * --help, the configuration, the reload table, docs/configuration.md and the running collectors.
 */
import type { Collector, CollectorDeps } from "./collector.js";
import type { CommonSettingName, CommonSettings } from "./settings/common.js";
import type { FlagDef } from "./settings/flags.js";
import type { SettingsReader } from "./settings/reader.js";

export interface CollectorContext<S extends object> {
  /** Registry, the logger (already a child with {collector: name}), the process runner, the clock. */
  deps: CollectorDeps;
  settings: S;
  common: CommonSettings;
  /** A running collector listed before this one in collectors/index.ts (undefined when off). */
  peer: (name: string) => Collector | undefined;
}

export interface CollectorModule<N extends string = string, S extends object = object> {
  /** Its name: the switch --[no-]collector.<name>, the `collector` label, the prefix of its flags. */
  readonly name: N;
  readonly enabledByDefault: boolean;
  /** Help of the switch. */
  readonly switchHelp: string;
  /** Its own flags (each named collector.<name>.*), in --help order. */
  readonly flags: readonly FlagDef[];
  /** Shared settings it reads: a change reaches it through reconfigure() or waits for a restart. */
  readonly uses: readonly CommonSettingName[];
  /**
   * A poll collector (its collector implements update()): the agent adds its interval flag
   * (intervalFlag(), after its own flags), schedules it, and reschedules it at once on SIGHUP.
   */
  readonly poll: boolean;
  /** A poll collector's own default interval (e.g. "30s"); without it the interval falls back to --collector.interval. */
  readonly intervalDefault?: string;
  /**
   * Of its flags and the shared settings it uses, those that its collector's reconfigure() applies
   * on SIGHUP. Every other one (and the switch) takes effect after a restart, and a reload says so.
   */
  readonly reloadable: readonly string[];
  /** Reads and checks its settings; a bad value throws ConfigError with one line naming the flag. */
  read(r: SettingsReader): S;
  create(ctx: CollectorContext<S>): Collector<S>;
}

/** The own poll interval of a poll collector: its intervalDefault, else --collector.interval. */
export function intervalFlag(m: Pick<CollectorModule, "name" | "intervalDefault">): FlagDef {
  if (m.intervalDefault !== undefined)
    return { name: `collector.${m.name}.interval`, kind: "duration", default: m.intervalDefault, help: `Poll interval of the ${m.name} collector.` };
  return { name: `collector.${m.name}.interval`, kind: "duration", help: `Poll interval of the ${m.name} collector (default: --collector.interval).` };
}

/** The flag that turns a module's collector on or off. */
export function switchFlag(m: CollectorModule): FlagDef {
  return { name: `collector.${m.name}`, kind: "bool", default: String(m.enabledByDefault), help: m.switchHelp };
}
