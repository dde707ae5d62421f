/**
 * `ringwatch check` as operators run it: the built binary as a child process, the fake tools
 * replaying real captures, gpud's real sysfs tree (changed per test), a procfs and a kernel log
 * device per test. A healthy node exits 0; each failing expectation exits 1 on its own line; a
 * source an expectation needs that is absent or failing exits 2; a bad flag or file is one line on
 * stderr and exit 2.
 */
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CHECK_NAMES } from "../../agent/check-judge.js";
import { createServer, type Server } from "node:http";
import { Gauge, Registry } from "prom-client";
import { fakesDir, processesWithEnv, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { kmsgRecords } from "../helpers/kernel-log.js";
import { fixture, tempDir } from "./env.js";
import { bindGpu, check, HEALTHY, lineOf, lines, makeNode, removeNodes, summaryOf, UPTIME_S } from "./check-node.js";

afterAll(removeNodes);

const XID = (code: number, rest: string): string => `NVRM: Xid (PCI:0000:00:09): ${code}, pid=2211, name=python, ${rest}`;
/** A kernel record `agoS` seconds old on a node up UPTIME_S. */
const at = (agoS: number): { firstUsec: number } => ({ firstUsec: (UPTIME_S - agoS) * 1_000_000 });

describe("ringwatch check: a healthy node", () => {
  it("prints one ok line per judged check, skips the rest with the reason, and exits 0", async () => {
    const n = makeNode();
    // Only what needs no action: an application's Xid 13 and a non-fatal SXid.
    appendFileSync(
      n.kmsg,
      kmsgRecords(
        [
          XID(13, "Graphics Exception: ESR 0x404600=0x80000002"),
          "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt",
        ],
        at(600),
      ),
    );
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(lines(r.stdout).map((l) => l.name)).toEqual(CHECK_NAMES);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({ status: "ok", message: "1 GPU (expected 1)" });
    expect(lineOf(r.stdout, "gpu.bus")).toMatchObject({ status: "ok", message: "no GPU off the bus (nvidia-smi, sysfs, kernel log)" });
    expect(lineOf(r.stdout, "gpu.xid")?.status).toBe("ok");
    expect(lineOf(r.stdout, "gpu.xid")?.message).toMatch(
      /^no Xid that needs action since boot; 1 other Xid: GPU 0: Xid 13 \(Graphics Engine Exception; restart_job\), last at /,
    );
    expect(lineOf(r.stdout, "nvswitch.sxid")?.message).toMatch(/^no fatal SXid since boot; 1 non-fatal SXid: NVSwitch 3: SXid 22013 \(non-fatal\)/);
    expect(lineOf(r.stdout, "gpu.recovery")).toMatchObject({ status: "ok" });
    expect(lineOf(r.stdout, "ib.port.state")).toMatchObject({ status: "ok", message: "8 ports ACTIVE, LinkUp" });
    expect(lineOf(r.stdout, "ib.port.rate")).toMatchObject({ status: "ok", message: "8 ACTIVE ports at 400 Gb/s" });
    expect(lineOf(r.stdout, "ib.port.count")).toMatchObject({ status: "ok", message: "8 ports matching mlx5_? (expected 8)" });
    expect(lineOf(r.stdout, "gdr.peermem")).toMatchObject({ status: "ok", message: "nvidia_peermem loaded" });
    expect(lineOf(r.stdout, "net.mtu")).toMatchObject({ status: "ok", message: "eth0 1500, ibP257s71127 4092" });
    expect(lineOf(r.stdout, "nccl.ras")).toMatchObject({ status: "skip" });
    expect(summaryOf(r.stdout)).toBe("ringwatch check: healthy (10 ok, 1 skipped)");
    // The layout: status in 5 columns, the name in 14, the message.
    expect(r.stdout.split("\n")[0]).toBe("ok    gpu.count      1 GPU (expected 1)");
  });

  it("without expectations judges what needs none (GPUs listed, no GPU off the bus, no Xid, every port ACTIVE) and skips the others", async () => {
    const n = makeNode();
    const r = await check(n.flags);
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({ status: "ok", message: "1 GPU (no count expected)" });
    // Every port the collector reports, the RoCE bond at 200 Gb/s too: ACTIVE and LinkUp is all that is asked.
    expect(lineOf(r.stdout, "ib.port.state")).toMatchObject({ status: "ok", message: "9 ports ACTIVE, LinkUp" });
    for (const [name, why] of [
      ["ib.port.rate", "no rate expected (--check.ib.rate)"],
      ["ib.port.count", "no port count expected (--check.ib.ports)"],
      ["gdr.peermem", "GPUDirect RDMA not expected (--check.gdr.peermem)"],
      ["net.mtu", "no MTU expected (--check.mtu)"],
    ]) {
      expect(lineOf(r.stdout, name ?? "")).toEqual({ status: "skip", name, message: why });
    }
    expect(summaryOf(r.stdout)).toBe("ringwatch check: healthy (6 ok, 5 skipped)");
  });

  it("reads the expectations from --check.file, and a flag overrides the file's value", async () => {
    const n = makeNode();
    const file = join(tempDir(), "check.yaml");
    writeFileSync(
      file,
      [
        "gpu:",
        "  count: 8",
        "ib:",
        "  ports: 8",
        "  rate: 400",
        "  devices: ['mlx5_?']",
        "gdr.peermem: true",
        "mtu:",
        "  eth0: 1500",
        "  'ib*': 4092",
        "xid:",
        "  window: 1h",
      ].join("\n"),
    );
    const fromFile = await check([...n.flags, `--check.file=${file}`]);
    expect(fromFile.code).toBe(1);
    expect(lineOf(fromFile.stdout, "gpu.count")).toMatchObject({ status: "FAIL", message: "1 GPU, expected 8" });
    expect(lineOf(fromFile.stdout, "net.mtu")).toMatchObject({ status: "ok", message: "eth0 1500, ibP257s71127 4092" });
    expect(lineOf(fromFile.stdout, "gpu.xid")?.message).toBe("no Xid that needs action in the last 1h");
    const overridden = await check([...n.flags, `--check.file=${file}`, "--check.gpu.count=1"]);
    expect(overridden.code).toBe(0);
    expect(lineOf(overridden.stdout, "gpu.count")).toMatchObject({ status: "ok", message: "1 GPU (expected 1)" });
    expect(lineOf(overridden.stdout, "ib.port.count")).toMatchObject({ status: "ok", message: "8 ports matching mlx5_? (expected 8)" });
  });
});

describe("ringwatch check: each failing expectation exits 1 with its line", () => {
  it("gpu.count: fewer GPUs than expected", async () => {
    const r = await check([...makeNode().flags, ...HEALTHY, "--check.gpu.count=8"]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({ status: "FAIL", message: "1 GPU, expected 8" });
    expect(
      lines(r.stdout)
        .filter((l) => l.status === "FAIL")
        .map((l) => l.name),
    ).toEqual(["gpu.count"]);
    expect(summaryOf(r.stdout)).toBe("ringwatch check: unhealthy: gpu.count failed (9 ok, 1 skipped)");
  });

  it("ib.port.state: a port DOWN, Polling (no cable or no peer)", async () => {
    const n = makeNode();
    writeFileSync(join(n.sysfs, "class/infiniband/mlx5_4/ports/1/state"), "1: DOWN\n");
    writeFileSync(join(n.sysfs, "class/infiniband/mlx5_4/ports/1/phys_state"), "2: Polling\n");
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "ib.port.state")).toMatchObject({ status: "FAIL", message: "mlx5_4/1 DOWN (Polling)" });
    // The rate is judged on the ACTIVE ports only; the port count on every port present.
    expect(lineOf(r.stdout, "ib.port.rate")).toMatchObject({ status: "ok", message: "7 ACTIVE ports at 400 Gb/s" });
    expect(lineOf(r.stdout, "ib.port.count")?.status).toBe("ok");
  });

  it("ib.port.rate: a port trained at HDR 200 instead of NDR 400", async () => {
    const n = makeNode();
    writeFileSync(join(n.sysfs, "class/infiniband/mlx5_5/ports/1/rate"), "200 Gb/sec (4X HDR)\n");
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "ib.port.rate")).toMatchObject({ status: "FAIL", message: "mlx5_5/1 at 200 Gb/s, expected 400" });
    expect(lineOf(r.stdout, "ib.port.state")?.status).toBe("ok");
  });

  it("ib.port.rate without --check.ib.devices: the RoCE bond at 200 fails a 400 expectation", async () => {
    const r = await check([...makeNode().flags, "--check.ib.rate=400"]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "ib.port.rate")).toMatchObject({ status: "FAIL", message: "mlx5_bond_0/1 at 200 Gb/s, expected 400" });
  });

  it("ib.port.count and ib.port.state: an HCA gone from the bus, and a device pattern that matches nothing", async () => {
    const n = makeNode();
    rmSync(join(n.sysfs, "class/infiniband/mlx5_9"), { recursive: true });
    const r = await check([...n.flags, ...HEALTHY, "--check.ib.devices=mlx5_1?"]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "ib.port.count")).toMatchObject({ status: "FAIL", message: "7 ports matching mlx5_?,mlx5_1?, expected 8" });
    expect(lineOf(r.stdout, "ib.port.state")).toMatchObject({ status: "FAIL", message: "mlx5_1?: no such port" });
  });

  it("gdr.peermem: GPUDirect RDMA expected, nvidia_peermem not loaded", async () => {
    const r = await check([...makeNode("procfs/gdr-no-peermem").flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gdr.peermem")).toMatchObject({
      status: "FAIL",
      message: "nvidia_peermem is not loaded (nor nv_peer_mem): no GPUDirect RDMA, NCCL stages through host memory",
    });
  });

  it("net.mtu: a wrong MTU, and an interface that does not exist", async () => {
    const r = await check([...makeNode().flags, "--check.mtu=eth0=9000,ib0=4092"]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "net.mtu")).toMatchObject({ status: "FAIL", message: "eth0 1500, expected 9000, ib0: no such interface" });
  });

  it("gpu.xid: an Xid that needs a GPU reset fails; --check.xid.window leaves out one older than the window", async () => {
    const n = makeNode();
    appendFileSync(n.kmsg, kmsgRecords([XID(48, "Ch 00000008, DBE (double bit error) ECC error")], { firstSeq: 1, ...at(2 * 3600 - 100) }));
    const sinceBoot = await check([...n.flags, ...HEALTHY]);
    expect(sinceBoot.code).toBe(1);
    const line = lineOf(sinceBoot.stdout, "gpu.xid");
    expect(line?.status).toBe("FAIL");
    expect(line?.message).toMatch(/^GPU 0: Xid 48 \(Double Bit ECC Error; reset_gpu\), last at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // Its time: the boot (now - uptime) plus the record's usec, about 1 h 58 min ago.
    const when = Date.parse(/last at (\S+)$/.exec(line?.message ?? "")?.[1] ?? "");
    expect(Date.now() - when).toBeGreaterThan(3600_000);
    expect(Date.now() - when).toBeLessThan(3 * 3600_000);
    const windowed = await check([...n.flags, ...HEALTHY, "--check.xid.window=1h"]);
    expect(windowed.code).toBe(0);
    expect(lineOf(windowed.stdout, "gpu.xid")).toMatchObject({ status: "ok", message: "no Xid that needs action in the last 1h" });
    // A new one within the hour fails again.
    appendFileSync(n.kmsg, kmsgRecords([XID(48, "Ch 00000010, DBE (double bit error) ECC error")], { firstSeq: 2, ...at(120) }));
    const again = await check([...n.flags, ...HEALTHY, "--check.xid.window=1h"]);
    expect(again.code).toBe(1);
    expect(lineOf(again.stdout, "gpu.xid")?.message).toMatch(/^GPU 0: Xid 48 \(Double Bit ECC Error; reset_gpu\) x2, last at /);
  });

  it("gpu.xid: --check.xid.actions decides which actions fail", async () => {
    const n = makeNode();
    appendFileSync(n.kmsg, kmsgRecords([XID(13, "Graphics Exception: ESR 0x404600=0x80000002")], at(60)));
    const r = await check([...n.flags, "--check.xid.actions=restart_job,reset_gpu"]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.xid")?.message).toMatch(/^GPU 0: Xid 13 \(Graphics Engine Exception; restart_job\), last at /);
  });

  it("gpu.bus and gpu.xid: a GPU fallen off the bus (Xid 79)", async () => {
    const n = makeNode();
    appendFileSync(n.kmsg, kmsgRecords(["NVRM: Xid (PCI:0000:00:09): 79, pid=1122, GPU has fallen off the bus."], at(30)));
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.bus")?.message).toMatch(/^GPU 0: Xid 79 \(fallen off the bus\) at /);
    expect(lineOf(r.stdout, "gpu.xid")?.message).toMatch(/^GPU 0: Xid 79 \(GPU has fallen off the bus; reboot_node\), last at /);
  });

  it("gpu.bus: a GPU bound to nvidia in sysfs that nvidia-smi does not list", async () => {
    const n = makeNode();
    bindGpu(n.sysfs, "0000:00:0a.0");
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.bus")).toMatchObject({ status: "FAIL", message: "0000:00:0a.0: bound to nvidia in sysfs, not listed by nvidia-smi" });
    expect(lineOf(r.stdout, "gpu.count")?.status).toBe("ok");
  });

  it("gpu.count and gpu.bus: nvidia-smi cannot open a GPU (its own message), which is unhealthy, not 'could not check'", async () => {
    const r = await check([...makeNode().flags, ...HEALTHY], {
      FAKE_NVSMI_MODE: "fail",
      FAKE_NVSMI_FAIL: fixture("tools/errors/04-nvsmi-device-handle-unknown-error-xxd3vin-workspace-19.txt"),
    });
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({
      status: "FAIL",
      message: "nvidia-smi: gpu: Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error",
    });
    expect(lineOf(r.stdout, "gpu.bus")).toMatchObject({ status: "FAIL", message: "nvidia-smi: cannot open a GPU (device handle)" });
  });

  it("gpu.count: nvidia-smi cannot talk to the driver", async () => {
    const r = await check([...makeNode().flags, ...HEALTHY], { FAKE_NVSMI_MODE: "fail" });
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.count")?.status).toBe("FAIL");
    expect(lineOf(r.stdout, "gpu.count")?.message).toMatch(/^nvidia-smi: gpu: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/);
  });

  it("nvswitch.sxid and gpu.recovery: a fatal SXid, and the driver asking for a GPU reset (Xid 154)", async () => {
    const n = makeNode();
    appendFileSync(
      n.kmsg,
      kmsgRecords(
        [
          "nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
          XID(154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"),
        ],
        at(300),
      ),
    );
    const r = await check([...n.flags, ...HEALTHY]);
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "nvswitch.sxid")?.message).toMatch(/^NVSwitch 1: SXid 20034 \(fatal\), last at /);
    expect(lineOf(r.stdout, "gpu.recovery")).toMatchObject({ status: "FAIL", message: "GPU 0: GPU reset required (Xid 154)" });
    expect(summaryOf(r.stdout)).toBe("ringwatch check: unhealthy: gpu.recovery, nvswitch.sxid failed (8 ok, 1 skipped)");
  });
});

describe("ringwatch check: could not check (exit 2)", () => {
  it("an expectation whose source is absent: no nvidia-smi, no InfiniBand", async () => {
    const n = makeNode();
    const empty = tempDir();
    mkdirSync(join(empty, "bus/pci/drivers/nvidia"), { recursive: true });
    const r = await check([
      ...n.flags,
      `--path.sysfs=${empty}`,
      `--collector.gpu.nvidia-smi=${join(empty, "nvidia-smi")}`,
      `--collector.infiniband.ibstat=${join(empty, "ibstat")}`,
      "--check.gpu.count=8",
      "--check.ib.rate=400",
    ]);
    expect(r.code).toBe(2);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({
      status: "ERROR",
      message: `could not check: ${join(empty, "nvidia-smi")} not found or not executable`,
    });
    expect(lineOf(r.stdout, "ib.port.rate")?.status).toBe("ERROR");
    expect(lineOf(r.stdout, "ib.port.rate")?.message).toMatch(/^could not check: no InfiniBand here: /);
    // Not expected, so skipped: whether ports are ACTIVE where there are none.
    expect(lineOf(r.stdout, "ib.port.count")?.status).toBe("skip");
    expect(summaryOf(r.stdout)).toMatch(/^ringwatch check: unknown: could not check gpu.count, ib.port.state, ib.port.rate \(/);
  });

  it("the same sources absent with nothing expected of them: skipped, exit 0", async () => {
    const n = makeNode();
    const empty = tempDir();
    const r = await check([
      ...n.flags,
      `--path.sysfs=${empty}`,
      `--collector.gpu.nvidia-smi=${join(empty, "nvidia-smi")}`,
      `--collector.infiniband.ibstat=${join(empty, "ibstat")}`,
    ]);
    expect(r.code).toBe(0);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({
      status: "skip",
      message: `not on this node: ${join(empty, "nvidia-smi")} not found or not executable`,
    });
    expect(lineOf(r.stdout, "ib.port.state")?.status).toBe("skip");
    // The kernel log still says no GPU fell off the bus.
    expect(lineOf(r.stdout, "gpu.bus")).toMatchObject({ status: "ok", message: "no GPU off the bus (kernel log)" });
  });

  it("a source that fails (the kernel log device cannot be read) is 'could not check' even with no expectation", async () => {
    const n = makeNode();
    const r = await check([...n.flags, `--collector.kmsg.device=${tempDir()}`]);
    expect(r.code).toBe(2);
    expect(lineOf(r.stdout, "gpu.xid")?.status).toBe("ERROR");
    expect(lineOf(r.stdout, "gpu.xid")?.message).toMatch(/^could not check: .*EISDIR/);
    // A failing check wins over one that could not be judged: exit 1.
    const both = await check([...n.flags, `--collector.kmsg.device=${tempDir()}`, "--check.gpu.count=2"]);
    expect(both.code).toBe(1);
  });

  it("a collector that hangs past --check.timeout: its checks could not be judged, its child is killed, and the check ends", async () => {
    const n = makeNode();
    const token = join(tempDir(), "token");
    const r = await check([...n.flags, ...HEALTHY, "--collector.timeout=60s", "--check.timeout=2s"], {
      FAKE_NVSMI_MODE: "stall",
      FAKE_NVSMI_DMON_TOKEN: token,
    });
    expect(r.code).toBe(2);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({ status: "ERROR", message: "could not check: did not finish within --check.timeout" });
    expect(lineOf(r.stdout, "ib.port.state")?.status).toBe("ok");
    expect(await processesWithEnv(`FAKE_NVSMI_DMON_TOKEN=${token}`)).toEqual([]);
  });
});

describe("ringwatch check: bad flags and files are one line on stderr, exit 2", () => {
  const cases: Array<[string, string[], RegExp]> = [
    ["a bad number", ["--check.gpu.count=eight"], /^ringwatch: check: invalid value "eight" for --check.gpu.count: expected a whole number >= 0\n$/],
    ["an unknown check flag", ["--check.gpus=8"], /^ringwatch: check: unknown flag --check.gpus \(ringwatch check --help\)\n$/],
    ["an unknown agent flag", ["--collector.nope=1"], /^ringwatch: check: unknown flag --collector.nope \(see --help\)\n$/],
    ["a bad MTU", ["--check.mtu=ib0"], /^ringwatch: check: invalid value "ib0" for --check.mtu: expected IFACE=BYTES, e.g. ib0=4092\n$/],
    ["a bad action", ["--check.xid.actions=panic"], /^ringwatch: check: invalid value "panic" for --check.xid.actions: expected some of none, /],
    ["a bad rate", ["--check.ib.rate=fast"], /^ringwatch: check: invalid value "fast" for --check.ib.rate: expected a rate in Gb\/s, e.g. 400\n$/],
    ["a missing value", ["--check.gpu.count"], /^ringwatch: check: flag --check.gpu.count needs a value\n$/],
    ["a missing file", ["--check.file=/nonexistent/check.yaml"], /^ringwatch: check: cannot read check file \/nonexistent\/check.yaml: ENOENT\n$/],
  ];
  it.each(cases)("%s", async (_what, args, stderr) => {
    const r = await check(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(stderr);
    expect(r.stdout).toBe("");
  });

  it("a file that is not YAML, and one with an unknown key", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "bad.yaml"), "gpu: [8\n");
    writeFileSync(join(dir, "typo.yaml"), "gpu:\n  cuont: 8\n");
    const bad = await check([`--check.file=${join(dir, "bad.yaml")}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n")).toHaveLength(2);
    expect(bad.stderr).toMatch(/^ringwatch: check: check file .*bad.yaml is not valid YAML: /);
    const typo = await check([`--check.file=${join(dir, "typo.yaml")}`]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(`ringwatch: check: check file ${join(dir, "typo.yaml")}: unknown key "gpu.cuont" (docs/check.md)\n`);
  });

  it("--help prints the check's flags and exits 0", async () => {
    const r = await check(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^usage: ringwatch check /);
    expect(r.stdout).toContain("--check.xid.window=DURATION");
    expect(r.stdout).toContain("--[no-]check.gdr.peermem");
  });
});

describe("ringwatch check --json", () => {
  it("prints one document: status, exit code, every check in order, every source and the expectations given", async () => {
    const n = makeNode();
    const r = await check([...n.flags, ...HEALTHY, "--check.gpu.count=8", "--check.xid.window=1h", "--json"]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as {
      version: string;
      time: string;
      status: string;
      exit_code: number;
      checks: Array<{ name: string; status: string; message: string; details: string[] }>;
      sources: Array<{ collector: string; state: string; reason?: string }>;
      expectations: Record<string, unknown>;
    };
    expect(Object.keys(doc)).toEqual(["version", "time", "status", "exit_code", "checks", "sources", "expectations"]);
    expect(doc.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Math.abs(Date.parse(doc.time) - Date.now())).toBeLessThan(10 * 60_000);
    expect(doc.status).toBe("unhealthy");
    expect(doc.exit_code).toBe(1);
    expect(doc.checks.map((c) => c.name)).toEqual(CHECK_NAMES);
    expect(doc.checks[0]).toEqual({ name: "gpu.count", status: "fail", message: "1 GPU, expected 8", details: [] });
    expect(doc.checks.find((c) => c.name === "net.mtu")).toEqual({
      name: "net.mtu",
      status: "ok",
      message: "eth0 1500, ibP257s71127 4092",
      details: ["eth0 1500", "ibP257s71127 4092"],
    });
    expect(doc.sources).toEqual([
      { collector: "gpu", state: "ok" },
      { collector: "infiniband", state: "ok" },
      { collector: "gdr", state: "ok" },
      { collector: "mtu", state: "ok" },
      { collector: "nccl", state: "off" },
      { collector: "job", state: "off" },
      { collector: "kmsg", state: "ok" },
    ]);
    expect(doc.expectations).toEqual({
      "gpu.count": 8,
      "ib.ports": 8,
      "ib.rate": 400,
      "ib.devices": ["mlx5_?"],
      "gdr.peermem": true,
      mtu: { eth0: 1500, ibP257s71127: 4092 },
      "xid.window": "1h",
    });
  });

  it("--json with a source absent: its reason in sources, status unknown, exit 2", async () => {
    const empty = tempDir();
    const r = await check([...makeNode().flags, `--collector.gpu.nvidia-smi=${join(empty, "nvidia-smi")}`, "--check.gpu.count=1", "--json"]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout) as { status: string; exit_code: number; sources: Array<{ collector: string; state: string; reason?: string }> };
    expect(doc.status).toBe("unknown");
    expect(doc.exit_code).toBe(2);
    expect(doc.sources.find((s) => s.collector === "gpu")).toEqual({
      collector: "gpu",
      state: "absent",
      reason: `${join(empty, "nvidia-smi")} not found or not executable`,
    });
  });
});

describe("ringwatch check --check.agent-url: nccl.ras from the node's running agent", () => {
  const agents: RunningAgent[] = [];
  const servers: Server[] = [];
  afterAll(async () => {
    for (const a of agents.splice(0)) await a.stop("SIGTERM");
    for (const s of servers.splice(0)) s.close();
  });

  it("ok against a real agent with no hang; FAIL with the diagnostics an agent holds; ERROR when none answers", async () => {
    const n = makeNode();
    const agent = await startAgent(["--collector.disable-defaults", "--collector.mtu", `--collector.mtu.ip=${join(fakesDir, "ip")}`]);
    agents.push(agent);
    const healthy = await check([...n.flags, ...HEALTHY, `--check.agent-url=${agent.url}/metrics`]);
    expect(lineOf(healthy.stdout, "nccl.ras")).toMatchObject({ status: "ok" });
    expect(healthy.code).toBe(0);

    // An agent during a hang: its series as prom-client writes them (collectors/nccl/README.md).
    const registry = new Registry();
    const diag = new Gauge({ name: "ringwatch_nccl_ras_diagnostic", help: "h", labelNames: ["check", "comm_id", "detail", "host"], registers: [registry] });
    diag.set({ check: "ecc", comm_id: "0x49bbd7790311d5eb", detail: "", host: "gpu-node-17" }, 1);
    diag.set({ check: "nccl_env", comm_id: "0x49bbd7790311d5eb", detail: "NCCL_IB_HCA", host: "" }, 1);
    const body = await registry.metrics();
    const server = createServer((_req, res) => res.end(body));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const hung = await check([...n.flags, ...HEALTHY, `--check.agent-url=http://127.0.0.1:${port}/metrics`]);
    expect(lineOf(hung.stdout, "nccl.ras")).toMatchObject({
      status: "FAIL",
      message: "ecc on gpu-node-17 (comm 0x49bbd7790311d5eb), nccl_env NCCL_IB_HCA (comm 0x49bbd7790311d5eb)",
    });
    expect(hung.code).toBe(1);

    server.close();
    const gone = await check([...n.flags, ...HEALTHY, `--check.agent-url=http://127.0.0.1:${port}/metrics`]);
    expect(lineOf(gone.stdout, "nccl.ras")?.status).toBe("ERROR");
    expect(lineOf(gone.stdout, "nccl.ras")?.message).toMatch(/^could not check: cannot ask the agent at http:\/\/127\.0\.0\.1:\d+\/metrics: fetch failed/);
    expect(gone.code).toBe(2);
  });
});
