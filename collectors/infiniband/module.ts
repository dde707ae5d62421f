/** The infiniband collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createInfinibandCollector } from "./collector.js";

export interface InfinibandSettings {
  source: "auto" | "sysfs" | "tools";
  ibstat: string;
  perfquery: string;
  deviceInclude: RegExp | undefined;
  deviceExclude: RegExp | undefined;
}

export const infinibandModule: CollectorModule<"infiniband", InfinibandSettings> = {
  name: "infiniband",
  enabledByDefault: true,
  switchHelp: "Enable the infiniband collector.",
  flags: [
    { name: "collector.infiniband.source", kind: "enum", default: "auto", choices: ["auto", "sysfs", "tools"], help: "Where to read ports and counters: auto (sysfs when present, else tools), sysfs, tools (ibstat + perfquery)." },
    { name: "collector.infiniband.ibstat", kind: "string", default: "ibstat", help: "Path of ibstat." },
    { name: "collector.infiniband.perfquery", kind: "string", default: "perfquery", help: "Path of perfquery." },
    { name: "collector.infiniband.device-include", kind: "regex", help: "Only report HCAs whose name matches this regular expression." },
    { name: "collector.infiniband.device-exclude", kind: "regex", help: "Do not report HCAs whose name matches this regular expression." },
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
  }),
  create: ({ deps, settings, common }) =>
    createInfinibandCollector(deps, {
      sysfsRoot: common.sysfsRoot,
      source: settings.source,
      ibstat: settings.ibstat,
      perfquery: settings.perfquery,
      deviceInclude: settings.deviceInclude,
      deviceExclude: settings.deviceExclude,
      // One update may run ibstat and then perfquery: give each a third of the poll's limit.
      timeoutMs: Math.max(1000, Math.floor(common.timeoutMs / 3)),
    }),
};
