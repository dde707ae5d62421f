/** The `ringwatch` command line, run as users run it. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GPUD_DUMP, makeTree, type Tree } from "../collectors/infiniband/trees.js";
import { runAgent, sample, samplesOf } from "../helpers/agent-process.js";
import { DMON_8GPU, fakeEnv, fakeFlags, tempDir } from "./env.js";

let tree: Tree;
beforeAll(() => {
  tree = makeTree(GPUD_DUMP);
});
afterAll(() => tree.remove());

describe("ringwatch --once", () => {
  it("prints one complete exposition, the last dmon value per GPU, and exits 0", async () => {
    const r = await runAgent(["--once", ...fakeFlags(tree.root)], fakeEnv({ FAKE_NVSMI_DMON: DMON_8GPU }));
    expect(r.code).toBe(0);
    // -c 1 gives one sample set: the capture's first set (gpu 0 365 W, sm 99 %; gpu 5 rxpci/txpci 12939/2 MB/s).
    expect(sample(r.stdout, 'ringwatch_gpu_power_watts{gpu="0"}')).toBe(365);
    expect(sample(r.stdout, 'ringwatch_gpu_utilization_ratio{gpu="0"}')).toBe(0.99);
    expect(sample(r.stdout, 'ringwatch_gpu_power_watts{gpu="7"}')).toBe(368);
    expect(samplesOf(r.stdout, "ringwatch_gpu_power_watts")).toHaveLength(8);
    expect(samplesOf(r.stdout, "ringwatch_gpu_memory_temperature_celsius")).toEqual([]); // `-` is absent, never 0
    for (const c of ["gpu", "infiniband", "gdr", "mtu"]) expect(sample(r.stdout, `ringwatch_collector_success{collector="${c}"}`)).toBe(1);
    expect(sample(r.stdout, 'ringwatch_infiniband_state_id{device="mlx5_7",port="1"}')).toBe(4);
    // stdout is only the exposition; logs go to stderr.
    expect(r.stdout.split("\n").every((l) => l === "" || l.startsWith("#") || /^[a-z_0-9]+(\{.*\})? \S+$/.test(l))).toBe(true);
  });

  it("exits 0 whatever the collectors found", async () => {
    const empty = tempDir();
    const missing = join(empty, "missing");
    const r = await runAgent([
      "--once",
      `--collector.gpu.nvidia-smi=${missing}`,
      `--path.sysfs=${empty}`,
      `--path.procfs=${empty}`,
      `--collector.infiniband.ibstat=${missing}`,
      `--collector.gdr.lsmod=${missing}`,
      `--collector.mtu.ip=${missing}`,
    ]);
    expect(r.code).toBe(0);
    for (const c of ["gpu", "infiniband", "gdr", "mtu"]) expect(sample(r.stdout, `ringwatch_collector_success{collector="${c}"}`)).toBe(0);
  });

  it("runs only the enabled collectors", async () => {
    const r = await runAgent(
      [
        "--once",
        "--no-collector.gpu",
        "--no-collector.infiniband",
        "--collector.gdr=false",
        "--no-collector.nccl",
        "--no-collector.job",
        "--no-collector.kmsg",
        ...fakeFlags(tree.root).filter((f) => f.startsWith("--collector.mtu")),
      ],
      fakeEnv(),
    );
    expect(r.code).toBe(0);
    expect(samplesOf(r.stdout, "ringwatch_collector_success").map((l) => l.split(" ")[0])).toEqual(['ringwatch_collector_success{collector="mtu"}']);
  });
});

describe("bad flags and config", () => {
  it.each([
    [["--no-such-flag"], "ringwatch: unknown flag --no-such-flag (see --help)"],
    [["--collector.gpu.interval=soon"], 'ringwatch: invalid duration "soon" for --collector.gpu.interval (examples: 500ms, 15s, 1m)'],
    [["--collector.infiniband.source=snmp"], 'ringwatch: invalid value "snmp" for --collector.infiniband.source: expected one of auto, sysfs, tools'],
    [["--web.listen-address=localhost"], 'ringwatch: invalid value "localhost" for --web.listen-address: expected [host]:port'],
    [["--collector.disable-defaults=maybe", "--collector.mtu"], 'ringwatch: invalid value "maybe" for --collector.disable-defaults: expected true or false'],
  ])("%j: one clear line on stderr, exit 2", async (argv, line) => {
    const r = await runAgent(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(line + "\n");
    expect(r.stdout).toBe("");
  });

  it("rejects a bad environment value and a bad YAML file the same way", async () => {
    const env = await runAgent([], { RINGWATCH_COLLECTOR_INTERVAL: "7s" });
    expect(env.code).toBe(2);
    expect(env.stderr.trim().split("\n")).toHaveLength(1);
    const file = join(tempDir(), "bad.yml");
    writeFileSync(file, "collector:\n  gpu:\n    nvidia_smi: /x\n");
    const yaml = await runAgent([`--config.file=${file}`]);
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toBe(`ringwatch: config file ${file}: unknown setting "collector.gpu.nvidia_smi"\n`);
  });

  it("prints help and version, exit 0", async () => {
    const help = await runAgent(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--collector.gpu.nvidia-smi=STRING");
    const version = await runAgent(["--version"]);
    expect(version.stdout).toMatch(/^ringwatch \d+\.\d+\.\d+ \(node \d+/);
  });

  it("exits 1 with one log line when the port is taken", async () => {
    const { createServer } = await import("node:net");
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as { port: number }).port;
    const r = await runAgent([
      `--web.listen-address=127.0.0.1:${port}`,
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
    ]);
    srv.close();
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`cannot listen on 127.0.0.1:${port}: address already in use`);
  });
});
