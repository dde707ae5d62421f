/** The gdr collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createGdrCollector } from "./collector.js";

export interface GdrSettings {
  lsmod: string;
}

export const gdrModule: CollectorModule<"gdr", GdrSettings> = {
  name: "gdr",
  enabledByDefault: true,
  switchHelp: "Enable the gdr (GPUDirect RDMA readiness) collector.",
  flags: [{ name: "collector.gdr.lsmod", kind: "string", default: "lsmod", help: "Path of lsmod, used only when <path.procfs>/modules is absent." }],
  uses: ["path.procfs", "collector.timeout"],
  poll: true,
  reloadable: [],
  read: (r) => ({ lsmod: r.text("collector.gdr.lsmod") }),
  create: ({ deps, settings, common }) => createGdrCollector(deps, { procfsRoot: common.procfsRoot, lsmod: settings.lsmod, timeoutMs: common.timeoutMs }),
};
