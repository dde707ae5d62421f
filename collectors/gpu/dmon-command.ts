/**
 * The dmon command line, and the metric groups (-s) it asks for: a driver that rejects the
 * configured groups gets dmon's own default set, "puc" (power/temperature, utilisation, clocks;
 * every driver has them), from then on, for the long-lived child and for --once alike.
 */
import type { NvsmiFailure } from "./failures.js";

/** dmon's own default groups: power/temperature, utilisation, clocks; every driver has them. */
export const FALLBACK_GROUPS = "puc";

/** Whether nvidia-smi's failure says it rejected the arguments (the groups of an older driver). */
export function rejectsGroups(f: NvsmiFailure | undefined): boolean {
  return f !== undefined && (f.kind === "command_failed" || f.kind === "not_supported");
}

export class DmonCommand {
  /** The long-lived child's arguments; the same array throughout (the supervisor starts each child with it). */
  readonly args: string[];

  constructor(groups: string, intervalSeconds: number) {
    this.args = ["dmon", "-s", groups, "-d", String(intervalSeconds)];
  }

  get groups(): string {
    return this.args[2] ?? "";
  }

  /** One sample set, for --once. */
  onceArgs(): string[] {
    return ["dmon", "-s", this.groups, "-c", "1", "-d", "1"];
  }

  /**
   * dmon failed with `failure`: where it rejected the groups, the fallback set is used from now on.
   * Returns the groups it rejected; undefined when nothing changed.
   */
  fallBackAfter(failure: NvsmiFailure | undefined): string | undefined {
    if (!rejectsGroups(failure) || this.groups === FALLBACK_GROUPS) return undefined;
    const rejected = this.groups;
    this.args[2] = FALLBACK_GROUPS;
    return rejected;
  }
}
