/**
 * The kmsg collector over real files: a kmsg device replaced by a file of records (read through the
 * same non-blocking reader as /dev/kmsg), fake procfs and sysfs trees, the fake journalctl started
 * through the one spawn module, and a real state file. The messages are real captures'.
 */
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Collector } from "../../../collectors/collector.js";
import { createKmsgCollector, type KmsgOptions } from "../../../collectors/kmsg/collector.js";
import { fakesDir, makeDeps, series, valueOf } from "../../helpers/collector-deps.js";
import { eventually } from "../../helpers/eventually.js";
import { captureMessages, journalRecords, kmsgRecords } from "../../helpers/kernel-log.js";
import { listFixtures } from "../../helpers/fixtures.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const BOOT = "770920c0-309d-4dc4-9f25-65cfd492b686";
const NOW = Date.UTC(2026, 10, 24, 2, 47);
const UPTIME_S = 86_400;

const fixture = (p: string): string => `kmsg/${listFixtures("kmsg", ".txt").find((f) => f.startsWith(p)) ?? p}`;
/** The real Xid 79 line of an ubuntu desktop (PCI 0000:01:00), moved to this node's GPU addresses. */
const xid79 = (slot: string): string => `NVRM: Xid (PCI:${slot}): 79, pid=1122, GPU has fallen off the bus.`;

let running: Collector | undefined;
afterEach(async () => {
  await running?.stop?.();
  running = undefined;
});

function node(bootId = BOOT): { dir: string; procfs: string; sysfs: string; device: string; state: string } {
  const dir = testTempDir();
  const procfs = join(dir, "proc");
  mkdirSync(join(procfs, "sys/kernel/random"), { recursive: true });
  writeFileSync(join(procfs, "sys/kernel/random/boot_id"), bootId + "\n");
  writeFileSync(join(procfs, "uptime"), `${UPTIME_S}.00 170000.00\n`);
  const sysfs = join(dir, "sys");
  // Two GPUs and an NVSwitch bound to nvidia; the switch (class 0x0680) is not a GPU.
  for (const [addr, cls] of [
    ["0000:b3:00.0", "0x030200"],
    ["0000:3b:00.0", "0x030200"],
    ["0000:88:00.0", "0x068000"],
  ] as const) {
    mkdirSync(join(sysfs, "bus/pci/drivers/nvidia", addr), { recursive: true });
    writeFileSync(join(sysfs, "bus/pci/drivers/nvidia", addr, "class"), cls + "\n");
  }
  mkdirSync(join(sysfs, "devices/pci0000:a0/0000:ab:00.0"), { recursive: true });
  mkdirSync(join(sysfs, "class/infiniband/mlx5_5"), { recursive: true });
  symlinkSync("../../../devices/pci0000:a0/0000:ab:00.0", join(sysfs, "class/infiniband/mlx5_5/device"));
  const device = join(dir, "kmsg");
  writeFileSync(device, "");
  return { dir, procfs, sysfs, device, state: join(dir, "state", "kmsg-position.json") };
}

function start(n: ReturnType<typeof node>, extra: Partial<KmsgOptions> = {}, now = () => NOW): { c: Collector; deps: ReturnType<typeof makeDeps> } {
  const deps = makeDeps({ now });
  mkdirSync(join(n.dir, "state"), { recursive: true });
  const c = createKmsgCollector(deps, {
    source: "kmsg",
    device: n.device,
    journalctl: join(fakesDir, "journalctl"),
    stateFile: n.state,
    procfsRoot: n.procfs,
    sysfsRoot: n.sysfs,
    pollMs: 50,
    saveEveryMs: 50,
    ...extra,
  });
  c.start?.();
  running = c;
  return { c, deps };
}

const total = async (deps: ReturnType<typeof makeDeps>, name: string): Promise<number> => (await series(deps.registry, name)).reduce((n, s) => n + s.value, 0);

describe("kmsg collector", () => {
  it("counts Xids per GPU index (sysfs bus order), with the kernel's time, the catalogue's verdict and the driver's recovery action", async () => {
    const n = node();
    const messages = [
      "nvidia-nvswitch2: open (major=510)",
      xid79("0000:3b:00"),
      "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
      ...captureMessages(fixture("03-")).map((m) => m.replaceAll("0000:cb:00", "0000:b3:00")),
      "NVRM: Xid (PCI:0000:b3:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
    ];
    writeFileSync(n.device, kmsgRecords(messages, { firstSeq: 100, firstUsec: 5_000_000 }));
    const { c, deps } = start(n);
    await eventually(async () => (await total(deps, "ringwatch_kmsg_records_total")) === messages.length);
    const r = deps.registry;
    // 0000:3b:00 sorts before 0000:b3:00: GPU 0 and GPU 1, as nvidia-smi numbers them.
    expect(await valueOf(r, "ringwatch_gpu_xid_errors_total", { gpu: "0", xid: "79" })).toBe(1); // the driver's own line is the same fall
    expect(await valueOf(r, "ringwatch_gpu_xid_errors_total", { gpu: "1", xid: "13" })).toBe(3);
    expect(await valueOf(r, "ringwatch_gpu_xid_errors_total", { gpu: "1", xid: "109" })).toBe(1);
    expect((await series(r, "ringwatch_gpu_xid_errors_total")).length).toBe(4);
    // Record 2 (Xid 79) was printed 5.001 s after boot, and the node has been up a day.
    expect(await valueOf(r, "ringwatch_gpu_xid_last_timestamp_seconds", { gpu: "0", xid: "79" })).toBeCloseTo((NOW - UPTIME_S * 1000 + 5001) / 1000, 3);
    expect(await valueOf(r, "ringwatch_gpu_xid_info", { xid: "79", meaning: "GPU has fallen off the bus", cause: "hardware", action: "reboot_node" })).toBe(1);
    expect(await valueOf(r, "ringwatch_gpu_xid_info", { xid: "109", meaning: "Context Switch Timeout Error", cause: "application", action: "reset_gpu" })).toBe(
      1,
    );
    expect(await valueOf(r, "ringwatch_gpu_recovery_action", { gpu: "1" })).toBe(1);
    expect(c.health?.()).toMatchObject({ ok: true });
    expect(await valueOf(r, "ringwatch_kmsg_source", { source: "kmsg" })).toBe(1);
  });

  it("follows records written later, and names HCAs, NVSwitches and GPU PCIe errors", async () => {
    const n = node();
    const { deps } = start(n);
    await eventually(() => running?.health?.().ok === true);
    const later = [
      ...captureMessages(fixture("02-")), // mlx5_5 at 0000:ab:00.0 goes INIT, then ACTIVE
      ...captureMessages(fixture("05-")).map((m) => m.replace("nvidia-nvswitch3: SXid (PCI:0000:04:00.0)", "nvidia-nvswitch3: SXid (PCI:0000:88:00.0)")),
      ...captureMessages(fixture("16-")).map((m) => m.replaceAll("0000:07:00.0", "0000:3b:00.0")),
      ...captureMessages(fixture("21-")),
    ];
    appendFileSync(n.device, kmsgRecords(later, { firstSeq: 1 }));
    await eventually(async () => (await total(deps, "ringwatch_kmsg_records_total")) === later.length);
    const r = deps.registry;
    expect(await valueOf(r, "ringwatch_nic_driver_events_total", { device: "mlx5_5", event: "link_up" })).toBe(1);
    // 0000:d2:00.0 has no RDMA device in this sysfs: it keeps its address.
    expect(await valueOf(r, "ringwatch_nic_driver_events_total", { device: "0000:d2:00.0", event: "command_error" })).toBe(1);
    expect(await valueOf(r, "ringwatch_nvswitch_sxid_errors_total", { nvswitch: "3", sxid: "22013", fatality: "non_fatal" })).toBe(3);
    expect(await valueOf(r, "ringwatch_gpu_pcie_bus_errors_total", { gpu: "0", aer_severity: "corrected" })).toBe(1);
    expect(await series(r, "ringwatch_gpu_xid_errors_total")).toEqual([]);
  });

  it("a restart reads nothing twice; a new boot reads the buffer again", async () => {
    const n = node();
    writeFileSync(n.device, kmsgRecords([xid79("0000:3b:00"), "usb 1-1: new high-speed USB device"], { firstSeq: 7 }));
    const first = start(n);
    await eventually(async () => (await total(first.deps, "ringwatch_kmsg_records_total")) === 2);
    await first.c.stop?.();
    expect(JSON.parse(readFileSync(n.state, "utf8"))).toEqual({ bootId: BOOT, kmsgSeq: 8 });

    // The same boot: the device hands out its whole buffer again, plus one new record.
    appendFileSync(n.device, kmsgRecords([xid79("0000:b3:00")], { firstSeq: 9 }));
    const second = start(n);
    await eventually(async () => (await total(second.deps, "ringwatch_kmsg_records_total")) === 1);
    expect(await series(second.deps.registry, "ringwatch_gpu_xid_errors_total")).toEqual([{ labels: { gpu: "1", xid: "79" }, value: 1 }]);
    await second.c.stop?.();

    // After a reboot the sequence numbers start over: everything counts.
    writeFileSync(join(n.procfs, "sys/kernel/random/boot_id"), "0d1e2f30-0000-4000-8000-000000000001\n");
    const third = start(n);
    await eventually(async () => (await total(third.deps, "ringwatch_kmsg_records_total")) === 3);
    expect(await total(third.deps, "ringwatch_gpu_xid_errors_total")).toBe(2);
  });

  it("keeps the driver's recovery action across a restart, and skips messages user space wrote to the device", async () => {
    const n = node();
    const recovery = "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)";
    // Facility 1 (user): a process wrote a fake Xid line to /dev/kmsg; it is not the driver's.
    writeFileSync(n.device, kmsgRecords([recovery]) + `14,2,1001000,-;${xid79("0000:b3:00")}\n`);
    const first = start(n);
    await eventually(async () => (await valueOf(first.deps.registry, "ringwatch_gpu_recovery_action", { gpu: "0" })) === 4);
    expect(await series(first.deps.registry, "ringwatch_gpu_xid_errors_total")).toEqual([{ labels: { gpu: "0", xid: "154" }, value: 1 }]);
    await first.c.stop?.();
    const second = start(n);
    await eventually(() => second.c.health?.().ok === true);
    expect(await valueOf(second.deps.registry, "ringwatch_gpu_recovery_action", { gpu: "0" })).toBe(4);
    expect(await series(second.deps.registry, "ringwatch_gpu_xid_errors_total")).toEqual([]);
  });

  it("prefers the gpu collector's numbering over sysfs order", async () => {
    const n = node();
    writeFileSync(n.device, kmsgRecords([xid79("0000:3b:00")]));
    const gpu = { identities: () => new Map([["5", { index: "5", pciBusId: "00000000:3B:00.0" }]]) };
    const { deps } = start(n, { gpu });
    await eventually(async () => (await valueOf(deps.registry, "ringwatch_gpu_xid_errors_total", { gpu: "5", xid: "79" })) === 1);
  });

  it("falls back to the journal where the device cannot be opened, and resumes after its cursor", async () => {
    const n = node();
    const journal = join(n.dir, "journal.json");
    const calls = join(n.dir, "calls.log");
    writeFileSync(journal, journalRecords([xid79("0000:3b:00"), ...captureMessages(fixture("01-"))], { bootId: BOOT }));
    process.env.FAKE_JOURNAL = journal;
    process.env.FAKE_JOURNAL_LOG = calls;
    try {
      const first = start(n, { source: "auto", device: join(n.dir, "no-such-kmsg") });
      await eventually(async () => (await total(first.deps, "ringwatch_gpu_xid_errors_total")) === 2);
      expect(await valueOf(first.deps.registry, "ringwatch_gpu_xid_errors_total", { gpu: "1", xid: "79" })).toBe(1); // 0000:b3:00.0, lost at probe
      expect(await valueOf(first.deps.registry, "ringwatch_kmsg_source", { source: "journal" })).toBe(1);
      // The journal's wall clock is the time of the record.
      expect(await valueOf(first.deps.registry, "ringwatch_gpu_xid_last_timestamp_seconds", { gpu: "0", xid: "79" })).toBe(NOW / 1000);
      await first.c.stop?.();
      const saved = JSON.parse(readFileSync(n.state, "utf8")) as { journalCursor: string };
      expect(saved.journalCursor).toMatch(/;i=4;/); // the Xid, and fixture 01's three records

      appendFileSync(journal, journalRecords([xid79("0000:b3:00")], { bootId: BOOT, firstSeq: 5 }));
      const second = start(n, { source: "auto", device: join(n.dir, "no-such-kmsg") });
      await eventually(async () => (await total(second.deps, "ringwatch_kmsg_records_total")) === 1);
      expect(await series(second.deps.registry, "ringwatch_gpu_xid_errors_total")).toEqual([{ labels: { gpu: "1", xid: "79" }, value: 1 }]);
      const args = readFileSync(calls, "utf8")
        .trim()
        .split("\n")
        .map((l) => l.split(" ").slice(1).join(" "));
      expect(args).toEqual(["-k -f -o json --no-tail --no-pager", `-k -f -o json --no-tail --no-pager --after-cursor=${saved.journalCursor}`]);
    } finally {
      delete process.env.FAKE_JOURNAL;
      delete process.env.FAKE_JOURNAL_LOG;
    }
  });

  it("says what is missing: the journal's group, or any source at all", async () => {
    const n = node();
    process.env.FAKE_JOURNAL_MODE = "denied";
    try {
      const { c } = start(n, { source: "auto", device: join(n.dir, "no-such-kmsg") });
      const h = await eventually(() => (c.health?.().reason?.includes("journal files' group") === true ? c.health?.() : undefined));
      expect(h).toMatchObject({ ok: false });
      expect(h.absent).not.toBe(true);
      expect(h.reason).toBe(
        `journalctl may read none of the journal's files (No journal files were opened due to insufficient permissions.): add ringwatch's user to the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere); and cannot open ${join(n.dir, "no-such-kmsg")}: ENOENT`,
      );
      await c.stop?.();
    } finally {
      delete process.env.FAKE_JOURNAL_MODE;
    }
    const { c } = start(n, { source: "auto", device: join(n.dir, "no-such-kmsg"), journalctl: join(n.dir, "no-journalctl") });
    const h = await eventually(() => (c.health?.().starting !== true ? c.health?.() : undefined));
    expect(h).toMatchObject({ ok: false, absent: true });
    expect(h.reason).toBe(`cannot open ${join(n.dir, "no-such-kmsg")}: ENOENT; and ${join(n.dir, "no-journalctl")} is not available`);
  });

  it("reads this machine's /dev/kmsg, or says why it cannot", async () => {
    const n = node();
    const real = node(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
    const { c, deps } = start(real, { device: "/dev/kmsg", procfsRoot: "/proc" });
    const h = await eventually(() => (c.health?.().starting !== true ? c.health?.() : undefined));
    if (h.ok) {
      await eventually(async () => (await total(deps, "ringwatch_kmsg_records_total")) > 0);
      const saved = await eventually(() => {
        try {
          return JSON.parse(readFileSync(real.state, "utf8")) as { kmsgSeq?: number };
        } catch {
          return undefined;
        }
      });
      expect(saved.kmsgSeq).toBeGreaterThanOrEqual(0);
    } else {
      expect(h.reason).toMatch(/^cannot open \/dev\/kmsg: (EPERM|EACCES) \(reading the kernel log needs CAP_SYSLOG|^cannot open \/dev\/kmsg: ENOENT/);
    }
    void n;
  });
});
