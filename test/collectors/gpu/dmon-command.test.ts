/**
 * dmon's arguments and the groups fallback: a driver that rejects the configured groups
 * (nvidia-smi's own "Not supported" / "Failed to process command line", test/fixtures/tools/errors)
 * gets "puc", once, for the child and --once alike; any other failure changes nothing.
 */
import { describe, expect, it } from "vitest";
import { DmonCommand, FALLBACK_GROUPS, rejectsGroups } from "../../../collectors/gpu/dmon-command.js";
import { parseDmonText } from "../../../collectors/gpu/parse-dmon.js";
import { readCapture } from "../../helpers/fixtures.js";

const failure = (capture: string): ReturnType<typeof parseDmonText>["errors"][number] | undefined =>
  parseDmonText(readCapture(`tools/errors/${capture}`)).errors[0];
const NOT_SUPPORTED = failure("08-dmon-not-supported-nvidia-patch-89.txt");
const NO_DRIVER = failure("01-nvsmi-failed-communicate-shine-cluster-50.txt");

describe("DmonCommand", () => {
  it("builds the child's and --once's arguments from the groups and the interval", () => {
    const c = new DmonCommand("pucvmet", 5);
    expect(c.args).toEqual(["dmon", "-s", "pucvmet", "-d", "5"]);
    expect(c.groups).toBe("pucvmet");
    expect(c.onceArgs()).toEqual(["dmon", "-s", "pucvmet", "-c", "1", "-d", "1"]);
  });

  it("knows which failures reject the groups", () => {
    expect(NOT_SUPPORTED?.kind).toBe("not_supported");
    expect(rejectsGroups(NOT_SUPPORTED)).toBe(true);
    expect(rejectsGroups({ kind: "command_failed", message: "Failed to process command line" })).toBe(true);
    expect(NO_DRIVER?.kind).toBe("driver_unreachable");
    expect(rejectsGroups(NO_DRIVER)).toBe(false);
    expect(rejectsGroups(undefined)).toBe(false);
  });

  it("falls back once, in the same array the supervisor starts children with, and says which groups were rejected", () => {
    const c = new DmonCommand("pucvmet", 1);
    const args = c.args;
    expect(c.fallBackAfter(NO_DRIVER)).toBeUndefined();
    expect(c.fallBackAfter(undefined)).toBeUndefined();
    expect(args).toEqual(["dmon", "-s", "pucvmet", "-d", "1"]);
    expect(c.fallBackAfter(NOT_SUPPORTED)).toBe("pucvmet");
    expect(args).toEqual(["dmon", "-s", FALLBACK_GROUPS, "-d", "1"]);
    expect(c.args).toBe(args);
    expect(c.onceArgs()).toEqual(["dmon", "-s", "puc", "-c", "1", "-d", "1"]);
    expect(c.fallBackAfter(NOT_SUPPORTED)).toBeUndefined(); // nothing left to fall back to
  });

  it("does not fall back from the fallback set itself", () => {
    const c = new DmonCommand("puc", 2);
    expect(c.fallBackAfter(NOT_SUPPORTED)).toBeUndefined();
    expect(c.args).toEqual(["dmon", "-s", "puc", "-d", "2"]);
  });
});
