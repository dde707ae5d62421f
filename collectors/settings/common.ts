/**
 * Settings that several collectors share: where procfs and sysfs are mounted, and the poll
 * interval and time limit of poll collectors. A collector module names the ones it uses
 * (`uses`), so that a change on SIGHUP reaches it, or is reported as needing a restart.
 */
import type { FlagDef } from "./flags.js";
import { COLLECTOR_INTERVAL_FLAG, type SettingsReader } from "./reader.js";

export interface CommonSettings {
  sysfsRoot: string;
  procfsRoot: string;
  /** Time limit of one poll, and of every external command it runs. */
  timeoutMs: number;
}

export type CommonSettingName = "path.sysfs" | "path.procfs" | "collector.timeout";

export const PATH_FLAGS: readonly FlagDef[] = [
  { name: "path.sysfs", kind: "string", default: "/sys", help: "sysfs mount point (the InfiniBand collector reads <path>/class/infiniband)." },
  { name: "path.procfs", kind: "string", default: "/proc", help: "procfs mount point (the gdr collector reads <path>/modules)." },
];

export const POLL_FLAGS: readonly FlagDef[] = [
  {
    name: COLLECTOR_INTERVAL_FLAG,
    kind: "duration",
    default: "15s",
    help: "Poll interval of the infiniband, gdr and mtu collectors (must divide a minute or an hour).",
  },
  {
    name: "collector.timeout",
    kind: "duration",
    default: "10s",
    help: "Time limit of one poll, and of every external command it runs (the command is killed).",
  },
];

export function readCommonSettings(r: SettingsReader): CommonSettings {
  return { sysfsRoot: r.text("path.sysfs"), procfsRoot: r.text("path.procfs"), timeoutMs: r.duration("collector.timeout") };
}
