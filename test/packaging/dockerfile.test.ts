import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SHIPPED_NODE_OPTIONS } from "../../bench/config.js";
import { kmsgModule } from "../../collectors/kmsg/module.js";

// No Docker engine runs on the CI machines, so the image cannot be built here; these checks
// hold the Dockerfile to the packaging rules instead.
const text = readFileSync(join(resolve(import.meta.dirname, "../.."), "Dockerfile"), "utf8");
const stages = text.split(/^FROM /m).slice(1);

describe("Dockerfile", () => {
  it("is multi-stage on a slim Node.js LTS image", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const s of stages) expect(s).toMatch(/^node:\$\{NODE_VERSION\}-\w+-slim/);
    const version = /^ARG NODE_VERSION=(\d+)$/m.exec(text)?.[1];
    expect(Number(version) % 2).toBe(0); // even majors are the LTS lines
  });

  it("runs the final stage as a non-root user without dev dependencies", () => {
    const final = stages[stages.length - 1] ?? "";
    const user = /^USER (\S+)$/m.exec(final)?.[1];
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
    expect(final).not.toMatch(/npm (ci|install)(?![^\n]*--omit=dev)/);
    expect(stages[0]).toMatch(/npm prune --omit=dev/);
    expect(final).toMatch(/ENTRYPOINT \["node", "\/opt\/ringwatch\/dist\/agent\/main.js"\]/);
  });

  it("creates the directory of the one file ringwatch writes (--collector.kmsg.state-file's default), owned by the image's user, before it switches to it", () => {
    const final = stages[stages.length - 1] ?? "";
    const stateFile = kmsgModule.flags.find((f) => f.name === "collector.kmsg.state-file")?.default;
    expect(typeof stateFile).toBe("string");
    const dir = dirname(String(stateFile));
    const user = /^USER (\S+)$/m.exec(final)?.[1] ?? "";
    const install = new RegExp(`^RUN install -d -o ${user} -g ${user} -m 0700 ${dir}$`, "m").exec(final);
    expect(install, `RUN install -d -o ${user} -g ${user} -m 0700 ${dir}`).not.toBeNull();
    expect(final.indexOf(install?.[0] ?? "")).toBeLessThan(final.indexOf(`USER ${user}`));
  });

  it("sets the node options the benchmarks measure (bench/config.ts)", () => {
    const final = stages[stages.length - 1] ?? "";
    expect(/^\s*NODE_OPTIONS=(\S+)/m.exec(final)?.[1]).toBe(SHIPPED_NODE_OPTIONS);
  });
});
