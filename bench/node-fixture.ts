/**
 * A realistic GPU node for the benchmarks, built from the real captures under test/fixtures:
 * - 8 GPUs: the fake nvidia-smi replays the real 8-GPU `dmon -s pcut` capture (one sample set a
 *   second) and, for the identity query, an 8-GPU table derived from the real H100 --query-gpu
 *   capture (its row repeated with index, uuid and pci.bus_id set per GPU);
 * - 8 HCA ports: gpud's H100 sysfs capture (8 x ConnectX-7 NDR) expanded into a temporary
 *   <sysfs>/class/infiniband, without its Ethernet bond device, so exactly 8 InfiniBand ports;
 * - gdr: the real /proc/modules of an H100 node with nvidia_peermem;
 * - mtu: the fake ip replays a real `ip -j -d link show` capture;
 * - NCCL: an empty directory that nccl-job.ts fills with 16 ranks' logs.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expandPathDump, makeTempDir, removeTree } from "../test/helpers/ttar.js";
import { fakesDir, fixturesDir, readCapture } from "./paths.js";

const GPUD_SYSFS = "tools/ib_sysfs/03-gpud-h100-8x-cx7-ndr400-plus-bond-eth.txt";
const DMON_8GPU = "tools/nvidia_smi_dmon/01-slurm-on-aws-s-pcut-8gpu-g7e.txt";
const QUERY_H100 = "tools/nvidia_smi_query_csv/04-nvgpuexp-h100-80gb-590.48.01-allfields.txt";
const IP_JSON = "tools/ip_link/90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt";
const PROCFS_PEERMEM = "procfs/gdr-h100-peermem";
/** PCI bus ids of a DGX H100's eight GPUs (the simulator uses the same). */
const DGX_H100_BUS = ["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"];

export const GPUS = 8;
export const HCA_PORTS = 8;

export interface BenchNode {
  root: string;
  sysfs: string;
  ncclDir: string;
  /** Agent flags (listen address not included). */
  agentFlags(opts: { pollInterval: string; ncclDir?: string }): string[];
  /** Environment for the agent (the fakes read it). */
  env: NodeJS.ProcessEnv;
  remove(): void;
}

/** The H100 query capture's one data row, repeated for 8 GPUs with their own index, uuid and bus id. */
function eightGpuQuery(): string {
  const lines = readCapture(QUERY_H100)
    .split("\n")
    .filter((l) => l.trim() !== "");
  const header = lines[0] ?? "";
  const row = lines[1] ?? "";
  const names = header.split(", ").map((h) => h.replace(/ \[.*\]$/, ""));
  const at = (name: string): number => {
    const i = names.indexOf(name);
    if (i < 0) throw new Error(`${QUERY_H100}: no ${name} column`);
    return i;
  };
  const [iIndex, iUuid, iBus] = [at("index"), at("uuid"), at("pci.bus_id")];
  const rows = DGX_H100_BUS.map((bus, gpu) => {
    const cells = row.split(", ");
    cells[iIndex] = String(gpu);
    cells[iUuid] = `GPU-00000000-0000-0000-0000-00000000000${gpu}`;
    cells[iBus] = `00000000:${bus}:00.0`;
    return cells.join(", ");
  });
  return [
    `# source: derived by bench/node-fixture.ts from test/fixtures/${QUERY_H100} (its data row for 8 GPUs: index, uuid, pci.bus_id per GPU)`,
    header,
    ...rows,
    "",
  ].join("\n");
}

export function makeBenchNode(): BenchNode {
  const root = makeTempDir("ringwatch-bench-node-");
  try {
    return fill(root);
  } catch (err) {
    removeTree(root);
    throw err;
  }
}

function fill(root: string): BenchNode {
  const sysfs = join(root, "sys");
  const ports = readCapture(GPUD_SYSFS)
    .split("\n")
    .filter((l) => !l.startsWith("mlx5_bond_0/"))
    .join("\n");
  expandPathDump(ports, sysfs, "class/infiniband");
  const query = join(root, "query-8gpu.txt");
  writeFileSync(query, eightGpuQuery());
  const ncclDir = join(root, "nccl");
  mkdirSync(ncclDir);
  const env: NodeJS.ProcessEnv = {
    FAKE_NVSMI_DMON: join(fixturesDir, DMON_8GPU),
    FAKE_NVSMI_QUERY: query,
    FAKE_IP_JSON: join(fixturesDir, IP_JSON),
  };
  return {
    root,
    sysfs,
    ncclDir,
    env,
    agentFlags: (o) => [
      `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
      "--collector.gpu.interval=1s",
      `--path.sysfs=${sysfs}`,
      `--path.procfs=${join(fixturesDir, PROCFS_PEERMEM)}`,
      `--collector.gdr.lsmod=${join(fakesDir, "lsmod")}`,
      `--collector.mtu.ip=${join(fakesDir, "ip")}`,
      `--collector.interval=${o.pollInterval}`,
      `--collector.nccl.path=${o.ncclDir ?? ncclDir}`,
    ],
    remove: () => removeTree(root),
  };
}
