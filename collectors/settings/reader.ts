/**
 * Reads typed settings from their layered text (flag > environment > YAML file > default): each
 * method checks one setting and throws a ConfigError whose one line names the flag. It also keeps,
 * per setting read, the value as a log line shows it (`shown`): the agent compares these between
 * two configurations on SIGHUP, so that `1m` and `60s` count as the same value.
 */
import { formatDuration, parseDuration } from "./duration.js";
import { ConfigError, type FlagDef } from "./flags.js";
import { intervalToCron } from "./interval.js";

/** The fallback of every poll collector's own interval flag. */
export const COLLECTOR_INTERVAL_FLAG = "collector.interval";

export interface SettingsReader {
  /** The text ("" when unset and without default). */
  text(name: string): string;
  /** The text; undefined when unset or empty. */
  optionalText(name: string): string | undefined;
  bool(name: string): boolean;
  /** A duration above zero, in ms. */
  duration(name: string): number;
  /** A poll interval in ms (falling back to --collector.interval) that node-cron can keep. */
  pollInterval(name: string): number;
  /** undefined when unset or empty. */
  regex(name: string): RegExp | undefined;
  /** One of the flag's declared choices. */
  choice<T extends string>(name: string): T;
  /** Repeated flags, or comma-separated text, or a YAML list; empty items dropped. */
  list(name: string): string[];
  int(name: string, min: number): number;
  /** A value the caller parses itself (parse throws ConfigError); `show` is how logs show it. */
  parsed<T>(name: string, parse: (text: string) => T, show: (value: T) => string): T;
}

/** The effective text of a setting (its highest layer, else its default), or undefined. */
export type SettingLookup = (name: string) => string | undefined;

const TRUE = ["true", "1", "yes", "on"];
const FALSE = ["false", "0", "no", "off"];

export class LayeredSettings implements SettingsReader {
  /** Flag name → its value as logs show it, for every setting read so far. */
  readonly shown = new Map<string, string>();

  constructor(
    private readonly defs: ReadonlyMap<string, FlagDef>,
    private readonly lookup: SettingLookup,
  ) {}

  private def(name: string): FlagDef {
    const d = this.defs.get(name);
    if (d === undefined) throw new Error(`setting ${name} is not declared`);
    return d;
  }

  private keep<T>(name: string, value: T, show: string): T {
    this.shown.set(name, show);
    return value;
  }

  text(name: string): string {
    this.def(name);
    const v = this.lookup(name) ?? "";
    return this.keep(name, v, v);
  }

  optionalText(name: string): string | undefined {
    this.def(name);
    const v = this.lookup(name) || undefined;
    return this.keep(name, v, v ?? "");
  }

  bool(name: string): boolean {
    this.def(name);
    const v = this.lookup(name) ?? "";
    const s = v.trim().toLowerCase();
    if (TRUE.includes(s)) return this.keep(name, true, "true");
    if (FALSE.includes(s)) return this.keep(name, false, "false");
    throw new ConfigError(`invalid value "${v}" for --${name}: expected true or false`);
  }

  private durationOf(name: string, v: string): number {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0) throw new ConfigError(`invalid duration "${v}" for --${name} (examples: 500ms, 15s, 1m)`);
    return ms;
  }

  duration(name: string): number {
    this.def(name);
    const ms = this.durationOf(name, this.lookup(name) ?? "");
    return this.keep(name, ms, formatDuration(ms));
  }

  pollInterval(name: string): number {
    this.def(name);
    const own = this.lookup(name);
    const ms = this.durationOf(name, own ?? this.lookup(COLLECTOR_INTERVAL_FLAG) ?? "");
    if (intervalToCron(ms) === undefined) {
      const which = own !== undefined ? name : COLLECTOR_INTERVAL_FLAG;
      throw new ConfigError(`invalid interval for --${which}: must divide a minute (1s..30s, 60s) or an hour (whole minutes)`);
    }
    return this.keep(name, ms, formatDuration(ms));
  }

  regex(name: string): RegExp | undefined {
    this.def(name);
    const v = this.lookup(name);
    if (v === undefined || v === "") return this.keep(name, undefined, "");
    let re: RegExp;
    try {
      re = new RegExp(v);
    } catch {
      throw new ConfigError(`invalid regular expression "${v}" for --${name}`);
    }
    return this.keep(name, re, re.source);
  }

  choice<T extends string>(name: string): T {
    const choices = this.def(name).choices ?? [];
    const v = this.lookup(name) ?? "";
    if (!choices.includes(v)) throw new ConfigError(`invalid value "${v}" for --${name}: expected one of ${choices.join(", ")}`);
    return this.keep(name, v as T, v);
  }

  list(name: string): string[] {
    this.def(name);
    const items = (this.lookup(name) ?? "")
      .split(/[\n,]/)
      .map((x) => x.trim())
      .filter((x) => x.length > 0);
    return this.keep(name, items, items.join(","));
  }

  int(name: string, min: number): number {
    this.def(name);
    const v = this.lookup(name) ?? "";
    if (!/^\d+$/.test(v) || Number(v) < min) throw new ConfigError(`invalid value "${v}" for --${name}: expected a whole number >= ${min}`);
    return this.keep(name, Number(v), String(Number(v)));
  }

  parsed<T>(name: string, parse: (text: string) => T, show: (value: T) => string): T {
    this.def(name);
    const value = parse(this.lookup(name) ?? "");
    return this.keep(name, value, show(value));
  }
}
