/**
 * What a SIGHUP reload applies live, hands to collectors' reconfigure(), or names as needing a
 * restart (planReload), and how applyReload carries it out and counts it.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { Collector } from "../../../collectors/collector.js";
import type { CommonSettings } from "../../../collectors/settings/common.js";
import { parseCli, type AgentConfig } from "../../../agent/config/config.js";
import { FLAGS, MODULES } from "../../../agent/config/flags.js";
import { SETTINGS, planReload } from "../../../agent/config/reload-plan.js";
import { applyReload, reloadFailed } from "../../../agent/reload.js";
import { createSelfMetrics } from "../../../agent/self-metrics.js";
import { ConfigError } from "../../../agent/config/config.js";
import { NO_WEB_CONFIG, type LoadedWebConfig } from "../../../agent/web/source.js";
import { sample } from "../../helpers/agent-process.js";
import { memoryLogger } from "../../helpers/memory-logger.js";

function config(...argv: string[]): AgentConfig {
  const a = parseCli(argv, {});
  if (a.kind !== "run") throw new Error("expected run");
  return a.config;
}

/** A collector that records what each reconfigure() call was given: [its settings, the shared settings]. */
function collector(name: string, reconfigure?: () => void): Collector & { seen: Array<[object, CommonSettings]> } {
  const seen: Array<[object, CommonSettings]> = [];
  const c: Collector & { seen: Array<[object, CommonSettings]> } = { name, mode: "poll", seen, once: () => Promise.resolve() };
  if (reconfigure)
    c.reconfigure = (settings, common) => {
      seen.push([settings, common]);
      reconfigure();
    };
  return c;
}

describe("planReload", () => {
  it("knows every flag (a new flag must say who applies it)", () => {
    const known = new Set([...SETTINGS.map((s) => s.flag), "config.file", "collector.interval", "collector.disable-defaults"]);
    expect(FLAGS.map((f) => f.name).filter((n) => !known.has(n))).toEqual([]);
  });

  it("sorts changes into live, reconfigure() and restart", () => {
    const started = config();
    const next = config(
      "--log.level=debug",
      "--collector.gdr.interval=1m",
      "--collector.interval=30s", // infiniband and mtu inherit it
      "--web.listen-address=:9999",
      "--collector.nccl.hang-threshold=30s",
      "--collector.gpu.nvidia-smi=/opt/nvidia-smi",
      "--collector.mtu.device-exclude=^lo$",
      "--no-collector.gdr",
    );
    const nccl = collector("nccl", () => undefined);
    const plan = planReload({ started, current: started, next, collectors: [collector("gpu"), collector("mtu"), collector("gdr"), nccl] });
    expect(plan.live).toEqual(["log.level", "collector.infiniband.interval", "collector.gdr.interval", "collector.mtu.interval"]);
    expect([...plan.reconfigure]).toEqual([["nccl", ["collector.nccl.hang-threshold"]]]);
    expect(plan.restart).toEqual([
      { flag: "web.listen-address", running: ":9742", wanted: ":9999" },
      { flag: "collector.gpu.nvidia-smi", running: "nvidia-smi", wanted: "/opt/nvidia-smi", collectors: ["gpu"] },
      { flag: "collector.gdr", running: "true", wanted: "false" },
      { flag: "collector.mtu.device-exclude", running: started.collectors.mtu.deviceExclude?.source, wanted: "^lo$", collectors: ["mtu"] },
    ]);
  });

  it("ignores settings of collectors that do not run, and names a pending restart again at the next reload", () => {
    const started = config("--no-collector.infiniband");
    const next = config("--no-collector.infiniband", "--collector.infiniband.ibstat=/x/ibstat", "--web.telemetry-path=/m");
    const first = planReload({ started, current: started, next, collectors: [] });
    expect(first.restart.map((r) => r.flag)).toEqual(["web.telemetry-path"]);
    const again = planReload({ started, current: next, next, collectors: [] });
    expect(again.restart.map((r) => r.flag)).toEqual(["web.telemetry-path"]);
    expect(again.live).toEqual([]);
    const back = planReload({ started, current: next, next: started, collectors: [] });
    expect(back.restart).toEqual([]);
  });

  it("--collector.disable-defaults: a reload names each collector's switch that it would change, as needing a restart", () => {
    const started = config("--collector.disable-defaults", "--collector.mtu", "--collector.nccl");
    const all = config("--collector.mtu", "--collector.nccl");
    expect(planReload({ started, current: started, next: all, collectors: [] }).restart).toEqual(
      ["gpu", "infiniband", "gdr", "job", "kmsg"].map((n) => ({ flag: `collector.${n}`, running: "false", wanted: "true" })),
    );
    // Every collector named explicitly: the flag changes no switch, so there is nothing to restart for.
    const named = ["gpu", "infiniband", "gdr", "mtu", "nccl", "job", "kmsg"].map((n) => `--collector.${n}`);
    expect(
      planReload({ started: config(...named), current: config(...named), next: config("--collector.disable-defaults", ...named), collectors: [] }).restart,
    ).toEqual([]);
  });

  it("calls reconfigure() only for settings that changed since the last reload", () => {
    const started = config();
    const current = config("--collector.nccl.retire-after=2h");
    const plan = planReload({ started, current, next: current, collectors: [collector("nccl", () => undefined)] });
    expect(plan.reconfigure.size).toBe(0);
    const ipv6 = config("--web.listen-address=[::1]:9742");
    expect(planReload({ started, current: started, next: ipv6, collectors: [] }).restart).toEqual([
      { flag: "web.listen-address", running: ":9742", wanted: "[::1]:9742" },
    ]);
  });
});

function target(collectors: Collector[], web: { accept: boolean } = { accept: true }) {
  const { logger, lines } = memoryLogger("info");
  const registry = new Registry();
  const self = createSelfMetrics(registry, "test");
  const runnerCalls: AgentConfig[] = [];
  const webCalls: Array<[string | undefined, LoadedWebConfig]> = [];
  return {
    lines,
    registry,
    runnerCalls,
    webCalls,
    t: {
      logger,
      collectors,
      self,
      now: () => 1_800_000_000_000,
      reconfigureRunner: (next: AgentConfig) => {
        runnerCalls.push(next);
        return [] as string[];
      },
      replaceWebConfig: (path: string | undefined, loaded: LoadedWebConfig) => {
        webCalls.push([path, loaded]);
        return web.accept;
      },
    },
  };
}

describe("applyReload", () => {
  it("sets the log level, hands the new settings to the runner, the web config and reconfigure(), and counts a success", async () => {
    const nccl = collector("nccl", () => undefined);
    const gdr = collector("gdr", () => undefined);
    const x = target([nccl, gdr]);
    const started = config();
    const next = config("--log.level=debug", "--collector.nccl.max-communicators=8", "--collector.gdr.interval=30s");
    expect(applyReload(x.t, started, started, next, NO_WEB_CONFIG)).toBe(true);
    expect(x.t.logger.level).toBe("debug");
    expect(x.t.logger.child({ collector: "gdr" }).isLevelEnabled("debug")).toBe(true);
    expect(x.runnerCalls).toEqual([next]);
    expect(x.webCalls).toEqual([[undefined, NO_WEB_CONFIG]]);
    expect(nccl.seen).toEqual([[next.collectors.nccl, next]]);
    expect(gdr.seen).toEqual([]); // its interval is the runner's business
    const text = await x.registry.metrics();
    expect(sample(text, 'ringwatch_config_reloads_total{result="success"}')).toBe(1);
    expect(sample(text, "ringwatch_config_last_reload_success_timestamp_seconds")).toBe(1_800_000_000);
    const info = x.lines().find((l) => l.msg === "configuration reloaded");
    expect(info).toMatchObject({
      ok: true,
      applied: ["log.level", "collector.gdr.interval", "collector.nccl.max-communicators"],
      reconfigured: ["nccl"],
      needs_restart: [],
    });
  });

  it("a collector that throws in reconfigure(): logged, the reload counts as failed, the others still get theirs", async () => {
    const nccl = collector("nccl", () => {
      throw new Error("cannot follow /nope: EACCES");
    });
    const gpu = collector("gpu", () => undefined);
    const x = target([gpu, nccl]);
    // A gpu collector whose module says that its reconfigure() applies a new interval.
    const t = { ...x.t, modules: MODULES.map((m) => (m.name === "gpu" ? { ...m, reloadable: ["collector.gpu.interval"] } : m)) };
    const started = config();
    const next = config("--collector.nccl.path=/nope", "--collector.gpu.interval=10s");
    expect(applyReload(t, started, started, next, NO_WEB_CONFIG)).toBe(false);
    expect(gpu.seen).toEqual([[next.collectors.gpu, next]]);
    expect(x.lines().find((l) => l.msg === "collector could not apply its new settings")).toMatchObject({
      level: 50,
      collector: "nccl",
      settings: ["collector.nccl.path"],
      reason: "cannot follow /nope: EACCES",
    });
    const text = await x.registry.metrics();
    expect(sample(text, 'ringwatch_config_reloads_total{result="failure"}')).toBe(1);
    expect(sample(text, 'ringwatch_config_reloads_total{result="success"}')).toBe(0);
  });

  it("warns once per setting that needs a restart, naming it, and when the web config would turn TLS on", () => {
    const x = target([collector("mtu")], { accept: false });
    const started = config();
    const next = config("--web.telemetry-path=/m", "--collector.mtu.ip=/sbin/ip", "--web.config.file=/etc/ringwatch/web.yml");
    const tlsOn = { ...NO_WEB_CONFIG, tls: {} } as LoadedWebConfig;
    expect(applyReload(x.t, started, started, next, tlsOn)).toBe(true);
    const warnings = x.lines().filter((l) => l.level === 40);
    expect(warnings.map((w) => w.setting)).toEqual(["--web.telemetry-path", "--collector.mtu.ip", "--web.config.file"]);
    expect(warnings[1]).toMatchObject({
      msg: "--collector.mtu.ip changed; it takes effect after a restart (collector mtu cannot change it while running)",
      running: "ip",
      wanted: "/sbin/ip",
      collectors: ["mtu"],
    });
    expect(warnings[2]).toMatchObject({ wanted: "/etc/ringwatch/web.yml (turns TLS on)" });
  });
});

describe("reloadFailed", () => {
  it("logs one line and counts a failure, for a config error and for anything unexpected", async () => {
    const x = target([]);
    reloadFailed(x.t, new ConfigError('config file /etc/ringwatch.yml: unknown setting "x"'));
    reloadFailed(x.t, new TypeError("boom"));
    const errors = x.lines().filter((l) => l.level === 50);
    expect(errors.map((e) => e.reason)).toEqual(['config file /etc/ringwatch.yml: unknown setting "x"', "unexpected error: boom"]);
    expect(sample(await x.registry.metrics(), 'ringwatch_config_reloads_total{result="failure"}')).toBe(2);
  });
});
