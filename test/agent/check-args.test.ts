/** `ringwatch check`'s command line and file of expectations: agent/check-args.ts, agent/check-expect.ts. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_FLAGS, HELP, parseCheckArgs } from "../../agent/check-args.js";
import { readExpectations } from "../../agent/check-expect.js";
import { checkSettings } from "../../agent/check-run.js";
import { ConfigError } from "../../collectors/settings/flags.js";
import { tempDir } from "../helpers/temp-dir.js";

const expectations = (argv: string[]): ReturnType<typeof readExpectations> => readExpectations(parseCheckArgs(argv).raw);

describe("parseCheckArgs", () => {
  it("takes the check's flags out and leaves every other argument, in order, to the agent's parser", () => {
    const a = parseCheckArgs([
      "--path.sysfs",
      "/host/sys",
      "--check.gpu.count",
      "8",
      "--json",
      "--collector.gpu.nvidia-smi=/x",
      "--check.mtu=ib0=4092",
      "--check.mtu",
      "eth0=9000",
    ]);
    expect(a.agent).toEqual(["--path.sysfs", "/host/sys", "--collector.gpu.nvidia-smi=/x"]);
    expect(a.json).toBe(true);
    expect(a.help).toBe(false);
    expect([...a.raw]).toEqual([
      ["check.gpu.count", "8"],
      ["check.mtu", "ib0=4092\neth0=9000"],
    ]);
  });

  it("reads a bool bare, with a value, or negated", () => {
    expect(parseCheckArgs(["--check.gdr.peermem"]).raw.get("check.gdr.peermem")).toBe("true");
    expect(parseCheckArgs(["--check.gdr.peermem=false"]).raw.get("check.gdr.peermem")).toBe("false");
    expect(parseCheckArgs(["--no-check.gdr.peermem"]).raw.get("check.gdr.peermem")).toBe("false");
    // A later flag wins, as for the agent's flags.
    expect(parseCheckArgs(["--check.gpu.count=8", "--check.gpu.count=4"]).raw.get("check.gpu.count")).toBe("4");
  });

  it.each([
    [["--check.gpus=8"], "unknown flag --check.gpus (ringwatch check --help)"],
    [["--no-check.gpu.count"], "unknown flag --no-check.gpu.count (ringwatch check --help)"],
    [["--no-check.gdr.peermem=true"], "flag --no-check.gdr.peermem takes no value"],
    [["--check.gpu.count", "--json"], "flag --check.gpu.count needs a value"],
    [["--check.timeout"], "flag --check.timeout needs a value"],
  ])("%j: %s", (argv, message) => {
    expect(() => parseCheckArgs(argv)).toThrow(new ConfigError(message));
  });

  it("--help names every flag of the check", () => {
    expect(parseCheckArgs(["-h"]).help).toBe(true);
    for (const f of CHECK_FLAGS) expect(HELP).toContain(`${f.name}`);
  });
});

describe("readExpectations", () => {
  it("has defaults that judge what needs no expectation", () => {
    const e = expectations([]);
    expect(e.gpuCount).toBeUndefined();
    expect(e.ibRateGbps).toBeUndefined();
    expect(e.ibDevices).toEqual([]);
    expect(e.gdrPeermem).toBe(false);
    expect(e.mtu).toEqual([]);
    expect(e.xidWindowMs).toBeUndefined();
    expect([...e.xidActions]).toEqual(["reset_gpu", "reboot_node", "drain_node"]);
    expect(e.xidGiven).toBe(false);
    expect(e.timeoutMs).toBe(30_000);
    expect(e.given).toEqual({});
  });

  it("reads every flag", () => {
    const e = expectations([
      "--check.gpu.count=8",
      "--check.ib.ports=0",
      "--check.ib.rate=2.5",
      "--check.ib.devices=mlx5_*,mlx4_0/2",
      "--check.gdr.peermem",
      "--check.mtu=ib*=65520",
      "--check.xid.window=90m",
      "--check.xid.actions=unknown,drain_node",
      "--check.timeout=1m",
    ]);
    expect(e).toMatchObject({
      gpuCount: 8,
      ibPorts: 0,
      ibRateGbps: 2.5,
      ibDevices: ["mlx5_*", "mlx4_0/2"],
      gdrPeermem: true,
      xidWindowMs: 5_400_000,
      xidGiven: true,
      timeoutMs: 60_000,
    });
    expect(e.mtu).toEqual([{ pattern: "ib*", bytes: 65520 }]);
    expect([...e.xidActions]).toEqual(["unknown", "drain_node"]);
    expect(e.given).toEqual({
      "gpu.count": 8,
      "ib.ports": 0,
      "ib.rate": 2.5,
      "ib.devices": ["mlx5_*", "mlx4_0/2"],
      "gdr.peermem": true,
      mtu: { "ib*": 65520 },
      "xid.window": "90m",
      "xid.actions": ["unknown", "drain_node"],
    });
  });

  it.each([
    [["--check.gpu.count=-1"], 'invalid value "-1" for --check.gpu.count: expected a whole number >= 0'],
    [["--check.ib.rate=0"], 'invalid value "0" for --check.ib.rate: expected a rate in Gb/s, e.g. 400'],
    [["--check.mtu=ib0=lots"], 'invalid value "ib0=lots" for --check.mtu: expected IFACE=BYTES, e.g. ib0=4092'],
    [["--check.mtu==4092"], 'invalid value "=4092" for --check.mtu: expected IFACE=BYTES, e.g. ib0=4092'],
    [["--check.mtu=ib0=40"], 'invalid value "ib0=40" for --check.mtu: expected IFACE=BYTES, e.g. ib0=4092'],
    [["--check.xid.window=soon"], 'invalid duration "soon" for --check.xid.window (examples: 500ms, 15s, 1m)'],
    [["--check.gdr.peermem=maybe"], 'invalid value "maybe" for --check.gdr.peermem: expected true or false'],
  ])("%j: %s", (argv, message) => {
    expect(() => expectations(argv)).toThrow(new ConfigError(message));
  });

  describe("--check.file", () => {
    const file = (text: string): string => {
      const p = join(tempDir(), "check.yaml");
      writeFileSync(p, text);
      return p;
    };

    it("reads nested and dotted keys, lists, and mtu as a mapping", () => {
      const p = file("gpu:\n  count: 8\nib.rate: 400\nib:\n  devices: [mlx5_0, mlx5_1]\nmtu:\n  ib0: 4092\n  'eth*': 9000\nxid:\n  actions: [drain_node]\n");
      const e = expectations([`--check.file=${p}`]);
      expect(e).toMatchObject({ gpuCount: 8, ibRateGbps: 400, ibDevices: ["mlx5_0", "mlx5_1"] });
      expect(e.mtu).toEqual([
        { pattern: "ib0", bytes: 4092 },
        { pattern: "eth*", bytes: 9000 },
      ]);
      expect([...e.xidActions]).toEqual(["drain_node"]);
      expect(e.xidGiven).toBe(true);
    });

    it("takes mtu as a list of IFACE=BYTES too, and a flag over the file's value", () => {
      const p = file("mtu: ['ib0=4092']\ngpu.count: 8\n");
      const e = expectations([`--check.file=${p}`, "--check.gpu.count=4"]);
      expect(e.mtu).toEqual([{ pattern: "ib0", bytes: 4092 }]);
      expect(e.gpuCount).toBe(4);
    });

    it("an empty file expects nothing", () => {
      expect(expectations([`--check.file=${file("")}`]).given).toEqual({});
    });

    it.each([
      ["gpu:\n  cuont: 8\n", 'unknown key "gpu.cuont" (docs/check.md)'],
      ["file: other.yaml\n", 'unknown key "file" (docs/check.md)'],
      ["- 8\n", "top level must be a mapping"],
      ["gpu:\n  count: [{a: 1}]\n", '"gpu.count" must be a single value or a list'],
    ])("%j: %s", (text, message) => {
      const p = file(text);
      expect(() => expectations([`--check.file=${p}`])).toThrow(new ConfigError(`check file ${p}: ${message}`));
    });

    it("a value of the file is checked as the flag's is", () => {
      expect(() => expectations([`--check.file=${file("gpu.count: eight\n")}`])).toThrow(
        new ConfigError('invalid value "eight" for --check.gpu.count: expected a whole number >= 0'),
      );
    });
  });
});

describe("checkSettings", () => {
  const config = (argv: string[]): ReturnType<typeof checkSettings> => checkSettings(argv, {});

  it("turns nccl and job off, keeps no kmsg position and logs errors only, unless told otherwise", () => {
    const a = config([]);
    if (a.kind !== "run") throw new Error("expected run");
    expect(a.config.collectors.nccl.enabled).toBe(false);
    expect(a.config.collectors.job.enabled).toBe(false);
    expect(a.config.collectors.gpu.enabled).toBe(true);
    expect(a.config.collectors.kmsg.stateFile).toBe("");
    expect(a.config.logLevel).toBe("error");
    const b = config(["--collector.nccl", "--log.level=debug", "--collector.kmsg.state-file=/var/lib/ringwatch/kmsg-position.json"]);
    if (b.kind !== "run") throw new Error("expected run");
    expect(b.config.collectors.nccl.enabled).toBe(true);
    expect(b.config.logLevel).toBe("debug");
    // The agent's read position is never the check's.
    expect(b.config.collectors.kmsg.stateFile).toBe("");
  });

  it("reads the agent's settings from its environment, as the agent does", () => {
    const a = checkSettings([], { RINGWATCH_PATH_SYSFS: "/host/sys" });
    if (a.kind !== "run") throw new Error("expected run");
    expect(a.config.sysfsRoot).toBe("/host/sys");
  });
});
