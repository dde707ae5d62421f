/**
 * The gpu collector's log lines about nvidia-smi, each said once while nothing changes: failures
 * per kind and bus, ends of the child per key, "not found" until "found", and news again after a
 * child delivered for 10 minutes. The failures are nvidia-smi's own lines (test/fixtures/tools/errors).
 */
import { describe, expect, it } from "vitest";
import { DmonLog, QUIET_RESET_MS } from "../../../collectors/gpu/dmon-log.js";
import { parseDmonText } from "../../../collectors/gpu/parse-dmon.js";
import { readCapture } from "../../helpers/fixtures.js";
import { captureLogger } from "./helpers.js";

const HANDLE = parseDmonText(readCapture("tools/errors/04-nvsmi-device-handle-unknown-error-xxd3vin-workspace-19.txt")).errors[0];
const NO_DRIVER = parseDmonText(readCapture("tools/errors/01-nvsmi-failed-communicate-shine-cluster-50.txt")).errors[0];

function setup(): { d: DmonLog; said: () => Array<[number, string]>; lines: ReturnType<typeof captureLogger>["lines"] } {
  const { logger, lines } = captureLogger();
  return { d: new DmonLog(logger, "/usr/bin/nvidia-smi"), said: () => lines.map((l) => [l.level, l.msg]), lines };
}

describe("DmonLog", () => {
  it("logs each failure once per kind and bus, with both as fields", () => {
    const { d, said, lines } = setup();
    if (HANDLE === undefined || NO_DRIVER === undefined) throw new Error("the captures hold no failure");
    d.failure(HANDLE);
    d.failure(HANDLE);
    d.failure({ ...HANDLE, pciBusId: "0000:0C:00.0" });
    d.failure(NO_DRIVER);
    d.failure(NO_DRIVER);
    expect(said()).toEqual([
      [40, "gpu: nvidia-smi reports: Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error"],
      [40, "gpu: nvidia-smi reports: Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error"],
      [40, `gpu: nvidia-smi reports: ${NO_DRIVER.message}`],
    ]);
    expect(lines[0]).toMatchObject({ kind: "device_handle", pciBusId: HANDLE.pciBusId });
    expect(lines[1]).toMatchObject({ kind: "device_handle", pciBusId: "0000:0C:00.0" });
  });

  it("says 'not found' once until dmon delivers, then 'found'; absent meanwhile", () => {
    const { d, said } = setup();
    expect(d.absent).toBe(false);
    d.notFound(60);
    d.notFound(60);
    expect(d.absent).toBe(true);
    d.delivering(1000, 0);
    d.delivering(2000, 0);
    expect(d.absent).toBe(false);
    d.notFound(60);
    expect(said()).toEqual([
      [30, "gpu: /usr/bin/nvidia-smi not found; GPU metrics are off until it appears (checked every 60s)"],
      [30, "gpu: /usr/bin/nvidia-smi found; nvidia-smi dmon is delivering samples"],
      [30, "gpu: /usr/bin/nvidia-smi not found; GPU metrics are off until it appears (checked every 60s)"],
    ]);
  });

  it("warns about an end the first time, and at debug while the same one repeats", () => {
    const { d, said } = setup();
    d.ended("1", "nvidia-smi dmon: exited with code 1; restarting in 1s");
    d.ended("1", "nvidia-smi dmon: exited with code 1; restarting in 2s");
    d.ended("stalled", "nvidia-smi dmon was silent for 3 intervals and was killed; restarting in 4s");
    d.ended("1", "nvidia-smi dmon: exited with code 1; restarting in 8s");
    expect(said()).toEqual([
      [40, "gpu: nvidia-smi dmon: exited with code 1; restarting in 1s"],
      [20, "gpu: nvidia-smi dmon: exited with code 1; restarting in 2s"],
      [40, "gpu: nvidia-smi dmon was silent for 3 intervals and was killed; restarting in 4s"],
      [40, "gpu: nvidia-smi dmon: exited with code 1; restarting in 8s"],
    ]);
  });

  it("makes problems news again once a child delivered for more than 10 minutes after one was logged", () => {
    const { d, said } = setup();
    if (HANDLE === undefined) throw new Error("no failure");
    d.failure(HANDLE);
    d.ended("1", "exited");
    d.delivering(QUIET_RESET_MS, 0); // exactly 10 minutes: not yet
    d.failure(HANDLE);
    d.ended("1", "exited");
    expect(said().map(([level]) => level)).toEqual([40, 40, 20]);
    d.delivering(QUIET_RESET_MS + 1, 0);
    d.failure(HANDLE);
    d.ended("1", "exited");
    expect(said().map(([level]) => level)).toEqual([40, 40, 20, 40, 40]);
  });

  it("keeps failures logged while no end was logged, however long the child delivers", () => {
    const { d, said } = setup();
    if (HANDLE === undefined) throw new Error("no failure");
    d.failure(HANDLE);
    d.delivering(10 * QUIET_RESET_MS, 0);
    d.failure(HANDLE);
    expect(said()).toHaveLength(1);
  });

  it("says which groups were rejected and what is used instead", () => {
    const { d, said } = setup();
    d.fellBack("pucvmet", { kind: "not_supported", message: "Not supported on the device(s)" }, "puc");
    d.fellBack("pucvmet", undefined, "puc");
    expect(said()).toEqual([
      [40, 'gpu: nvidia-smi dmon rejected groups "pucvmet" (Not supported on the device(s)); falling back to "puc"'],
      [40, 'gpu: nvidia-smi dmon rejected groups "pucvmet" (); falling back to "puc"'],
    ]);
  });
});
