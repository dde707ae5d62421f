/** The gdr collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createGdrCollector } from "./collector.js";

export interface GdrSettings {
  lsmod: string;
  intervalMs: number;
}

export const gdrModule: CollectorModule<"gdr", GdrSettings> = {
  name: "gdr",
  enabledByDefault: true,
  switchHelp: "Enable the gdr (GPUDirect RDMA readiness) collector.",
  flags: [
    { name: "collector.gdr.lsmod", kind: "string", default: "lsmod", help: "Path of lsmod, used only when <path.procfs>/modules is absent." },
    { name: "collector.gdr.interval", kind: "duration", help: "Poll interval of the gdr collector (default: --collector.interval)." },
  ],
  uses: ["path.procfs", "collector.timeout"],
  intervalFlag: "collector.gdr.interval",
  reloadable: [],
  read: (r) => ({ lsmod: r.text("collector.gdr.lsmod"), intervalMs: r.pollInterval("collector.gdr.interval") }),
  intervalMs: (s) => s.intervalMs,
  create: ({ deps, settings, common }) => createGdrCollector(deps, { procfsRoot: common.procfsRoot, lsmod: settings.lsmod, timeoutMs: common.timeoutMs }),
};
