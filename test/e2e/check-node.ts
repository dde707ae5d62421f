/**
 * A node for `ringwatch check` end to end: gpud's real H100 sysfs tree (8 CX-7 HCAs at NDR 400 and
 * a RoCE bond at 200) with the fake H100's GPU bound to nvidia, a procfs with a real module list,
 * an uptime and a boot id, and an empty kernel log device (a file of /dev/kmsg records). Each test
 * makes its own and changes what it judges.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GPUD_DUMP, makeTree } from "../collectors/infiniband/trees.js";
import { runAgent } from "../helpers/agent-process.js";
import type { ProcessResult } from "../helpers/run-process.js";
import { fakeEnv, fakeFlags, fixture, tempDir } from "./env.js";

/** The fake nvidia-smi's GPU (test/fixtures/tools/nvidia_smi_query_csv/04-...: bus 00000000:00:09.0). */
export const FAKE_GPU_BUS = "0000:00:09.0";
/** Seconds the node has been up: a kernel record at usec u is from (UPTIME_S - u / 1e6) s ago. */
export const UPTIME_S = 7200;

export interface CheckNode {
  sysfs: string;
  procfs: string;
  /** The kernel log device: append kmsgRecords() to it. */
  kmsg: string;
  /** Flags that point every collector at this node and at the fake tools. */
  flags: string[];
}

/** A GPU bound to the nvidia driver in sysfs (display class 0x0302). */
export function bindGpu(sysfs: string, addr: string): void {
  mkdirSync(join(sysfs, "bus/pci/drivers/nvidia", addr), { recursive: true });
  writeFileSync(join(sysfs, "bus/pci/drivers/nvidia", addr, "class"), "0x030200\n");
}

const trees: Array<() => void> = [];

/** Removes the sysfs trees of every node made so far (the rest is in tempDir()'s, removed at exit). */
export function removeNodes(): void {
  for (const remove of trees.splice(0)) remove();
}

/** `modules`: a folder of test/fixtures/procfs whose modules file the node loads (gdr-h100-peermem by default). */
export function makeNode(modules = "procfs/gdr-h100-peermem"): CheckNode {
  const tree = makeTree(GPUD_DUMP);
  trees.push(() => tree.remove());
  const sysfs = tree.root;
  bindGpu(sysfs, FAKE_GPU_BUS);
  const dir = tempDir("rw-check-");
  const procfs = join(dir, "proc");
  mkdirSync(join(procfs, "sys/kernel/random"), { recursive: true });
  copyFileSync(join(fixture(modules), "modules"), join(procfs, "modules"));
  writeFileSync(join(procfs, "uptime"), `${UPTIME_S}.00 ${UPTIME_S * 3}.00\n`);
  writeFileSync(join(procfs, "sys/kernel/random/boot_id"), "6e4f3c5e-1d2a-4b7c-9f00-5a1b2c3d4e5f\n");
  const kmsg = join(dir, "kmsg");
  writeFileSync(kmsg, "");
  // A tool's time limit with room for a busy machine (fakeFlags' 3 s): only a hung tool waits for it.
  const flags = [...fakeFlags(sysfs), "--collector.timeout=10s", `--path.procfs=${procfs}`, "--collector.kmsg.source=kmsg", `--collector.kmsg.device=${kmsg}`];
  return { sysfs, procfs, kmsg, flags };
}

/** What a node healthy in every way is expected to be: the fake's one H100, the 8 NDR HCAs (not the bond), peermem, the Azure MTUs. */
export const HEALTHY = [
  "--check.gpu.count=1",
  "--check.ib.ports=8",
  "--check.ib.rate=400",
  "--check.ib.devices=mlx5_?",
  "--check.gdr.peermem",
  "--check.mtu=eth0=1500",
  "--check.mtu=ibP257s71127=4092",
];

export function check(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return runAgent(["check", ...args], fakeEnv(env));
}

export interface Line {
  status: string;
  name: string;
  message: string;
}

/** The check lines of the text output (not the summary), parsed. */
export function lines(stdout: string): Line[] {
  return stdout
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("ringwatch check:"))
    .map((l) => {
      const m = /^(\S+) +(\S+) +(.*)$/.exec(l);
      if (m === null) throw new Error(`not a check line: ${l}`);
      return { status: m[1] ?? "", name: m[2] ?? "", message: m[3] ?? "" };
    });
}

/** The line of one check. */
export function lineOf(stdout: string, name: string): Line | undefined {
  return lines(stdout).find((l) => l.name === name);
}

/** The summary line. */
export function summaryOf(stdout: string): string | undefined {
  return stdout.split("\n").find((l) => l.startsWith("ringwatch check:"));
}
