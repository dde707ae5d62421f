import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SHIPPED_NODE_OPTIONS } from "../../bench/config.js";

const root = resolve(import.meta.dirname, "../..");
const unitPath = join(root, "systemd/ringwatch.service");
const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;
if (!hasAnalyze) console.warn("systemd-analyze not installed: the unit is not verified on this machine (CI installs systemd)");
const run = hasAnalyze || process.env.CI ? it : it.skip;

/** The unit as installed, with ExecStart pointing at this checkout's build (the real path does not exist here). */
function unitForThisCheckout(): string {
  const main = join(root, "dist/agent/main.js");
  expect(existsSync(main), "run `npm run build` first").toBe(true);
  const dir = mkdtempSync(join(tmpdir(), "rw-unit-"));
  const p = join(dir, "ringwatch.service");
  writeFileSync(p, readFileSync(unitPath, "utf8").replace("/usr/bin/ringwatch", main));
  return p;
}

describe("systemd/ringwatch.service", () => {
  run("passes systemd-analyze verify without a warning", () => {
    const r = spawnSync("systemd-analyze", ["verify", unitForThisCheckout()], { encoding: "utf8" });
    expect(r.stderr.trim()).toBe("");
    expect(r.status).toBe(0);
  });

  run("has the exposure score systemd/README.md states (<= 2.0)", () => {
    const out = execFileSync("systemd-analyze", ["security", "--offline=yes", "--no-pager", unitForThisCheckout()], { encoding: "utf8" });
    const m = /Overall exposure level for \S+: (\d+\.\d+)/.exec(out);
    expect(m).not.toBeNull();
    const score = Number(m?.[1]);
    expect(score).toBeLessThanOrEqual(2.0);
    const doc = readFileSync(join(root, "systemd/README.md"), "utf8");
    expect(doc).toContain(`exposure level ${score.toFixed(1)}`);
  });

  it("sets the node options the benchmarks measure (bench/config.ts); /etc/default/ringwatch may override them", () => {
    const lines = readFileSync(unitPath, "utf8").split("\n");
    expect(lines).toContain(`Environment=NODE_OPTIONS=${SHIPPED_NODE_OPTIONS}`);
    expect(lines).toContain("EnvironmentFile=-/etc/default/ringwatch"); // systemd: the file's settings win over Environment=
  });

  it("keeps the hardening the collectors allow", () => {
    const unit = readFileSync(unitPath, "utf8");
    for (const line of [
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "ProtectHome=yes",
      "PrivateTmp=yes",
      "User=ringwatch",
      "CapabilityBoundingSet=CAP_SYSLOG",
      "AmbientCapabilities=CAP_SYSLOG",
      "DevicePolicy=closed",
    ]) {
      expect(unit.split("\n")).toContain(line);
    }
  });
});
