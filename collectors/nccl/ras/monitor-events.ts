/**
 * What the RAS watch makes of its monitor subscription (ras/monitor.ts): whether the job's NCCL has
 * monitor mode (2.29+), the events counted by type, the processes a PEER_DEAD event named (until the
 * job goes), and the log lines of the events and of the subscription's state. A PEER_DEAD is logged
 * as a warning, and the watch asks for the job's status at once; any other event is a debug line.
 */
import type { Logger } from "pino";
import type { RasAddress } from "./client.js";
import type { RasMonitorState } from "./monitor.js";
import type { RasEvent } from "./parse-event.js";
import { MAX_RAS_SERIES } from "./watch-snapshot.js";

/** Monitor events counted by type; any other type counts as `other`. */
export const RAS_EVENT_TYPES = ["PEER_DEAD", "PEER_NEW", "other"] as const;

/** NCCL 2.29+ has monitor mode; an unknown version is asked (it refuses if it has none). */
export function hasMonitorMode(version: string | undefined): boolean {
  if (version === undefined) return true;
  const [major, minor] = version.split(".").map(Number);
  if (major === undefined || minor === undefined || !Number.isInteger(major) || !Number.isInteger(minor)) return true;
  return major > 2 || (major === 2 && minor >= 29);
}

export class MonitorEvents {
  /** Events received, by type (RAS_EVENT_TYPES). */
  readonly counts = new Map<string, number>(RAS_EVENT_TYPES.map((t) => [t, 0]));
  /** Processes (node:pid) a PEER_DEAD event named, until the job goes. */
  readonly dead = new Set<string>();

  /** Counts an event by its type, whether or not the watch runs. */
  count(e: RasEvent): void {
    const type = (RAS_EVENT_TYPES as readonly string[]).includes(e.type) ? e.type : "other";
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
  }

  /** Keeps and logs an event heard while the watch runs; true for a PEER_DEAD: the job's status is asked now. */
  heard(e: RasEvent, log: Logger): boolean {
    const who = e.host !== undefined && e.pid !== undefined ? `${e.host}:${e.pid}` : undefined;
    const gpus = e.nvmlDevs !== undefined && e.nvmlDevs.length > 0 ? ` (GPU ${e.nvmlDevs.join(",")})` : "";
    const fields = { event: e.type, process: who ?? null, ras_addr: e.addr ?? null, sent: e.timestamp, details: e.details || null };
    if (e.type === "PEER_DEAD") {
      if (who !== undefined && this.dead.size < MAX_RAS_SERIES) this.dead.add(who);
      log.warn(fields, `nccl: NCCL RAS says process ${who ?? e.addr ?? "?"}${gpus} of the job is dead (PEER_DEAD); asking for the job's status now`);
      return true;
    }
    log.debug(fields, `nccl: NCCL RAS event ${e.type} ${who ?? e.addr ?? ""}`.trimEnd());
    return false;
  }
}

/** Logs a change of the subscription's state: subscribed, or no monitor mode (info); ended (debug, but for a reset). */
export function logMonitorState(log: Logger, address: RasAddress, state: RasMonitorState, reason: string): void {
  const where = `${address.host}:${address.port}`;
  if (state === "subscribed") log.info({ ras_addr: where }, `nccl: following NCCL RAS monitor events at ${where} (a dead peer shows at once)`);
  else if (state === "unsupported")
    log.info({ ras_addr: where, reason }, `nccl: the job's NCCL has no RAS monitor mode (2.29+); dead peers show at the next query`);
  else if (state === "off" && reason !== "reset") log.debug({ ras_addr: where, reason }, `nccl: NCCL RAS monitor connection ended: ${reason}`);
}
