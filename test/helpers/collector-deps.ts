/** Test wiring for collectors: a fresh registry, a silent logger, the REAL exec; series readers. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, expect, vi } from "vitest";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { Registry } from "prom-client";
import { CollectorError, type CollectorDeps } from "../../collectors/collector.js";
import { createExec, type Exec } from "../../collectors/exec.js";

export const fakesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fakes");

/** The one collector wiring of the tests: a fresh registry, a silent logger, the real exec (or `exec`), the clock (or `now`). */
export function makeDeps(opts: { exec?: Exec; now?: () => number } = {}): CollectorDeps {
  return { registry: new Registry(), logger: pino({ level: "silent" }), exec: opts.exec ?? createExec(), now: opts.now ?? (() => Date.now()) };
}

export interface Series {
  labels: Record<string, string | number>;
  value: number;
}

/** Every series of one metric, as the registry would expose it; [] when it has none. */
export async function series(registry: Registry, name: string): Promise<Series[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  const data = await metric.get();
  return data.values.map((v) => ({ labels: { ...v.labels } as Record<string, string | number>, value: v.value }));
}

/** Value of the series with exactly these labels, or undefined. */
export async function valueOf(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const all = await series(registry, name);
  const want = JSON.stringify(Object.entries(labels).sort());
  return all.find((s) => JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}

/** One metric's values keyed by one of its labels (e.g. MTU by device). */
export async function byLabel(registry: Registry, name: string, label: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of await series(registry, name)) out[String(s.labels[label])] = s.value;
  return out;
}

/** The CollectorError `p` rejects with; the test fails when it resolves or rejects with anything else. */
export async function collectorError(p: Promise<unknown>): Promise<CollectorError> {
  const err: unknown = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CollectorError);
  return err as CollectorError;
}

/**
 * The time limit a test gives a fake tool's run that must succeed: a fake is a node script, and on
 * a machine busy with other work one can take seconds just to start. A run that succeeds ends when
 * the fake does, so the limit costs nothing.
 */
export const FAKE_TOOL_TIMEOUT_MS = 20_000;

/**
 * `exec` giving the runs that `needsTime` picks at least FAKE_TOOL_TIMEOUT_MS: a fake that must
 * answer has the time to start, while the run under test keeps the collector's short time limit
 * (a stuck fake is killed by it whether it had started or not).
 */
export function withTimeToStart(exec: Exec, needsTime: (file: string, args: readonly string[]) => boolean): Exec {
  return {
    ...exec,
    run: (file, args, o = {}) => exec.run(file, args, needsTime(file, args) ? { ...o, timeoutMs: Math.max(o.timeoutMs ?? 0, FAKE_TOOL_TIMEOUT_MS) } : o),
  };
}

/**
 * Per-test wiring for a collector that runs fake tools: a temp dir, FAKE_CALL_LOG pointing into it
 * (the fakes append each invocation), fresh deps; everything torn down after each test.
 */
export function useToolRig(prefix: string): { deps: () => CollectorDeps; tmp: () => string; calls: () => string[] } {
  let tmp = "";
  let callLog = "";
  let deps: CollectorDeps | undefined;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), prefix));
    callLog = join(tmp, "calls.log");
    vi.stubEnv("FAKE_CALL_LOG", callLog);
    deps = makeDeps();
  });
  afterEach(async () => {
    await deps?.exec.killAll(100);
    vi.unstubAllEnvs();
    rmSync(tmp, { recursive: true, force: true });
  });
  return {
    deps: () => {
      if (!deps) throw new Error("useToolRig: deps used outside a test");
      return deps;
    },
    tmp: () => tmp,
    calls: () => (existsSync(callLog) ? readFileSync(callLog, "utf8").trim().split("\n") : []),
  };
}
