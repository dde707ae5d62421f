import { describe, expect, it } from "vitest";
import { isInspectorJsonFile, isInspectorPromFile } from "../../../../collectors/nccl/inspector/paths.js";
import { inspectorFileName } from "../../../helpers/inspector-writer.js";

describe("Inspector file names", () => {
  it("tells the JSON files (<hostname>-pid<pid>.log) from the rest", () => {
    expect(isInspectorJsonFile(`/scratch/nccl-inspector-4711/${inspectorFileName("dgx-a01.cluster", 1639453)}`)).toBe(true);
    expect(isInspectorJsonFile("node-7-pid12.log")).toBe(true);
    for (const p of ["-pid12.log", "node-pid.log", "node-pid12.log.1", "node-pid1x.log", "nccl-node-4711.log", "/d/node-pid12.log/x", "node-pid12.prom"]) {
      expect(isInspectorJsonFile(p), p).toBe(false);
    }
  });

  it("knows the Prometheus-mode files", () => {
    expect(isInspectorPromFile("/var/lib/node_exporter/nccl_inspector/nccl_inspector_metrics_5c1b5d37-1b2a-4c3e-9f01-23456789abcd.prom")).toBe(true);
    expect(isInspectorPromFile("nccl_inspector_metrics_x.log")).toBe(false);
  });
});
