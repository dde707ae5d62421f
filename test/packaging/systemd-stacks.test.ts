/**
 * The opt-in drop-in systemd/ringwatch-stacks.conf (py-spy's CAP_SYS_PTRACE) on top of the base
 * unit: systemd-analyze verify passes, the exposure level is the one systemd/README.md states, the
 * capability and the system call are there, and the base unit has neither.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const hasAnalyze = spawnSync("systemd-analyze", ["--version"]).status === 0;
const run = hasAnalyze || process.env.CI ? it : it.skip;

/** The unit with the drop-in beside it (ringwatch.service.d/), ExecStart at this checkout's build. */
function unitWithDropIn(): string {
  const main = join(root, "dist/agent/main.js");
  expect(existsSync(main), "run `npm run build` first").toBe(true);
  const dir = mkdtempSync(join(tmpdir(), "rw-unit-"));
  writeFileSync(join(dir, "ringwatch.service"), readFileSync(join(root, "systemd/ringwatch.service"), "utf8").replace("/usr/bin/ringwatch", main));
  mkdirSync(join(dir, "ringwatch.service.d"));
  copyFileSync(join(root, "systemd/ringwatch-stacks.conf"), join(dir, "ringwatch.service.d/stacks.conf"));
  return join(dir, "ringwatch.service");
}

describe("systemd/ringwatch-stacks.conf (opt-in)", () => {
  run("passes systemd-analyze verify with the base unit, and scores what systemd/README.md says", () => {
    const unit = unitWithDropIn();
    const v = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
    expect(v.stderr.trim()).toBe("");
    expect(v.status).toBe(0);
    const out = execFileSync("systemd-analyze", ["security", "--offline=yes", "--no-pager", unit], { encoding: "utf8" });
    expect(out).toMatch(/✗ CapabilityBoundingSet=~CAP_SYS_PTRACE/);
    expect(out).toMatch(/✗ SystemCallFilter=~@debug .*ptrace is allowed/);
    const score = Number(/Overall exposure level for \S+: (\d+\.\d+)/.exec(out)?.[1]);
    expect(score).toBeLessThanOrEqual(2.5);
    expect(readFileSync(join(root, "systemd/README.md"), "utf8")).toContain(`exposure level is ${score.toFixed(1)}`);
  });

  it("adds CAP_SYS_PTRACE and ptrace only as a drop-in: the base unit has neither", () => {
    const base = readFileSync(join(root, "systemd/ringwatch.service"), "utf8");
    expect(base).not.toContain("CAP_SYS_PTRACE");
    expect(base).not.toMatch(/SystemCallFilter=ptrace/);
    const dropIn = readFileSync(join(root, "systemd/ringwatch-stacks.conf"), "utf8");
    expect(dropIn).toMatch(/^AmbientCapabilities=CAP_SYS_PTRACE$/m);
    expect(dropIn).toMatch(/^Environment=RINGWATCH_COLLECTOR_NCCL_STACKS_SOURCE=auto$/m);
  });
});
