/**
 * PCI bus ids as the tools print them, in one form for comparison. NVML prints an 8-digit domain in
 * `--query-gpu` (`00000000:07:00.0`) and a 4-digit one in error messages (`0000:07:00.0`); NCCL
 * runs domain, bus, device and function together (`c8000`).
 */
export function canonicalBusId(busId: string): string {
  const s = busId.trim().toLowerCase();
  const colon = s.indexOf(":");
  if (colon < 0) return s;
  const domain = Number.parseInt(s.slice(0, colon), 16);
  return `${Number.isFinite(domain) ? domain.toString(16) : s.slice(0, colon)}${s.slice(colon)}`;
}

/** Domain, bus and device of a PCI address in any printed form, the function dropped: the kernel's Xid lines print no function. */
export function pciSlotKey(addr: string): string {
  const c = canonicalBusId(addr);
  const dot = c.lastIndexOf(".");
  return dot > c.lastIndexOf(":") ? c.slice(0, dot) : c;
}
