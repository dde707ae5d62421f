/**
 * The README is the front page: at most 20,000 bytes, with the test command CI runs. Every metric the
 * agent registers is defined once, in a table row of docs/metrics.md (the agent's own) or of its
 * collector's README (collectors/<name>/README.md), and every collector's README has the same
 * sections; flags are checked by configuration.test.ts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createAgent } from "../../agent/app.js";
import { COLLECTOR_MODULES } from "../../collectors/index.js";
import { parseCli } from "../../agent/config/config.js";
import { FLAGS } from "../../agent/config/flags.js";
import { definedMetrics, proseLines } from "./markdown.js";

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

/** docs/metrics.md and every collectors/<name>/README.md, by path. */
function metricDocs(): Map<string, string> {
  const docs = new Map<string, string>([["docs/metrics.md", readFileSync(join(root, "docs/metrics.md"), "utf8")]]);
  for (const name of readdirSync(join(root, "collectors")).sort()) {
    const path = `collectors/${name}/README.md`;
    if (statSync(join(root, "collectors", name)).isDirectory() && readdirSync(join(root, "collectors", name)).includes("README.md")) {
      docs.set(path, readFileSync(join(root, path), "utf8"));
    }
  }
  return docs;
}

describe("README", () => {
  it("is at most 20,000 bytes", () => {
    expect(Buffer.byteLength(readme, "utf8")).toBeLessThanOrEqual(20_000);
  });

  it("names the test command that .ci/run runs", () => {
    const ci = readFileSync(join(root, ".ci/run"), "utf8");
    expect(readme).toContain("npm ci && npm test");
    expect(ci).toMatch(/^npm ci\b.*$/m);
    expect(ci).toMatch(/^npm test$/m);
  });
});

describe("metric definitions", () => {
  const docs = metricDocs();
  const defined = new Map<string, string[]>();
  for (const [path, text] of docs) for (const name of definedMetrics(text)) defined.set(name, [...(defined.get(name) ?? []), path]);

  it("documents every ringwatch metric the agent registers, in exactly one of docs/metrics.md and collectors/*/README.md", () => {
    const names = registeredMetricNames();
    expect(names.length).toBeGreaterThan(60);
    expect(docs.has("collectors/nccl/README.md")).toBe(true);
    const notOnce = names.filter((n) => defined.get(n)?.length !== 1).map((n) => `${n}: ${(defined.get(n) ?? ["nowhere"]).join(", ")}`);
    expect(notOnce).toEqual([]);
  });

  it("defines no metric the agent does not register", () => {
    const names = new Set(registeredMetricNames());
    expect([...defined.keys()].filter((n) => !names.has(n))).toEqual([]);
  });

  it("reads a metric's name from the first cell of a table row only", () => {
    const text = [
      "The `ringwatch_in_prose` metric is mentioned, not defined.",
      "",
      "| metric | meaning |",
      "|---|---|",
      "| `ringwatch_a_total`, `ringwatch_b{x}` | see `ringwatch_c` |",
      "| `ringwatch_d` (counter) \\| x | y |",
      "",
      "```",
      "| `ringwatch_in_code` | x |",
      "```",
    ].join("\n");
    expect(definedMetrics(text)).toEqual(["ringwatch_a_total", "ringwatch_b", "ringwatch_d"]);
  });
});

describe("collector READMEs", () => {
  it("have the same sections in the same order", () => {
    for (const m of COLLECTOR_MODULES) {
      const text = readFileSync(join(root, "collectors", m.name, "README.md"), "utf8");
      const sections = proseLines(text)
        .map((l) => /^## (.*)$/.exec(l.text)?.[1])
        .filter((h) => h !== undefined);
      expect(sections, m.name).toEqual(["What it reads", "Metrics", "Privileges", "Settings", "Files"]);
    }
  });
});

describe("the README's docker run example", () => {
  const block = /```sh\n(docker run [\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const words = block.replace(/\\\n/g, " ").trim().split(/\s+/);
  // The image: the last bare "ringwatch" (the first is the container's --name).
  const image = words.lastIndexOf("ringwatch");
  const volumes = words.flatMap((w, i) => (w === "-v" ? [words[i + 1] ?? ""] : []));
  const flagDefault = (name: string): string => String(FLAGS.find((f) => f.name === name)?.default ?? "");

  it("passes flags the agent accepts", () => {
    expect(image).toBeGreaterThan(0);
    const action = parseCli(words.slice(image + 1), {});
    expect(action.kind).toBe("run");
  });

  it("mounts the default NCCL log folder read-only at its own path, and a volume for the state folder", () => {
    const nccl = flagDefault("collector.nccl.path");
    expect(nccl).toBe("/var/log/nccl");
    expect(volumes).toContain(`${nccl}:${nccl}:ro`);
    const stateDir = dirname(flagDefault("collector.kmsg.state-file"));
    expect(volumes.some((v) => v.endsWith(`:${stateDir}`) && !v.startsWith("/"))).toBe(true);
  });

  it("mounts every host path a --path or --collector flag of it names", () => {
    const named = words
      .slice(image + 1)
      .filter((w) => /^--(path\.|collector\.kmsg\.journal-directory)/.test(w))
      .map((w) => w.slice(w.indexOf("=") + 1));
    expect(named.length).toBe(3);
    for (const p of named) expect(volumes.some((v) => v.split(":")[1] === p)).toBe(true);
  });
});
