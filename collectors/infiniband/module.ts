/** The infiniband collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { ConfigError } from "../settings/flags.js";
import { createInfinibandCollector } from "./collector.js";
import { HW_COUNTER_LIMIT, HW_COUNTER_NAME, HW_NOT_COUNTERS } from "./counters.js";
import { HW_NAMED, hwCounterAllowList } from "./hw-counters.js";

export interface InfinibandSettings {
  source: "auto" | "sysfs" | "tools";
  ibstat: string;
  perfquery: string;
  deviceInclude: RegExp | undefined;
  deviceExclude: RegExp | undefined;
  /** hw_counters files read and published (the allow-list). */
  hwCounters: ReadonlySet<string>;
}

const HW_FLAG = "collector.infiniband.hw-counters";

/** The allow-list's items: counter file names or `named`; anything else is a start-up error. */
function hwCounters(items: readonly string[]): ReadonlySet<string> {
  for (const item of items) {
    if (item !== HW_NAMED && (!HW_COUNTER_NAME.test(item) || HW_NOT_COUNTERS.has(item))) {
      throw new ConfigError(`invalid value "${item}" for --${HW_FLAG}: expected hw_counters file names (letters, digits, _) or ${HW_NAMED}`);
    }
  }
  const allowed = hwCounterAllowList(items);
  if (allowed.size > HW_COUNTER_LIMIT) throw new ConfigError(`too many values for --${HW_FLAG}: at most ${HW_COUNTER_LIMIT} counters`);
  return allowed;
}

export const infinibandModule: CollectorModule<"infiniband", InfinibandSettings> = {
  name: "infiniband",
  enabledByDefault: true,
  switchHelp: "Enable the infiniband collector.",
  flags: [
    {
      name: "collector.infiniband.source",
      kind: "enum",
      default: "auto",
      choices: ["auto", "sysfs", "tools"],
      help: "Where to read ports and counters: auto (sysfs when present, else tools), sysfs, tools (ibstat + perfquery).",
    },
    { name: "collector.infiniband.ibstat", kind: "string", default: "ibstat", help: "Path of ibstat." },
    { name: "collector.infiniband.perfquery", kind: "string", default: "perfquery", help: "Path of perfquery." },
    { name: "collector.infiniband.device-include", kind: "regex", help: "Only report HCAs whose name matches this regular expression." },
    { name: "collector.infiniband.device-exclude", kind: "regex", help: "Do not report HCAs whose name matches this regular expression." },
    {
      name: HW_FLAG,
      kind: "list",
      default: HW_NAMED,
      help: `The ports/<n>/hw_counters files to read (allow-list; repeat the flag or separate with commas): file names, and ${HW_NAMED} for every counter with its own ringwatch_infiniband_* family. An allowed file without one is published as ringwatch_infiniband_hw_counters_total{counter}; empty: none is read.`,
    },
  ],
  uses: ["path.sysfs", "collector.timeout"],
  poll: true,
  reloadable: [],
  read: (r) => ({
    source: r.choice("collector.infiniband.source"),
    ibstat: r.text("collector.infiniband.ibstat"),
    perfquery: r.text("collector.infiniband.perfquery"),
    deviceInclude: r.regex("collector.infiniband.device-include"),
    deviceExclude: r.regex("collector.infiniband.device-exclude"),
    hwCounters: hwCounters(r.list(HW_FLAG)),
  }),
  create: ({ deps, settings, common }) =>
    createInfinibandCollector(deps, {
      sysfsRoot: common.sysfsRoot,
      source: settings.source,
      ibstat: settings.ibstat,
      perfquery: settings.perfquery,
      deviceInclude: settings.deviceInclude,
      deviceExclude: settings.deviceExclude,
      hwCounters: settings.hwCounters,
      // One update may run ibstat and then perfquery: give each a third of the poll's limit.
      timeoutMs: Math.max(1000, Math.floor(common.timeoutMs / 3)),
    }),
};
