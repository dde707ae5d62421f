/** The gpu collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { ConfigError } from "../settings/flags.js";
import { createGpuCollector } from "./collector.js";

export interface GpuSettings {
  nvidiaSmi: string;
  /** dmon's -d: whole seconds. */
  intervalSeconds: number;
  /** dmon's -s groups. */
  dmonGroups: string;
}

export const gpuModule: CollectorModule<"gpu", GpuSettings> = {
  name: "gpu",
  enabledByDefault: true,
  switchHelp: "Enable the gpu collector (one long-lived nvidia-smi dmon).",
  flags: [
    { name: "collector.gpu.nvidia-smi", kind: "string", default: "nvidia-smi", help: "Path of nvidia-smi." },
    { name: "collector.gpu.interval", kind: "duration", default: "5s", help: "dmon sampling interval (-d), whole seconds." },
    { name: "collector.gpu.dmon-groups", kind: "string", default: "pucvmet", help: "dmon metric groups (-s)." },
  ],
  uses: ["collector.timeout"],
  poll: false,
  reloadable: [],
  read(r) {
    const ms = r.duration("collector.gpu.interval");
    if (ms % 1000 !== 0) throw new ConfigError("invalid value for --collector.gpu.interval: dmon samples in whole seconds");
    const groups = r.text("collector.gpu.dmon-groups");
    if (!/^[pucvmet]+$/.test(groups)) throw new ConfigError(`invalid value "${groups}" for --collector.gpu.dmon-groups: letters of pucvmet`);
    return { nvidiaSmi: r.text("collector.gpu.nvidia-smi"), intervalSeconds: ms / 1000, dmonGroups: groups };
  },
  create: ({ deps, settings, common }) =>
    createGpuCollector(deps, {
      nvidiaSmi: settings.nvidiaSmi,
      intervalSeconds: settings.intervalSeconds,
      groups: settings.dmonGroups,
      timeoutMs: common.timeoutMs,
    }),
};
