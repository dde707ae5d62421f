import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CollectorError, type Collector, type CollectorHealth, type SourceState } from "../../collectors/collector.js";
import { Runner } from "../../agent/runner.js";
import { createSelfMetrics } from "../../agent/self-metrics.js";
import { sample } from "../helpers/agent-process.js";
import { memoryLogger } from "../helpers/memory-logger.js";

/** A poll collector whose behaviour each test scripts. */
function scripted(name: string, step: (n: number) => Promise<void>): Collector & { calls: number; active: number; maxActive: number } {
  const c = {
    name,
    mode: "poll" as const,
    calls: 0,
    active: 0,
    maxActive: 0,
    async update() {
      c.calls++;
      c.active++;
      c.maxActive = Math.max(c.maxActive, c.active);
      try {
        await step(c.calls);
      } finally {
        c.active--;
      }
    },
    once() {
      return c.update();
    },
  };
  return c;
}

const runners: Runner[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const r of runners.splice(0)) await r.stop();
});

function setup(collectors: Collector[], timeoutMs = 1000) {
  const registry = new Registry();
  const { logger, lines } = memoryLogger();
  const hook = { refresh: (): void => undefined };
  const self = createSelfMetrics(registry, "test", () => hook.refresh());
  const runner = new Runner(collectors, self, logger, { timeoutMs, intervalsMs: { gdr: 1000, mtu: 1000, infiniband: 1000 }, now: () => 1_700_000_000_000 });
  hook.refresh = () => runner.refreshStreams();
  runners.push(runner);
  return { registry, runner, lines };
}

describe("Runner", () => {
  it("records success, duration and last success of a poll", async () => {
    const c = scripted("gdr", () => Promise.resolve());
    const { registry, runner } = setup([c]);
    await runner.poll(c);
    const text = await registry.metrics();
    expect(sample(text, 'ringwatch_collector_success{collector="gdr"}')).toBe(1);
    expect(sample(text, 'ringwatch_collector_last_success_timestamp_seconds{collector="gdr"}')).toBe(1_700_000_000);
    expect(sample(text, 'ringwatch_collector_duration_seconds{collector="gdr"}')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'ringwatch_build_info{version="test",nodejs_version="' + process.versions.node + '"}')).toBe(1);
  });

  it("logs a failure once, not every cycle, and logs the recovery", async () => {
    const c = scripted("mtu", (n) => {
      if (n <= 3) return Promise.reject(new CollectorError("ip: not found or not executable", { absent: true }));
      if (n === 4) return Promise.reject(new CollectorError("ip -j -d link show: exit code 1: boom"));
      return Promise.resolve();
    });
    const { registry, runner, lines } = setup([c]);
    for (let i = 0; i < 5; i++) await runner.poll(c);
    const logged = lines().filter((l) => l.collector === "mtu");
    expect(logged.map((l) => [l.level, l.reason ?? l.msg])).toEqual([
      [30, "ip: not found or not executable"],
      [40, "ip -j -d link show: exit code 1: boom"],
      [30, "collector recovered"],
    ]);
    expect(logged.some((l) => "stack" in l || "err" in l)).toBe(false);
    expect(sample(await registry.metrics(), 'ringwatch_collector_success{collector="mtu"}')).toBe(1);
  });

  it("reports 0 and keeps running when a collector throws something unexpected", async () => {
    const c = scripted("gdr", () => Promise.reject(new TypeError("x is undefined")));
    const { registry, runner, lines } = setup([c]);
    await runner.poll(c);
    expect(sample(await registry.metrics(), 'ringwatch_collector_success{collector="gdr"}')).toBe(0);
    expect(lines().some((l) => l.level === 50 && l.reason === "x is undefined")).toBe(true);
  });

  it("never overlaps a collector with itself and enforces the time limit", async () => {
    let release: () => void = () => {};
    const c = scripted("infiniband", (n) => (n === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve()));
    const { registry, runner } = setup([c], 200);
    const first = runner.poll(c);
    const second = runner.poll(c); // while the first still runs: skipped
    await first;
    await second;
    expect(c.calls).toBe(1);
    expect(c.maxActive).toBe(1);
    const text = await registry.metrics();
    expect(sample(text, 'ringwatch_collector_success{collector="infiniband"}')).toBe(0);
    release();
  });

  it("reads stream collectors' health at scrape time", async () => {
    let ok = false;
    const stream: Collector = {
      name: "gpu",
      mode: "stream",
      start() {},
      stop: () => Promise.resolve(),
      health: () => (ok ? { ok: true, lastSuccessMs: 1_700_000_123_000 } : { ok: false, reason: "nvidia-smi: not found or not executable" }),
      once: () => Promise.resolve(),
    };
    const { registry, runner, lines } = setup([stream]);
    runner.start();
    expect(sample(await registry.metrics(), 'ringwatch_collector_success{collector="gpu"}')).toBe(0);
    expect(sample(await registry.metrics(), 'ringwatch_collector_success{collector="gpu"}')).toBe(0);
    ok = true;
    const text = await registry.metrics();
    expect(sample(text, 'ringwatch_collector_success{collector="gpu"}')).toBe(1);
    expect(sample(text, 'ringwatch_collector_last_success_timestamp_seconds{collector="gpu"}')).toBe(1_700_000_123);
    // Stream collectors log their own events; the runner adds nothing per scrape.
    expect(lines().filter((l) => l.collector === "gpu")).toEqual([]);
  });

  it("says whether each poll collector's source is present, absent or failing: one series per state, 1 on the current one", async () => {
    const results: Array<() => Promise<void>> = [
      () => Promise.reject(new CollectorError("ip: not found or not executable", { absent: true })),
      () => Promise.reject(new CollectorError("ip -j -d link show: exit code 1: boom")),
      () => Promise.reject(new TypeError("x is undefined")),
      () => Promise.resolve(),
    ];
    const c = scripted("mtu", (n) => (results[n - 1] ?? (() => Promise.resolve()))());
    const { registry, runner } = setup([c]);
    const states = async (): Promise<Record<string, number | undefined>> => {
      const text = await registry.metrics();
      return Object.fromEntries(
        ["present", "absent", "failing"].map((s) => [s, sample(text, `ringwatch_collector_source_state{collector="mtu",state="${s}"}`)]),
      );
    };
    expect(await states()).toEqual({ present: undefined, absent: undefined, failing: undefined }); // no run yet
    await runner.poll(c);
    expect(await states()).toEqual({ present: 0, absent: 1, failing: 0 });
    await runner.poll(c);
    expect(await states()).toEqual({ present: 0, absent: 0, failing: 1 });
    await runner.poll(c);
    expect(await states()).toEqual({ present: 0, absent: 0, failing: 1 });
    await runner.poll(c);
    expect(await states()).toEqual({ present: 1, absent: 0, failing: 0 });
  });

  it("reads a stream's source state from its health at scrape time: none while it starts, and the collector's own word where it has one", async () => {
    let health: CollectorHealth = { ok: false, starting: true, reason: "starting" };
    let source: SourceState | undefined = "absent";
    const stream: Collector = {
      name: "nccl",
      mode: "stream",
      start() {},
      stop: () => Promise.resolve(),
      health: () => health,
      once: () => Promise.resolve(),
      sourceState: () => source,
    };
    const { registry, runner } = setup([stream]);
    runner.start();
    const read = async (): Promise<[number | undefined, string[]]> => {
      const text = await registry.metrics();
      const on = ["present", "absent", "failing"].filter((s) => sample(text, `ringwatch_collector_source_state{collector="nccl",state="${s}"}`) === 1);
      return [sample(text, 'ringwatch_collector_success{collector="nccl"}'), on];
    };
    expect(await read()).toEqual([0, []]);
    expect((await registry.metrics()).includes('ringwatch_collector_source_state{collector="nccl"')).toBe(false);
    health = { ok: true };
    // nccl: the collector runs (success 1) while none of its log paths exists.
    expect(await read()).toEqual([1, ["absent"]]);
    source = undefined;
    expect(await read()).toEqual([1, ["present"]]);
    health = { ok: false, absent: true, reason: "gone" };
    expect(await read()).toEqual([0, ["absent"]]);
    health = { ok: false, reason: "cannot follow /x: EIO" };
    expect(await read()).toEqual([0, ["failing"]]);
    health = { ok: false, starting: true, reason: "starting" };
    expect(await read()).toEqual([0, []]);
  });

  it("SIGHUP: reschedules a poll collector whose interval changed, leaves the others, and applies a new time limit", async () => {
    // On a fake clock at 10:20:00.5, far from the top of the hour, where the rescheduled collector would poll anyway.
    vi.useFakeTimers({ now: new Date("2026-11-24T10:20:00.500Z"), toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const gdr = scripted("gdr", () => Promise.resolve());
    let slow = false;
    const mtu = scripted("mtu", () => (slow ? new Promise((r) => setTimeout(r, 300)) : Promise.resolve()));
    const { registry, runner, lines } = setup([gdr, mtu]);
    runner.start();
    expect(runner.scheduleOf("gdr")).toBe("* * * * * *");
    expect(runner.reconfigure({ timeoutMs: 1000, intervalsMs: { gdr: 3_600_000, mtu: 1000, infiniband: 1000 } })).toEqual(["gdr"]);
    expect(runner.scheduleOf("gdr")).toBe("0 0 * * * *");
    expect(runner.scheduleOf("mtu")).toBe("* * * * * *");
    const [g0, m0] = [gdr.calls, mtu.calls];
    await vi.advanceTimersByTimeAsync(5000);
    expect(gdr.calls).toBe(g0); // next poll at the top of the hour
    expect(mtu.calls).toBeGreaterThanOrEqual(m0 + 4); // still every second
    await vi.advanceTimersByTimeAsync(40 * 60_000); // past 11:00:00
    expect(gdr.calls).toBe(g0 + 1);
    vi.useRealTimers();
    expect(runner.reconfigure({ timeoutMs: 1000, intervalsMs: { gdr: 3_600_000, mtu: 1000, infiniband: 1000 } })).toEqual([]);

    runner.reconfigure({ timeoutMs: 100, intervalsMs: { gdr: 3_600_000, mtu: 3_600_000, infiniband: 1000 } });
    slow = true;
    await runner.poll(mtu);
    expect(sample(await registry.metrics(), 'ringwatch_collector_success{collector="mtu"}')).toBe(0);
    expect(lines().some((l) => l.collector === "mtu" && String(l.reason).includes("took longer than 0.1s"))).toBe(true);
    await runner.stop();
    expect(runner.scheduleOf("gdr")).toBeUndefined();
  });
});
