/**
 * The prefix dev_printk() puts before a driver's message: `<driver> <bus address>[ <name>]: `,
 * e.g. `mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN`, `mlx5_core 0000:ab:00.0: ...`,
 * `mlx5_core 0000:ab:00.0 ens1f0np0: ...`, `nvidia 0000:3b:00.0: PCIe Bus Error: ...`. Found
 * anywhere in the line (after a dmesg or syslog prefix).
 */
import { isPciAddress } from "./xid.js";

export interface DevicePrefix {
  driver: string;
  /** PCI address as printed, lower case (`0000:ab:00.0`). */
  pci: string;
  /** The name after the address (an RDMA device `mlx5_5` or a netdev `ens1f0np0`), if any. */
  name?: string;
  /** The message after the prefix. */
  text: string;
}

/** Parses the prefix of the given driver, looked up at `driver + " "`. */
export function parseDevicePrefix(line: string, driver: string): DevicePrefix | undefined {
  const at = line.indexOf(driver + " ");
  if (at < 0 || (at > 0 && line.charCodeAt(at - 1) !== 32 && line.charCodeAt(at - 1) !== 93)) return undefined;
  const i = at + driver.length + 1;
  const colon = line.indexOf(": ", i);
  if (colon < 0 || colon - i > 64) return undefined;
  const head = line.slice(i, colon);
  const space = head.indexOf(" ");
  const pci = space < 0 ? head : head.slice(0, space);
  if (!isPciAddress(pci)) return undefined;
  const p: DevicePrefix = { driver, pci: pci.toLowerCase(), text: line.slice(colon + 2) };
  if (space >= 0) {
    const name = head.slice(space + 1).trim();
    if (name.length > 0 && name.indexOf(" ") < 0) p.name = name;
  }
  return p;
}

/**
 * The prefix ibdev_printk() puts before an RDMA device's message: `infiniband <name>: `, e.g.
 * `infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12` (no bus
 * address; EFA devices may be named `rdmap16s27`). Found anywhere in the line: the first whose name
 * `accept` takes.
 */
export function parseIbDevicePrefix(line: string, accept: (name: string) => boolean = () => true): { name: string; text: string } | undefined {
  // The first `infiniband ` that opens a prefix (after a blank, a tab or a dmesg stamp's `]`, or at the start).
  for (let at = line.indexOf("infiniband "), tries = 0; at >= 0 && tries < 4; at = line.indexOf("infiniband ", at + 11), tries++) {
    const before = at > 0 ? line.charCodeAt(at - 1) : 32;
    if (before !== 32 && before !== 9 && before !== 93) continue;
    const i = at + 11;
    const colon = line.indexOf(": ", i);
    if (colon <= i || colon - i > 64) continue;
    const name = line.slice(i, colon);
    if (name.indexOf(" ") < 0 && accept(name)) return { name, text: line.slice(colon + 2) };
  }
  return undefined;
}
