/** The mtu collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createMtuCollector } from "./collector.js";
import { DEFAULT_DEVICE_EXCLUDE } from "./filter.js";

export interface MtuSettings {
  ip: string;
  deviceInclude: RegExp | undefined;
  /** undefined: report every interface (the flag was set empty). */
  deviceExclude: RegExp | undefined;
}

/** Matches no interface name. */
const NOTHING = /(?!)/;

export const mtuModule: CollectorModule<"mtu", MtuSettings> = {
  name: "mtu",
  enabledByDefault: true,
  switchHelp: "Enable the mtu collector (ip -j -d link show).",
  flags: [
    { name: "collector.mtu.ip", kind: "string", default: "ip", help: "Path of ip (iproute2)." },
    { name: "collector.mtu.device-include", kind: "regex", help: "Only report interfaces whose name matches this regular expression." },
    {
      name: "collector.mtu.device-exclude",
      kind: "regex",
      default: DEFAULT_DEVICE_EXCLUDE.source,
      help: "Do not report interfaces whose name matches this regular expression; empty reports all (default: per-pod, per-VM and overlay interfaces).",
    },
  ],
  uses: ["collector.timeout"],
  poll: true,
  reloadable: [],
  read: (r) => ({
    ip: r.text("collector.mtu.ip"),
    deviceInclude: r.regex("collector.mtu.device-include"),
    deviceExclude: r.regex("collector.mtu.device-exclude"),
  }),
  create: ({ deps, settings, common }) =>
    createMtuCollector(deps, {
      ip: settings.ip,
      deviceInclude: settings.deviceInclude,
      deviceExclude: settings.deviceExclude ?? NOTHING,
      timeoutMs: common.timeoutMs,
    }),
};
