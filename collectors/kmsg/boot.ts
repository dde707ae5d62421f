/**
 * This boot, from procfs: its id (`sys/kernel/random/boot_id`; "unknown" where it cannot be read),
 * which says whether a saved position belongs to it, and its wall-clock start (now minus
 * `uptime`), which turns a kernel record's microseconds since boot into Unix time.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";

export interface Boot {
  id: string;
  /** Unix ms of the boot; now() where uptime cannot be read. */
  wallMs: number;
}

export async function readBoot(procfsRoot: string, now: () => number): Promise<Boot> {
  const id = (await readFile(join(procfsRoot, "sys/kernel/random/boot_id"), "utf8").catch(() => "unknown")).trim() || "unknown";
  const uptime = Number.parseFloat((await readFile(join(procfsRoot, "uptime"), "utf8").catch(() => "")).split(" ")[0] ?? "");
  return { id, wallMs: Number.isFinite(uptime) ? now() - uptime * 1000 : now() };
}
