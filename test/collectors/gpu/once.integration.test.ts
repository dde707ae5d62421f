/**
 * One dmon sample set for --once through the real exec and the fake nvidia-smi replaying real dmon
 * captures: the last row of each GPU, the groups fallback on a driver that rejects them, and the
 * CollectorErrors for a missing nvidia-smi and for one that prints only a failure.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createExec } from "../../../collectors/exec.js";
import { DmonCommand } from "../../../collectors/gpu/dmon-command.js";
import type { NvsmiFailureKind } from "../../../collectors/gpu/failures.js";
import { dmonSnapshot } from "../../../collectors/gpu/once.js";
import { oneShot } from "../../../collectors/gpu/one-shot.js";
import { collectorError } from "../../helpers/collector-deps.js";
import { fixturesDir } from "../../helpers/fixtures.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const FAKE = fileURLToPath(new URL("../../fakes/nvidia-smi", import.meta.url));
const TWO_GPUS = join(fixturesDir, "tools/nvidia_smi_dmon/02-slurm-on-aws-s-pt-2gpu.txt");

afterEach(() => void vi.unstubAllEnvs());

function setup(
  env: Record<string, string>,
  file = FAKE,
): { snapshot: () => ReturnType<typeof dmonSnapshot>; command: DmonCommand; counted: NvsmiFailureKind[]; calls: () => string[] } {
  const log = join(testTempDir(), "calls.log");
  for (const [k, v] of Object.entries({ FAKE_NVSMI_DMON: TWO_GPUS, FAKE_NVSMI_PACE_MS: "20", FAKE_NVSMI_LOG: log, ...env })) vi.stubEnv(k, v);
  const command = new DmonCommand("pucvmet", 5);
  const counted: NvsmiFailureKind[] = [];
  const run = oneShot(createExec(), file, 5000);
  const calls = (): string[] =>
    readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ").slice(1).join(" "));
  return { snapshot: () => dmonSnapshot(run, file, command, (k) => counted.push(k)), command, counted, calls };
}

describe("dmonSnapshot", () => {
  it("reads one sample set with the configured groups: one row per GPU", async () => {
    const { snapshot, counted, calls } = setup({});
    const rows = await snapshot();
    expect([...rows.entries()].map(([gpu, r]) => [gpu, r.values["pwr"], r.values["gtemp"]])).toEqual([
      ["0", 30, 25],
      ["1", 28, 25],
    ]);
    expect(calls()).toEqual(["dmon -s pucvmet -c 1 -d 1"]);
    expect(counted).toEqual([]);
  });

  it("asks again with dmon's default groups when the driver rejects the configured ones, and keeps them", async () => {
    const { snapshot, command, counted, calls } = setup({ FAKE_NVSMI_GROUPS: "puc" });
    const rows = await snapshot();
    expect([...rows.keys()]).toEqual(["0", "1"]);
    expect(calls()).toEqual(["dmon -s pucvmet -c 1 -d 1", "dmon -s puc -c 1 -d 1"]);
    expect(command.args).toEqual(["dmon", "-s", "puc", "-d", "5"]);
    expect(counted).toEqual([]);
    await snapshot();
    expect(calls().at(-1)).toBe("dmon -s puc -c 1 -d 1");
  });

  it("is absent where nvidia-smi is missing", async () => {
    const missing = join(testTempDir(), "nvidia-smi");
    const { snapshot } = setup({}, missing);
    const err = await collectorError(snapshot());
    expect(err.absent).toBe(true);
    expect(err.message).toBe(`${missing} not found or not executable`);
  });

  it("fails with nvidia-smi's own line, counted, where it prints no sample", async () => {
    const { snapshot, counted } = setup({ FAKE_NVSMI_MODE: "fail" });
    const err = await collectorError(snapshot());
    expect(err.absent).toBe(false);
    expect(err.message).toBe(
      "gpu: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
    );
    expect(counted).toEqual(["driver_unreachable"]);
  });
});
