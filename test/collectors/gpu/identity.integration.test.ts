/**
 * The GPUs' identities through the real exec and the fake nvidia-smi (test/fakes/nvidia-smi)
 * replaying real --query-gpu captures: published and kept by index, a partial answer still used,
 * an incomplete one logged once per run, one read at a time.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createExec } from "../../../collectors/exec.js";
import { GpuIdentities, identityArgs } from "../../../collectors/gpu/identity.js";
import { GpuMetrics } from "../../../collectors/gpu/metrics.js";
import { oneShot } from "../../../collectors/gpu/one-shot.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";
import { captureLogger, series } from "./helpers.js";

const FAKE = fileURLToPath(new URL("../../fakes/nvidia-smi", import.meta.url));
const H100 = join(fixturesDir, "tools/nvidia_smi_query_csv/04-nvgpuexp-h100-80gb-590.48.01-allfields.txt");
const NO_DRIVER = join(fixturesDir, "tools/errors/01-nvsmi-failed-communicate-shine-cluster-50.txt");

afterEach(() => void vi.unstubAllEnvs());

function setup(query: string, file = FAKE): { ids: GpuIdentities; registry: Registry; said: () => string[]; calls: () => string[] } {
  const log = join(testTempDir(), "calls.log");
  vi.stubEnv("FAKE_NVSMI_QUERY", query);
  vi.stubEnv("FAKE_NVSMI_LOG", log);
  const registry = new Registry();
  const { logger, lines } = captureLogger();
  const ids = new GpuIdentities(oneShot(createExec(), file, 5000), new GpuMetrics(registry, () => undefined), logger);
  const calls = (): string[] => {
    try {
      return readFileSync(log, "utf8").trim().split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  return { ids, registry, said: () => lines.map((l) => l.msg), calls };
}

/** A query answer of this node's (no header: printed as is): GPU 0 listed, GPU 1 lost. */
function partial(): string {
  const f = join(testTempDir(), "partial.txt");
  writeFileSync(
    f,
    "# written by this test\n0, GPU-a, NVIDIA H100 80GB HBM3, 00000000:07:00.0, 550.54.15, 700.00\nUnable to determine the device handle for GPU 0000:0F:00.0: Unknown Error\n",
  );
  return f;
}

describe("GpuIdentities", () => {
  it("asks for the identity fields, keeps the GPUs by index and publishes them", async () => {
    expect(identityArgs()).toEqual(["--query-gpu=index,uuid,name,pci.bus_id,driver_version,power.limit", "--format=csv,noheader,nounits"]);
    const { ids, registry, said } = setup(H100);
    await ids.read();
    expect([...ids.current.values()]).toEqual([
      {
        index: "0",
        uuid: "GPU-00000000-0000-0000-0000-000000000000",
        name: "NVIDIA H100 80GB HBM3",
        pciBusId: "00000000:00:09.0",
        driverVersion: "590.48.01",
        powerLimitWatts: 700,
      },
    ]);
    expect(await series(registry, "ringwatch_gpu_info")).toEqual([
      {
        labels: {
          gpu: "0",
          uuid: "GPU-00000000-0000-0000-0000-000000000000",
          name: "NVIDIA H100 80GB HBM3",
          pci_bus_id: "00000000:00:09.0",
          driver_version: "590.48.01",
        },
        value: 1,
      },
    ]);
    expect(await series(registry, "ringwatch_gpu_power_limit_watts")).toEqual([{ labels: { gpu: "0" }, value: 700 }]);
    expect(ids.indexesAt("0000:00:09.0")).toEqual(["0"]);
    expect(ids.indexesAt("0000:00:0a.0")).toEqual([]);
    expect(said()).toEqual([]);
  });

  it("uses a partial answer, and logs an incomplete one once until a complete one comes", async () => {
    const { ids, said } = setup(partial());
    await ids.read();
    await ids.read();
    expect([...ids.current.keys()]).toEqual(["0"]);
    expect(ids.indexesAt("0000:07:00.0")).toEqual(["0"]);
    const incomplete =
      "gpu: identity query incomplete (1 GPUs identified; samples continue): Unable to determine the device handle for GPU 0000:0F:00.0: Unknown Error";
    expect(said()).toEqual([incomplete]);
    vi.stubEnv("FAKE_NVSMI_QUERY", H100);
    await ids.read();
    vi.stubEnv("FAKE_NVSMI_QUERY", NO_DRIVER);
    await ids.read();
    expect(ids.current.size).toBe(0);
    expect(said()).toEqual([
      incomplete,
      "gpu: identity query incomplete (0 GPUs identified; samples continue): NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    ]);
  });

  it("logs nothing where nvidia-smi is missing (the dmon side says so)", async () => {
    const { ids, said } = setup(H100, join(testTempDir(), "no-nvidia-smi"));
    await ids.read();
    expect(ids.current.size).toBe(0);
    expect(said()).toEqual([]);
  });

  it("reads in the background one at a time, and forgets every GPU on clear()", async () => {
    const { ids, registry, calls } = setup(H100);
    ids.refresh();
    ids.refresh();
    await ids.settled();
    expect(calls()).toHaveLength(1);
    expect(ids.current.size).toBe(1);
    const before = ids.current;
    ids.clear();
    expect(ids.current.size).toBe(0);
    expect(before.size).toBe(1); // a map handed out earlier is not changed
    expect(await series(registry, "ringwatch_gpu_info")).toEqual([]);
    expect(await series(registry, "ringwatch_gpu_power_limit_watts")).toEqual([]);
  });
});
