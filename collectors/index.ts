/**
 * Every collector, in the order they are built and listed (--help, docs/configuration.md, logs).
 * Adding a collector means adding its folder (module.ts, collector.ts, README.md) and one line here.
 */
import { gdrModule } from "./gdr/module.js";
import { gpuModule } from "./gpu/module.js";
import { infinibandModule } from "./infiniband/module.js";
import { jobModule } from "./job/module.js";
import { kmsgModule } from "./kmsg/module.js";
import { mtuModule } from "./mtu/module.js";
import { ncclModule } from "./nccl/module.js";

// job reads gpu and nccl through peer(): it comes after both; kmsg reads gpu.
export const COLLECTOR_MODULES = [gpuModule, infinibandModule, gdrModule, mtuModule, ncclModule, jobModule, kmsgModule] as const;
