import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createAgent } from "../../agent/app.js";
import { parseCli } from "../../agent/config/config.js";
import { FLAGS } from "../../agent/config/flags.js";
import { envName } from "../../collectors/settings/flags.js";

const root = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");

function registeredMetricNames(): string[] {
  const action = parseCli([], {});
  if (action.kind !== "run") throw new Error("expected run");
  const agent = createAgent(action.config, { logger: pino({ level: "silent" }) });
  return agent.registry
    .getMetricsAsArray()
    .map((m) => m.name)
    .filter((n) => n.startsWith("ringwatch_"));
}

describe("README", () => {
  it("documents every ringwatch metric the agent registers", () => {
    const names = registeredMetricNames();
    expect(names.length).toBeGreaterThan(60);
    const missing = names.filter((n) => !readme.includes(n) && !readme.includes(`${n.replace(/_total$/, "")}`));
    expect(missing).toEqual([]);
  });

  it("documents every flag with its environment variable", () => {
    for (const f of FLAGS) {
      expect(readme).toContain(`--${f.kind === "bool" ? "[no-]" : ""}${f.name}`);
      expect(readme).toContain(envName(f.name));
    }
  });

  it("names the test command that .ci/run runs", () => {
    const ci = readFileSync(join(root, ".ci/run"), "utf8");
    expect(readme).toContain("npm ci && npm test");
    expect(ci).toMatch(/^npm ci\b.*$/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});
