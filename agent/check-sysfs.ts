/**
 * The GPUs the kernel has bound to the NVIDIA driver: the display-class devices (class 0x03xxxx)
 * under `<sysfs>/bus/pci/drivers/nvidia`, where the kmsg collector also looks for them
 * (collectors/kmsg/device-names.ts). A GPU listed here that nvidia-smi does not list has fallen
 * off the bus or cannot be opened. The one source `ringwatch check` reads itself: no collector
 * publishes it.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

const PCI_ADDRESS = /^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i;

/** PCI addresses of the GPUs bound to nvidia, sorted; undefined when sysfs has no nvidia driver. */
export async function sysfsGpus(sysfsRoot: string): Promise<string[] | undefined> {
  const dir = join(sysfsRoot, "bus/pci/drivers/nvidia");
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return undefined;
  }
  const gpus: string[] = [];
  for (const n of names.filter((x) => PCI_ADDRESS.test(x)).sort()) {
    const cls = await readFile(join(dir, n, "class"), "utf8").catch(() => "");
    if (cls.trim().startsWith("0x03")) gpus.push(n);
  }
  return gpus;
}
