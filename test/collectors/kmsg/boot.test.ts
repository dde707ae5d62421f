/** This boot from a fake procfs: its id, and its wall-clock start from uptime. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBoot } from "../../../collectors/kmsg/boot.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const NOW = Date.UTC(2026, 10, 24, 2, 47);

function procfs(bootId: string | undefined, uptime: string | undefined): string {
  const dir = testTempDir();
  mkdirSync(join(dir, "sys/kernel/random"), { recursive: true });
  if (bootId !== undefined) writeFileSync(join(dir, "sys/kernel/random/boot_id"), bootId);
  if (uptime !== undefined) writeFileSync(join(dir, "uptime"), uptime);
  return dir;
}

describe("readBoot", () => {
  it("reads the boot id and puts the boot uptime seconds before now", async () => {
    const dir = procfs("770920c0-309d-4dc4-9f25-65cfd492b686\n", "86400.25 170000.00\n");
    expect(await readBoot(dir, () => NOW)).toEqual({ id: "770920c0-309d-4dc4-9f25-65cfd492b686", wallMs: NOW - 86_400_250 });
  });

  it("says unknown for a missing or empty boot id, and takes now for the boot where uptime cannot be read", async () => {
    expect(await readBoot(procfs(undefined, undefined), () => NOW)).toEqual({ id: "unknown", wallMs: NOW });
    expect(await readBoot(procfs("\n", "not a number\n"), () => NOW)).toEqual({ id: "unknown", wallMs: NOW });
  });
});
