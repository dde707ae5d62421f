import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { needsPolling, pollingFsName } from "../../../collectors/follow/fs-type.js";
import { jobFsGate } from "../../../collectors/job-fs-gate.js";

describe("pollingFsName", () => {
  it.each([
    [0x6969, "nfs"],
    [0xff534d42, "cifs"],
    [0xff534d42 | 0, "cifs"], // negative: a signed f_type
    [0xfe534d42, "smb2"],
    [0x65735546, "fuse"],
    [0x0bd00bd0, "lustre"],
    [0x47504653, "gpfs"],
    [0x00c36400, "ceph"],
    [0x01021997, "9p"],
  ])("type %i polls (%s)", (type, name) => {
    expect(pollingFsName(type)).toBe(name);
  });

  it.each([
    [0xef53, "ext4"],
    [0x58465342, "xfs"],
    [0x01021994, "tmpfs"],
    [0x794c7630, "overlayfs"],
    [0x9123683e, "btrfs"],
  ])("type %i (%s) uses inotify", (type) => {
    expect(pollingFsName(type)).toBeUndefined();
  });

  it("accepts bigint types", () => {
    expect(pollingFsName(0x6969n)).toBe("nfs");
  });
});

describe("needsPolling", () => {
  it("answers for a missing path from its nearest existing ancestor", async () => {
    const local = await needsPolling(tmpdir(), jobFsGate);
    expect(await needsPolling(join(tmpdir(), "no", "such", "dir"), jobFsGate)).toBe(local);
  });
});
