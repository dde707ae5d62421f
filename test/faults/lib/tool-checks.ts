/** What every tool-fault run must show, whatever the fault: shared by the tools-*.test.ts files. */
import { expect } from "vitest";
import { sample } from "../../helpers/agent-process.js";
import { percentile } from "./proc.js";
import { MIN_PROC_SAMPLES, MIN_REFERENCE_SCRAPES, MIN_SCRAPES, toolReadings, type FaultRun, type Observation } from "./tool-faults.js";

/** Tools that one agent runs at most at once: dmon, --query-gpu, ibstat or perfquery (in turn), lsmod, ip. */
export const MAX_CHILDREN = 5;

export function find(run: FaultRun, mode: string, set: "A" | "B"): Observation {
  const o = run.runs.find((r) => r.mode === mode && r.set === set);
  if (!o) throw new Error(`no run for ${mode}/${set}`);
  return o;
}

export function success(o: Observation, collector: string): number | undefined {
  return sample(o.final, `ringwatch_collector_success{collector="${collector}"}`);
}

/** Warn/error log lines about one collector. */
export function troubleLogs(o: Observation, collector: string): string[] {
  return o.logs.filter((l) => l.includes(`"collector":"${collector}"`) && /"level":(40|50)/.test(l));
}

/**
 * Keeps serving: every scrape answered 200 with a body, and no slower than the clean reference
 * agent measured in the same seconds on the same machine allows (generous factors: the machine is
 * shared, but an agent whose event loop stalls on a tool's output misses them by seconds).
 */
export function expectServed(o: Observation, run: FaultRun): void {
  expect(o.scrapes.length).toBeGreaterThanOrEqual(MIN_SCRAPES);
  expect(run.referenceScrapes.length).toBeGreaterThanOrEqual(MIN_REFERENCE_SCRAPES);
  expect(o.scrapes.filter((s) => s.status !== 200 || s.error !== undefined || !s.body.includes("ringwatch_build_info"))).toEqual([]);
  const ms = o.scrapes.map((s) => s.ms);
  const from = Math.min(...o.scrapes.map((s) => s.atMs));
  const to = Math.max(...o.scrapes.map((s) => s.atMs + s.ms));
  const ref = run.referenceScrapes.filter((s) => s.atMs >= from && s.atMs <= to).map((s) => s.ms);
  const p50 = percentile(ms, 50);
  const refP50 = percentile(ref, 50);
  // On a machine busy with other work, the reference's own slow scrapes say how slow the machine
  // was: its median may sit well below them while this agent's half of the scrapes hit busy seconds.
  const refP90 = percentile(ref, 90);
  expect(p50, `p50 ${p50.toFixed(0)} ms vs reference ${refP50.toFixed(0)} ms (p90 ${refP90.toFixed(0)} ms)`).toBeLessThanOrEqual(
    Math.max(300, 5 * refP50, 2 * refP90),
  );
  expect(Math.max(...ms), `max ${Math.max(...ms).toFixed(0)} ms vs reference ${Math.max(...ref).toFixed(0)} ms`).toBeLessThanOrEqual(
    Math.max(3000, 3 * Math.max(...ref)),
  );
}

/** No wrong value: every tool reading ever served is one the clean agent also served. */
export function expectNoWrongReadings(o: Observation, run: FaultRun): void {
  expect(run.reference.size).toBeGreaterThan(20);
  const wrong = new Set<string>();
  for (const body of [...o.scrapes.map((s) => s.body), o.final]) for (const l of toolReadings(body)) if (!run.reference.has(l)) wrong.add(l);
  expect([...wrong]).toEqual([]);
}

/**
 * Children bounded while it runs, SIGTERM: exit 0 within the agent's 5 s shutdown deadline, nothing
 * left. (Resident memory under a flood is a figure of the machine: scripts/faults/tools.mjs checks it.)
 */
export function expectBoundedAndClean(o: Observation): void {
  expect(o.proc.length).toBeGreaterThanOrEqual(MIN_PROC_SAMPLES);
  const most = o.proc.reduce((a, b) => (b.children > a.children ? b : a));
  const polls = o.logs.filter((l) => l.includes("took longer than")); // the runner gave up on a poll whose tool still ran
  expect(most.children, `children at ${most.atMs} ms: ${most.childCommands.join(" | ")}${polls.length ? `; ${polls.join("; ")}` : ""}`).toBeLessThanOrEqual(
    MAX_CHILDREN,
  );
  expect(o.stop.code).toBe(0);
  expect(o.stop.ms).toBeLessThan(5000);
  expect(o.leftovers).toEqual([]);
  expect(o.stderr).toBe("");
}

/** The NCCL collector, which runs no tool, read every line the simulated job wrote. */
export function expectNcclUnaffected(o: Observation): void {
  expect(o.ncclLines).toBeGreaterThan(50);
  expect(sample(o.final, "ringwatch_nccl_log_lines_total")).toBe(o.ncclLines);
  expect(success(o, "nccl")).toBe(1);
}

/** Set A: dmon, ibstat, lsmod and ip misbehave. */
export function expectSetA(o: Observation, run: FaultRun): void {
  expectServed(o, run);
  expectNoWrongReadings(o, run);
  expectBoundedAndClean(o);
  expectNcclUnaffected(o);
  // header-junk: lsmod's capture is three complete module lines, then junk lines: the modules are
  // read and the junk skipped, which may well count as success (the readings were checked above).
  const failing = o.mode === "header-junk" ? ["infiniband", "mtu"] : ["infiniband", "gdr", "mtu"];
  for (const c of failing) {
    expect(success(o, c), c).toBe(0);
    expect(troubleLogs(o, c).length, `${c} logged its failure`).toBeGreaterThan(0);
  }
  // Their series are withdrawn, not left at a last value (infiniband keeps what a crashing ibstat
  // printed completely before it died, by design; expectNoWrongReadings checked those values).
  expect(toolReadings(o.final).filter((l) => /^ringwatch_network_/.test(l) || (failing.includes("gdr") && l.startsWith("ringwatch_gdr_")))).toEqual([]);
  if (!["crash", "signal", "midline"].includes(o.mode)) expect(toolReadings(o.final).filter((l) => l.startsWith("ringwatch_infiniband_"))).toEqual([]);
  expect(troubleLogs(o, "gpu").length, "gpu logged the dmon trouble").toBeGreaterThan(0);
}

/** Set B: --query-gpu and perfquery misbehave; dmon, ibstat, lsmod and ip work. */
export function expectSetB(o: Observation, run: FaultRun): void {
  expectServed(o, run);
  expectNoWrongReadings(o, run);
  expectBoundedAndClean(o);
  expectNcclUnaffected(o);
  expect(success(o, "gdr")).toBe(1);
  expect(success(o, "mtu")).toBe(1);
  expect(success(o, "infiniband")).toBe(0);
  expect(troubleLogs(o, "infiniband").some((l) => l.includes("perfquery"))).toBe(true);
  // The dmon stream goes on without identities: samples were served.
  expect(o.scrapes.some((s) => sample(s.body, 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined)).toBe(true);
  // header-junk: the identity line is complete before the junk, so the identities may be read.
  if (o.mode !== "header-junk") expect(o.logs.some((l) => l.includes("identity query"))).toBe(true);
}
