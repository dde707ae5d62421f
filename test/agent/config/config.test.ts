import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseCli, type AgentConfig } from "../../../agent/config/config.js";
import { FLAGS } from "../../../agent/config/flags.js";
import { helpText } from "../../../agent/config/help.js";
import { envName } from "../../../collectors/settings/flags.js";
import { intervalToCron } from "../../../collectors/settings/interval.js";
import { parseDuration } from "../../../collectors/settings/duration.js";

function config(argv: string[], env: NodeJS.ProcessEnv = {}): AgentConfig {
  const a = parseCli(argv, env);
  if (a.kind !== "run") throw new Error(`expected run, got ${a.kind}`);
  return a.config;
}

function yamlFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "rw-config-"));
  const p = join(dir, "ringwatch.yml");
  writeFileSync(p, text);
  return p;
}

describe("parseDuration", () => {
  it.each([
    ["15s", 15_000],
    ["500ms", 500],
    ["1m30s", 90_000],
    ["2h", 7_200_000],
    ["5", 5000],
    ["0.5", 500],
  ])("%s = %d ms", (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(["", "s", "15x", "-5s", "1.5.2", "abc"])("rejects %j", (text) => expect(parseDuration(text)).toBeUndefined());
});

describe("intervalToCron", () => {
  it.each([
    [1000, "* * * * * *"],
    [15_000, "*/15 * * * * *"],
    [60_000, "0 * * * * *"],
    [300_000, "0 */5 * * * *"],
    [3_600_000, "0 0 * * * *"],
  ])("%d ms → %s", (ms, expr) => expect(intervalToCron(ms)).toBe(expr));
  it.each([7000, 45_000, 90_000, 500, 7_200_000])("rejects %d ms", (ms) => expect(intervalToCron(ms)).toBeUndefined());
});

describe("parseCli", () => {
  it("has documented defaults", () => {
    const c = config([]);
    expect(c.listen).toEqual({ host: undefined, port: 9742 });
    expect(c.telemetryPath).toBe("/metrics");
    expect(c.sysfsRoot).toBe("/sys");
    expect(c.procfsRoot).toBe("/proc");
    expect(c.collectors.gpu).toEqual({ enabled: true, nvidiaSmi: "nvidia-smi", intervalSeconds: 5, dmonGroups: "pucvmet" });
    expect(c.collectors.infiniband.source).toBe("auto");
    expect(c.collectors.infiniband.intervalMs).toBe(15_000);
    expect(c.collectors.gdr.intervalMs).toBe(15_000);
    expect(c.collectors.mtu.deviceExclude?.test("veth1234")).toBe(true);
    expect(c.collectors.mtu.deviceExclude?.test("ib0")).toBe(false);
    expect(c.once).toBe(false);
    expect(c.logLevel).toBe("info");
    expect(c.collectors.nccl).toEqual({
      enabled: true,
      paths: ["/var/log/nccl"],
      hangThresholdMs: 120_000,
      maxCommunicators: 256,
      series: { rankSeries: "suspect", maxSeries: 2000 },
      retireAfterMs: 3_600_000,
      checkPids: true,
      polling: "auto",
      ras: {
        address: { host: "localhost", port: 28028 },
        intervalMs: 30_000,
        elected: true,
        settleMs: 120_000,
        pollKnownDefective: false,
        peerPort: 9742,
        nodeAddresses: [],
      },
      inspectorPaths: [],
      stacks: { source: "worker", workerSocket: "", timeoutMs: 10_000, maxPerMinute: 16 },
      flightRecorder: undefined,
    });
    const on = config([
      "--collector.nccl.flight-recorder.dump=/fr/nccl_trace_rank_",
      "--collector.nccl.flight-recorder.pipe=/fr/pipe_",
      "--collector.nccl.inspector.path=/a,/b",
    ]);
    expect(on.collectors.nccl.flightRecorder).toEqual({ dumpPrefix: "/fr/nccl_trace_rank_", pipePrefix: "/fr/pipe_" });
    expect(on.collectors.nccl.inspectorPaths).toEqual(["/a", "/b"]);
    // Off: its address is not looked at.
    const off = parseCli(["--no-collector.nccl.ras", "--collector.nccl.ras-addr=bad:addr:x"], {});
    expect(off.kind === "run" && off.config.collectors.nccl.ras).toBeUndefined();
    const v6 = parseCli(
      [
        "--collector.nccl.ras-addr=[::1]:29000",
        "--collector.nccl.ras-interval=2m",
        "--collector.nccl.ras-querier=every-node",
        "--collector.nccl.ras-settle=10s",
        "--collector.nccl.ras-poll-known-defective",
        "--collector.nccl.ras-peer-port=0",
        "--collector.nccl.node-address=10.0.0.7",
        "--collector.nccl.node-address=fd00::7",
      ],
      {},
    );
    expect(v6.kind === "run" && v6.config.collectors.nccl.ras).toEqual({
      address: { host: "::1", port: 29000 },
      intervalMs: 120_000,
      elected: false,
      settleMs: 10_000,
      pollKnownDefective: true,
      peerPort: 0,
      nodeAddresses: ["10.0.0.7", "fd00::7"],
    });
    expect(() => parseCli(["--collector.nccl.ras-peer-port=70000"], {})).toThrow(/--collector.nccl.ras-peer-port: a TCP port/);
    expect(() => parseCli(["--collector.nccl.ras-querier=some"], {})).toThrow(ConfigError);
    expect(() => parseCli(["--collector.nccl.ras-settle=soon"], {})).toThrow(ConfigError);
  });

  it("repeats --collector.nccl.path; env and YAML take comma lists and YAML lists", () => {
    expect(config(["--collector.nccl.path=/a", "--collector.nccl.path", "/b/*.log"]).collectors.nccl.paths).toEqual(["/a", "/b/*.log"]);
    expect(config([], { RINGWATCH_COLLECTOR_NCCL_PATH: "/x, /y" }).collectors.nccl.paths).toEqual(["/x", "/y"]);
    const file = yamlFile("collector:\n  nccl:\n    path: [/l1, /l2]\n    polling: true\n    hang-threshold: 3m\n");
    const c = config([`--config.file=${file}`]);
    expect(c.collectors.nccl.paths).toEqual(["/l1", "/l2"]);
    expect(c.collectors.nccl.polling).toBe(true);
    expect(c.collectors.nccl.hangThresholdMs).toBe(180_000);
  });

  it("reads --name=value, --name value, --no-name and bare booleans", () => {
    const c = config([
      "--web.listen-address=127.0.0.1:0",
      "--path.sysfs",
      "/tmp/sys",
      "--no-collector.gpu",
      "--collector.infiniband.source=tools",
      "--collector.gpu.interval=2s",
      "--collector.interval=30s",
      "--collector.mtu.interval=1m",
      "--once",
    ]);
    expect(c.listen).toEqual({ host: "127.0.0.1", port: 0 });
    expect(c.sysfsRoot).toBe("/tmp/sys");
    expect(c.collectors.gpu.enabled).toBe(false);
    expect(c.collectors.gpu.intervalSeconds).toBe(2);
    expect(c.collectors.infiniband.source).toBe("tools");
    expect(c.collectors.infiniband.intervalMs).toBe(30_000);
    expect(c.collectors.mtu.intervalMs).toBe(60_000);
    expect(c.once).toBe(true);
  });

  describe("--collector.disable-defaults", () => {
    const on = (c: AgentConfig): string[] => Object.entries(c.collectors).flatMap(([name, s]) => (s.enabled ? [name] : []));

    it("runs only the collectors switched on by name", () => {
      expect(on(config(["--collector.disable-defaults"]))).toEqual([]);
      expect(on(config(["--collector.disable-defaults", "--collector.mtu"]))).toEqual(["mtu"]);
      expect(on(config(["--collector.nccl", "--collector.disable-defaults", "--collector.gpu=true"]))).toEqual(["gpu", "nccl"]);
      // A collector's other settings do not switch it on.
      expect(on(config(["--collector.disable-defaults", "--collector.mtu.interval=1s", "--collector.nccl.path=/x"]))).toEqual([]);
    });

    it("an explicit --no-collector.<name> still wins, and the last of two switches counts", () => {
      expect(on(config(["--collector.disable-defaults", "--collector.mtu", "--no-collector.mtu"]))).toEqual([]);
      expect(on(config(["--collector.disable-defaults", "--no-collector.mtu", "--collector.gdr"]))).toEqual(["gdr"]);
    });

    it("changes nothing when absent or false", () => {
      const all = ["gpu", "infiniband", "gdr", "mtu", "nccl", "job", "kmsg"];
      expect(on(config([]))).toEqual(all);
      expect(on(config(["--no-collector.gpu"]))).toEqual(all.filter((n) => n !== "gpu"));
      expect(on(config(["--no-collector.disable-defaults"]))).toEqual(all);
      expect(on(config(["--collector.disable-defaults=false", "--no-collector.job"]))).toEqual(all.filter((n) => n !== "job"));
    });

    it("comes from the environment or the YAML file too; a switch set in any layer is explicit", () => {
      expect(on(config(["--collector.mtu"], { RINGWATCH_COLLECTOR_DISABLE_DEFAULTS: "true" }))).toEqual(["mtu"]);
      expect(on(config(["--collector.disable-defaults"], { RINGWATCH_COLLECTOR_KMSG: "1" }))).toEqual(["kmsg"]);
      // A flag beats the environment, as for every setting.
      expect(on(config(["--no-collector.disable-defaults"], { RINGWATCH_COLLECTOR_DISABLE_DEFAULTS: "true" }))).toHaveLength(7);
      const nested = yamlFile("collector:\n  disable-defaults: true\n  gpu: {enabled: true}\n  nccl:\n    path: [/l]\n");
      expect(on(config([`--config.file=${nested}`]))).toEqual(["gpu"]);
      const dotted = yamlFile("collector.disable-defaults: yes\ncollector.mtu: true\n");
      expect(on(config([`--config.file=${dotted}`, "--collector.gdr"]))).toEqual(["gdr", "mtu"]);
      // The file turns a collector on; the command line turns it off again.
      expect(on(config([`--config.file=${dotted}`, "--no-collector.mtu"]))).toEqual([]);
    });

    it("is listed in --help with its environment variable", () => {
      expect(helpText()).toContain("--[no-]collector.disable-defaults");
      expect(helpText()).toContain("RINGWATCH_COLLECTOR_DISABLE_DEFAULTS");
    });
  });

  it("parses IPv6 listen addresses", () => {
    expect(config(["--web.listen-address=[::1]:9999"]).listen).toEqual({ host: "::1", port: 9999 });
  });

  it("takes settings from the environment, flags winning", () => {
    const env = { RINGWATCH_COLLECTOR_GPU_NVIDIA_SMI: "/opt/nv/nvidia-smi", RINGWATCH_COLLECTOR_MTU: "false", RINGWATCH_LOG_LEVEL: "debug" };
    const c = config(["--log.level=warn"], env);
    expect(c.collectors.gpu.nvidiaSmi).toBe("/opt/nv/nvidia-smi");
    expect(c.collectors.mtu.enabled).toBe(false);
    expect(c.logLevel).toBe("warn");
  });

  it("takes settings from a YAML file, nested or dotted; env and flags win", () => {
    const file = yamlFile(
      [
        "web:",
        "  listen-address: 127.0.0.1:9000",
        "collector:",
        "  gdr:",
        "    enabled: false",
        "  gpu:",
        "    interval: 10s",
        "collector.mtu.ip: /sbin/ip",
        "path.procfs: /host/proc",
      ].join("\n"),
    );
    const c = config([`--config.file=${file}`, "--path.procfs=/flag/proc"], { RINGWATCH_COLLECTOR_GPU_INTERVAL: "3s" });
    expect(c.listen).toEqual({ host: "127.0.0.1", port: 9000 });
    expect(c.collectors.gdr.enabled).toBe(false);
    expect(c.collectors.gpu.intervalSeconds).toBe(3);
    expect(c.collectors.mtu.ip).toBe("/sbin/ip");
    expect(c.procfsRoot).toBe("/flag/proc");
  });

  it("takes --web.config.file from a flag, the environment or the YAML file (unset by default)", () => {
    expect(config([]).webConfigFile).toBeUndefined();
    expect(config(["--web.config.file=/etc/ringwatch/web.yml"]).webConfigFile).toBe("/etc/ringwatch/web.yml");
    expect(config([], { RINGWATCH_WEB_CONFIG_FILE: "/env/web.yml" }).webConfigFile).toBe("/env/web.yml");
    expect(config([`--config.file=${yamlFile("web:\n  config:\n    file: /yaml/web.yml\n")}`]).webConfigFile).toBe("/yaml/web.yml");
    expect(config(["--web.config.file="]).webConfigFile).toBeUndefined();
  });

  it("finds the YAML file from the environment", () => {
    const file = yamlFile("collector.infiniband.source: sysfs\n");
    expect(config([], { RINGWATCH_CONFIG_FILE: file }).collectors.infiniband.source).toBe("sysfs");
  });

  it.each([
    [["--bogus"], /unknown flag --bogus/],
    [["--no-web.listen-address"], /unknown flag --no-web.listen-address/],
    [["stray"], /unexpected argument "stray"/],
    [["--collector.gpu.interval=fast"], /invalid duration "fast" for --collector.gpu.interval/],
    [["--collector.gpu.interval=1500ms"], /whole seconds/],
    [["--collector.nccl.ras-addr=localhost:99999"], /invalid value "localhost:99999" for --collector.nccl.ras-addr: expected HOST:PORT/],
    [["--collector.nccl.ras-interval=0s"], /invalid duration "0s" for --collector.nccl.ras-interval/],
    [["--collector.interval=7s"], /invalid interval for --collector.interval: must divide a minute/],
    [["--collector.gdr.interval=45s"], /invalid interval for --collector.gdr.interval: must divide a minute/],
    [["--collector.infiniband.source=magic"], /expected one of auto, sysfs, tools/],
    [["--log.level=loud"], /expected one of debug, info, warn, error/],
    [["--web.listen-address=9742"], /expected \[host\]:port/],
    [["--web.listen-address=:99999"], /invalid port/],
    [["--collector.mtu.device-exclude=("], /invalid regular expression/],
    [["--collector.gpu=maybe"], /expected true or false/],
    [["--collector.disable-defaults=maybe"], /invalid value "maybe" for --collector.disable-defaults: expected true or false/],
    [["--no-collector.disable-defaults=true"], /flag --no-collector.disable-defaults takes no value/],
    [["--collector.disable-default"], /unknown flag --collector.disable-default \(see --help\)/],
    [["--collector.gpu.dmon-groups=pz"], /letters of pucvmet/],
    [["--path.sysfs"], /needs a value/],
    [["--config.file=/nonexistent/ringwatch.yml"], /cannot read config file/],
    [["--collector.nccl.max-communicators=0"], /expected a whole number >= 1/],
    [["--collector.nccl.polling=sometimes"], /expected one of auto, true, false/],
    [["--collector.nccl.path="], /at least one directory or glob/],
    [["--collector.nccl.flight-recorder.pipe=/tmp/fr/pipe_"], /--collector.nccl.flight-recorder.pipe needs --collector.nccl.flight-recorder.dump/],
  ])("rejects %j with one clear line", (argv, message) => {
    let err: unknown;
    try {
      parseCli(argv, {});
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain("\n");
  });

  it("rejects bad YAML and unknown YAML keys", () => {
    expect(() => parseCli([`--config.file=${yamlFile("collector: [1, 2\n")}`], {})).toThrow(/not valid YAML/);
    expect(() => parseCli([`--config.file=${yamlFile("collector.gpu.bogus: 1\n")}`], {})).toThrow(/unknown setting "collector.gpu.bogus"/);
    expect(() => parseCli([`--config.file=${yamlFile("- a\n- b\n")}`], {})).toThrow(/must be a mapping/);
  });

  it("rejects a bad value from the environment", () => {
    expect(() => parseCli([], { RINGWATCH_COLLECTOR_TIMEOUT: "soon" })).toThrow(/invalid duration "soon" for --collector.timeout/);
    expect(() => parseCli([], { RINGWATCH_COLLECTOR_DISABLE_DEFAULTS: "all" })).toThrow(
      /invalid value "all" for --collector.disable-defaults: expected true or false/,
    );
  });

  it("answers --help and --version", () => {
    expect(parseCli(["--help"], {}).kind).toBe("help");
    expect(parseCli(["--version"], {}).kind).toBe("version");
  });

  it("documents every flag with its environment variable in --help", () => {
    const help = helpText();
    for (const f of FLAGS) {
      expect(help).toContain(`--${f.kind === "bool" ? "[no-]" : ""}${f.name}`);
      expect(help).toContain(envName(f.name));
    }
  });
});
