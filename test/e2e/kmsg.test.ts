/**
 * The kernel log on the built agent: a kmsg device (a file of records, read by the same reader as
 * /dev/kmsg) gets a real Xid 79 line for the fake H100 (bus 00000000:00:09.0 in the real --query-gpu
 * capture), and /metrics counts it on GPU 0, as the gpu collector numbers it, with NVIDIA's verdict.
 * SIGTERM saves the read position: the restarted agent counts only what came after.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { captureMessages, kmsgRecords } from "../helpers/kernel-log.js";
import { listFixtures } from "../helpers/fixtures.js";
import { DMON_H100_LOAD, QUERY_H100, tempDir } from "./env.js";

let agent: RunningAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

const XID79 = "NVRM: Xid (PCI:0000:00:09): 79, pid=1122, GPU has fallen off the bus.";

describe("kmsg collector on the built agent", () => {
  it("counts an Xid on the gpu collector's GPU 0, and a restart reads nothing twice", async () => {
    const dir = tempDir();
    const device = join(dir, "kmsg");
    const state = join(dir, "kmsg-position.json");
    const mlx = captureMessages(`kmsg/${listFixtures("kmsg", ".txt").find((f) => f.startsWith("21-")) ?? ""}`);
    writeFileSync(device, "");
    const flags = [
      `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
      "--collector.gpu.interval=1s",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      "--no-collector.nccl",
      "--collector.kmsg.source=kmsg",
      `--collector.kmsg.device=${device}`,
      `--collector.kmsg.state-file=${state}`,
    ];
    const env = { FAKE_NVSMI_DMON: DMON_H100_LOAD, FAKE_NVSMI_QUERY: QUERY_H100, FAKE_NVSMI_PACE_MS: "250" };
    agent = await startAgent(flags, env);
    const a = agent;
    // The GPU is known before the Xid comes, as on a node where the agent runs all along.
    await eventually(
      async () =>
        sample(
          await a.scrape(),
          'ringwatch_gpu_info{gpu="0",uuid="GPU-00000000-0000-0000-0000-000000000000",name="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:00:09.0",driver_version="590.48.01"}',
        ) === 1,
    );
    appendFileSync(device, kmsgRecords([XID79, ...mlx], { firstSeq: 40 }));
    const t = await eventually(async () => {
      const text = await a.scrape();
      return sample(text, 'ringwatch_gpu_xid_errors_total{gpu="0",xid="79"}') === 1 ? text : undefined;
    });
    expect(sample(t, 'ringwatch_gpu_xid_info{xid="79",meaning="GPU has fallen off the bus",cause="hardware",action="reboot_node"}')).toBe(1);
    expect(sample(t, 'ringwatch_nic_driver_events_total{device="0000:d2:00.0",event="command_error"}')).toBe(1);
    expect(sample(t, "ringwatch_kmsg_records_total")).toBe(1 + mlx.length);
    expect(sample(t, 'ringwatch_collector_success{collector="kmsg"}')).toBe(1);
    expect(a.logs().filter((l) => l.includes("kmsg: Xid 79 on GPU 0 (GPU has fallen off the bus; hardware; action: reboot_node)"))).toHaveLength(1);
    expect((await a.stop()).code).toBe(0);

    appendFileSync(device, kmsgRecords(["NVRM: Xid (PCI:0000:00:09): 48, pid=2211, name=python, Ch 00000008"], { firstSeq: 40 + 1 + mlx.length }));
    agent = await startAgent(flags, env);
    const b = agent;
    const u = await eventually(async () => {
      const text = await b.scrape();
      return sample(text, "ringwatch_kmsg_records_total") === 1 ? text : undefined;
    });
    await eventually(async () => sample(await b.scrape(), 'ringwatch_gpu_xid_errors_total{gpu="0",xid="48"}') === 1);
    expect(samplesOf(await b.scrape(), "ringwatch_gpu_xid_errors_total")).toHaveLength(1);
    void u;
  });
});
