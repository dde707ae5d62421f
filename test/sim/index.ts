/** Synthetic NCCL job log simulator for tests and benchmarks; see README.md. */
export * from "./bulk.js";
export * from "./coll.js";
export * from "./context.js";
export * from "./events.js";
export * from "./faults.js";
export * from "./format.js";
export * from "./mask.js";
export * from "./scenario.js";
export * from "./spec.js";
export * from "./topology.js";
export * from "./version.js";
export * from "./writer.js";
