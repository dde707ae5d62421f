/**
 * The NODE_OPTIONS of the three ways ringwatch is shipped agree: the systemd unit and the image set
 * the same options, and the DaemonSet, whose value replaces the image's, repeats them and adds its
 * heap cap. Each file is parsed as its tool reads it (systemd's Environment=, the Dockerfile's ENV
 * with its continuation lines, the DaemonSet's YAML), and node itself must accept every value.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { SHIPPED_NODE_OPTIONS, SHIPPED_UV_THREADPOOL_SIZE } from "../../bench/config.js";

const root = resolve(import.meta.dirname, "../..");
const read = (path: string): string => readFileSync(join(root, path), "utf8");

/** `Environment=NAME=...` or `Environment="NAME=..."` of a unit (the last one wins, as in systemd). */
function unitEnv(unit: string, name = "NODE_OPTIONS"): string | undefined {
  let value: string | undefined;
  for (const line of unit.split("\n")) {
    const l = line.trim();
    if (l.startsWith(`Environment="${name}=`) && l.endsWith('"')) value = l.slice(`Environment="${name}=`.length, -1).trim();
    else if (l.startsWith(`Environment=${name}=`)) value = l.slice(`Environment=${name}=`.length).trim();
  }
  return value;
}

/** A variable as the final stage's ENV instructions set it (`ENV A=1 \` continuation lines, quoted values). */
function dockerfileEnv(dockerfile: string, name = "NODE_OPTIONS"): string | undefined {
  const stages = dockerfile.replace(/\\\n/g, " ").split(/^FROM /m);
  const final = stages[stages.length - 1] ?? "";
  let value: string | undefined;
  for (const line of final.split("\n")) {
    const env = /^ENV\s+(.*)$/.exec(line.trim());
    if (!env) continue;
    for (const m of (env[1] ?? "").matchAll(/(\w+)=("([^"]*)"|\S*)/g)) if (m[1] === name) value = m[3] ?? m[2];
  }
  return value;
}

interface DaemonSetLike {
  spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[]; resources?: { limits?: { memory?: string } } }[] } } };
}

function ringwatchContainer(yaml: string): DaemonSetLike["spec"]["template"]["spec"]["containers"][number] {
  const ds = parseYaml(yaml) as DaemonSetLike;
  const c = ds.spec.template.spec.containers.find((x) => x.name === "ringwatch");
  if (c === undefined) throw new Error("daemonset.yaml: no ringwatch container");
  return c;
}

const tokens = (options: string | undefined): string[] => (options ?? "").split(/\s+/).filter((t) => t !== "");
const HEAP_CAP = /^--max-old-space-size=(\d+)$/;

const unitText = read("systemd/ringwatch.service");
const dockerfile = read("Dockerfile");
const unit = unitEnv(unitText);
const image = dockerfileEnv(dockerfile);
const container = ringwatchContainer(read("deploy/kubernetes/daemonset.yaml"));
const pod = container.env?.find((e) => e.name === "NODE_OPTIONS")?.value;

describe("NODE_OPTIONS of the unit, the image and the DaemonSet", () => {
  it("reads each file as its tool does", () => {
    expect(unitEnv('[Service]\nEnvironment=NODE_OPTIONS=--a\nEnvironment="NODE_OPTIONS=--b --c"\n')).toBe("--b --c");
    expect(dockerfileEnv('FROM x AS b\nENV NODE_OPTIONS=--no\nFROM y\nENV A=1 \\\n    NODE_OPTIONS="--a --b" \\\n    C=2\n')).toBe("--a --b");
    expect(dockerfileEnv("FROM y\nENV NODE_OPTIONS=--a \\\n    C=2\n")).toBe("--a");
    expect(dockerfileEnv("FROM y\nENV NODE_OPTIONS=--a \\\n    C=2\n", "C")).toBe("2");
  });

  it("the unit and the image set the same options, those the benchmarks run the agent with (bench/config.ts), with no heap cap", () => {
    expect(unit).toBeDefined();
    expect(image).toBeDefined();
    expect(tokens(image)).toEqual(tokens(unit));
    expect(tokens(unit)).toEqual(tokens(SHIPPED_NODE_OPTIONS));
    expect(tokens(unit).some((t) => HEAP_CAP.test(t))).toBe(false);
  });

  it("the DaemonSet, whose value replaces the image's, repeats the shared options and adds only its heap cap", () => {
    expect(pod).toBeDefined();
    const shared = tokens(unit);
    const podTokens = tokens(pod);
    expect(podTokens.slice(0, shared.length)).toEqual(shared);
    const added = podTokens.slice(shared.length);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(HEAP_CAP);
    // No option given twice (node takes the last; a second value would silently override the first).
    const names = podTokens.map((t) => t.split("=")[0]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("the heap cap leaves room under the container's memory limit for the rest of the process and nvidia-smi", () => {
    const capMb = Number(HEAP_CAP.exec(tokens(pod).find((t) => HEAP_CAP.test(t)) ?? "")?.[1]);
    const limit = /^(\d+)Mi$/.exec(container.resources?.limits?.memory ?? "");
    expect(limit).not.toBeNull();
    expect(capMb).toBeGreaterThan(0);
    expect(capMb).toBeLessThanOrEqual(Number(limit?.[1]) * 0.75);
  });

  it("UV_THREADPOOL_SIZE: the unit and the image give libuv the same threads (bench/config.ts), and the DaemonSet keeps the image's", () => {
    expect(unitEnv(unitText, "UV_THREADPOOL_SIZE")).toBe(SHIPPED_UV_THREADPOOL_SIZE);
    expect(dockerfileEnv(dockerfile, "UV_THREADPOOL_SIZE")).toBe(SHIPPED_UV_THREADPOOL_SIZE);
    expect(container.env?.some((e) => e.name === "UV_THREADPOOL_SIZE")).toBe(false);
  });

  it("node accepts each value (it refuses an unknown option in NODE_OPTIONS)", () => {
    for (const value of [unit, image, pod]) {
      const r = spawnSync(process.execPath, ["-e", "0"], { env: { ...process.env, NODE_OPTIONS: value ?? "" }, encoding: "utf8" });
      expect(r.stderr, value).toBe("");
      expect(r.status, value).toBe(0);
    }
  });
});
