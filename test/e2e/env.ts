/** Settings that point the real agent at fake tools and real-format fixture trees. */
import { writeFileSync } from "node:fs";
import { tempDir } from "../helpers/temp-dir.js";
import { join } from "node:path";
import { fixturesDir } from "../helpers/fixtures.js";
import { fakesDir } from "../helpers/agent-process.js";

export const fixture = (rel: string): string => join(fixturesDir, rel);

export const DMON_H100_LOAD = fixture("tools/nvidia_smi_dmon/06-nvgpuexp-h100-80gb-590.48.01-load.txt");
export const DMON_8GPU = fixture("tools/nvidia_smi_dmon/01-slurm-on-aws-s-pcut-8gpu-g7e.txt");
export const QUERY_H100 = fixture("tools/nvidia_smi_query_csv/04-nvgpuexp-h100-80gb-590.48.01-allfields.txt");
export const IP_ADDR_AZURE_IPOIB = fixture("tools/ip_link/02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt");
export const PROCFS_PEERMEM = fixture("procfs/gdr-h100-peermem");

export { tempDir } from "../helpers/temp-dir.js";

/** A file the fake nvidia-smi appends "<pid> <args>" to on every start. */
export function callLog(): string {
  const p = join(tempDir(), "calls.log");
  writeFileSync(p, "");
  return p;
}

/** Flags for every collector pointed at fakes / fixtures; override by appending. */
export function fakeFlags(sysfsRoot: string): string[] {
  return [
    `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
    "--collector.gpu.interval=1s",
    `--path.sysfs=${sysfsRoot}`,
    `--path.procfs=${PROCFS_PEERMEM}`,
    `--collector.infiniband.ibstat=${join(fakesDir, "ibstat")}`,
    `--collector.infiniband.perfquery=${join(fakesDir, "perfquery")}`,
    `--collector.gdr.lsmod=${join(fakesDir, "lsmod")}`,
    `--collector.mtu.ip=${join(fakesDir, "ip")}`,
    "--collector.interval=1s",
    "--collector.timeout=3s",
  ];
}

export function fakeEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    FAKE_NVSMI_DMON: DMON_H100_LOAD,
    FAKE_NVSMI_QUERY: QUERY_H100,
    FAKE_NVSMI_PACE_MS: "250",
    FAKE_IP_MODE: "no-json",
    FAKE_IP_TEXT: IP_ADDR_AZURE_IPOIB,
    ...extra,
  };
}
