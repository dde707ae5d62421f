/** NCCL's busId, as its INIT lines print it. */
import { canonicalBusId } from "../../../pci.js";

/**
 * NCCL prints busId as the hex of domain:bus:device.function run together, leading zeros dropped
 * (`c8000` = 0000:c8:00.0, `7000` = 0000:07:00.0).
 */
export function ncclBusIdToPci(busId: string): string | undefined {
  const t = busId.trim().toLowerCase().replace(/^0x/, "");
  if (!/^[0-9a-f]{1,12}$/.test(t)) return undefined;
  const s = t.padStart(5, "0");
  const fn = s.slice(-1);
  const dev = s.slice(-3, -1);
  const bus = s.slice(-5, -3);
  const domain = s.slice(0, -5) || "0";
  return canonicalBusId(`${domain}:${bus}:${dev}.${fn}`);
}
