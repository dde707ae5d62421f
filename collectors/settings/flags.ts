/**
 * How a setting is declared: one flag (`--name=value`), which is also an environment variable
 * (RINGWATCH_ + the name upper-cased, `.` and `-` as `_`) and a YAML key (the same dotted name,
 * nested or flat). The agent builds its parser, --help, the reload table and docs/configuration.md
 * from these declarations (agent/config/); collectors declare theirs in their module.ts.
 */
export type FlagKind = "string" | "bool" | "duration" | "regex" | "address" | "enum" | "level" | "list" | "int";

export interface FlagDef {
  name: string;
  kind: FlagKind;
  help: string;
  /** Default as it would be written on the command line (undefined = unset). */
  default?: string;
  /** Allowed values for kind "enum" / "level". */
  choices?: readonly string[];
}

/** The environment variable of a flag: RINGWATCH_COLLECTOR_NCCL_RAS_ADDR for collector.nccl.ras-addr. */
export function envName(flag: string): string {
  return "RINGWATCH_" + flag.toUpperCase().replace(/[.-]/g, "_");
}

/**
 * A setting's value cannot be used (unknown flag, bad value, unreadable file). Its message is one
 * line that names the flag; the agent prints it and exits 2, or logs it on SIGHUP and keeps running.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
