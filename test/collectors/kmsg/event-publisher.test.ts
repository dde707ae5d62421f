/**
 * One kernel event in, its series and log line out: real kernel lines (test/fixtures/kmsg) parsed
 * by KernelEvents, devices named from a fake sysfs tree and the gpu collector's identities, the
 * series read back from a real registry.
 */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { DeviceNames, type GpuIndexReadings } from "../../../collectors/kmsg/device-names.js";
import { EventPublisher } from "../../../collectors/kmsg/event-publisher.js";
import { KmsgMetrics, MAX_EVENT_SERIES } from "../../../collectors/kmsg/metrics.js";
import { KernelEvents } from "../../../collectors/kmsg/parse/events.js";
import { series, valueOf } from "../../helpers/collector-deps.js";
import { memoryLogger } from "../../helpers/memory-logger.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

/** The gpu collector's identities: GPU 3 at 0009:01:00 (a GB200 tray's domain). */
const GPUS: GpuIndexReadings = { identities: () => new Map([["3", { index: "3", pciBusId: "00000009:01:00.0" }]]) };

async function rig(): Promise<{
  publish: (message: string, atMs?: number) => void;
  registry: Registry;
  lines: () => Array<Record<string, unknown>>;
  recoveries: Array<[string, number]>;
  publisher: EventPublisher;
}> {
  const sysfs = testTempDir();
  mkdirSync(join(sysfs, "devices/pci0000:a0/0000:ab:00.0"), { recursive: true });
  mkdirSync(join(sysfs, "class/infiniband/mlx5_0"), { recursive: true });
  symlinkSync("../../../devices/pci0000:a0/0000:ab:00.0", join(sysfs, "class/infiniband/mlx5_0/device"));
  const names = new DeviceNames(sysfs, GPUS, () => 0);
  await names.refresh();
  const registry = new Registry();
  const { logger, lines } = memoryLogger();
  const recoveries: Array<[string, number]> = [];
  const publisher = new EventPublisher(new KmsgMetrics(registry), names, logger, (pci, action) => recoveries.push([pci, action]));
  const events = new KernelEvents();
  const publish = (message: string, atMs = 1_764_000_000_000): void => {
    const evs = events.read(message, atMs);
    expect(evs).toHaveLength(1);
    for (const ev of evs) publisher.publish(ev, atMs);
  };
  return { publish, registry, lines, recoveries, publisher };
}

describe("EventPublisher", () => {
  it("counts an Xid on the GPU's index, with the kernel's time, the catalogue's verdict and one warning", async () => {
    const { publish, registry, lines } = await rig();
    publish("NVRM: Xid (PCI:0009:01:00): 79, pid=1122, name=python, GPU has fallen off the bus.", 1_764_000_000_500);
    publish("NVRM: Xid (PCI:0009:01:00): 79, pid=1122, name=python, GPU has fallen off the bus.", 1_764_000_009_000);
    expect(await valueOf(registry, "ringwatch_gpu_xid_errors_total", { gpu: "3", xid: "79" })).toBe(2);
    expect(await valueOf(registry, "ringwatch_gpu_xid_last_timestamp_seconds", { gpu: "3", xid: "79" })).toBe(1_764_000_009);
    expect(await series(registry, "ringwatch_gpu_xid_info")).toEqual([
      { labels: { xid: "79", meaning: "GPU has fallen off the bus", cause: "hardware", action: "reboot_node" }, value: 1 },
    ]);
    const warn = lines()[0];
    expect(warn).toMatchObject({ level: 40, gpu: "3", xid: 79, pid: 1122, name: "python", pci: "0009:01:00" });
    expect(warn?.["msg"]).toBe("kmsg: Xid 79 on GPU 3 (GPU has fallen off the bus; hardware; action: reboot_node): GPU has fallen off the bus.");
    expect(lines()).toHaveLength(2);
  });

  it("names a GPU the gpu collector does not list by its PCI address, and a code not in the catalogue as unknown", async () => {
    const { publish, registry, lines } = await rig();
    publish("NVRM: Xid (PCI:0000:3b:00): 999, pid='<unknown>', name=<unknown>, something new");
    expect(await series(registry, "ringwatch_gpu_xid_errors_total")).toEqual([{ labels: { gpu: "0000:3b:00", xid: "999" }, value: 1 }]);
    expect(await series(registry, "ringwatch_gpu_xid_info")).toEqual([{ labels: { xid: "999", meaning: "", cause: "unknown", action: "unknown" }, value: 1 }]);
    expect(lines()[0]?.["msg"]).toBe("kmsg: Xid 999 on GPU 0000:3b:00: something new");
  });

  it("sets the recovery action an Xid 154 asks for, and hands it on with the GPU's PCI address", async () => {
    const { publish, registry, recoveries } = await rig();
    publish("NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)");
    publish("NVRM: Xid (PCI:0009:01:00): 154, GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)");
    expect(await valueOf(registry, "ringwatch_gpu_recovery_action", { gpu: "3" })).toBe(1);
    expect(recoveries).toEqual([
      ["0009:01:00", 4],
      ["0009:01:00", 1],
    ]);
  });

  it("publishes the recovery actions of a saved position under the GPUs' names", async () => {
    const { registry, publisher } = await rig();
    publisher.restoreRecovery({ "0009:01:00": 2, "0000:3b:00": 1 });
    publisher.restoreRecovery(undefined);
    expect(await series(registry, "ringwatch_gpu_recovery_action")).toEqual([
      { labels: { gpu: "3" }, value: 2 },
      { labels: { gpu: "0000:3b:00" }, value: 1 },
    ]);
  });

  it("counts SXids by switch, code and fatality, and warns only for a fatal one", async () => {
    const { publish, registry, lines } = await rig();
    publish("nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ interrupt", 2_000);
    publish("nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up", 3_000);
    expect(await valueOf(registry, "ringwatch_nvswitch_sxid_errors_total", { nvswitch: "3", sxid: "22013", fatality: "non_fatal" })).toBe(1);
    expect(await valueOf(registry, "ringwatch_nvswitch_sxid_errors_total", { nvswitch: "1", sxid: "20034", fatality: "fatal" })).toBe(1);
    expect(await valueOf(registry, "ringwatch_nvswitch_sxid_last_timestamp_seconds", { nvswitch: "1", sxid: "20034", fatality: "fatal" })).toBe(3);
    expect(lines().map((l) => [l["nvswitch"], l["sxid"], l["msg"]])).toEqual([["1", 20034, "kmsg: fatal SXid 20034 on NVSwitch 1: Link 48 LTSSM Fault Up"]]);
  });

  it("names an HCA by its RDMA device in sysfs, else by the name the driver printed, else by its PCI address", async () => {
    const { publish, registry } = await rig();
    publish("mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE");
    publish("mlx5_core 0000:cd:00.0 mlx5_7: Port: 1 Link ACTIVE");
    publish("mlx5_core 0000:bb:00.0: poll_health:1083:(pid 0): Fatal error 1 detected");
    expect(await series(registry, "ringwatch_nic_driver_events_total")).toEqual([
      { labels: { device: "mlx5_0", event: "link_up" }, value: 1 },
      { labels: { device: "mlx5_7", event: "link_up" }, value: 1 },
      { labels: { device: "0000:bb:00.0", event: "firmware_error" }, value: 1 },
    ]);
  });

  it("names an EFA device by the RDMA device its lines print (they print no address)", async () => {
    const { publish, registry } = await rig();
    publish("infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12"); // nccl issue 563
    publish(
      "infiniband rdmap16s27: The device didn't send any completion for admin cmd REG_MR(7) status 2 (id: 9, sq producer: 12, sq consumer: 11, cq consumer: 11)",
    );
    expect(await series(registry, "ringwatch_nic_driver_events_total")).toEqual([
      { labels: { device: "efa_0", event: "command_error" }, value: 1 },
      { labels: { device: "rdmap16s27", event: "firmware_error" }, value: 1 },
    ]);
  });

  it("counts PCIe bus errors of a GPU by AER severity", async () => {
    const { publish, registry } = await rig();
    publish("nvidia 0009:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)");
    publish("nvidia 0009:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)");
    expect(await series(registry, "ringwatch_gpu_pcie_bus_errors_total")).toEqual([{ labels: { gpu: "3", aer_severity: "corrected" }, value: 2 }]);
  });

  it("drops (and counts) events past the label-set bound, without a log line", async () => {
    const { publish, registry, lines } = await rig();
    for (let i = 0; i <= MAX_EVENT_SERIES; i++)
      publish(`NVRM: Xid (PCI:0000:${(i >> 8).toString(16).padStart(2, "0")}:${(i & 0xff).toString(16).padStart(2, "0")}): 13, Graphics Exception`);
    expect(await series(registry, "ringwatch_gpu_xid_errors_total")).toHaveLength(MAX_EVENT_SERIES);
    expect(await valueOf(registry, "ringwatch_kmsg_events_dropped_total")).toBe(1);
    expect(lines()).toHaveLength(MAX_EVENT_SERIES);
  });
});
