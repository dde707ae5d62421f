/**
 * Line-level formatting shared by the renderers: the NCCL header
 * `host:pid:tid [cudaDev] NCCL INFO ` (fixture 02), WARN lines with their leading empty line
 * and, from 2.26, the `[YYYY-MM-DD HH:MM:SS] ` prefix (fixture 05), and PyTorch's c10 log
 * timestamp `E816 01:45:40.183009389` (fixtures 82, 93: month unpadded, day padded, nanoseconds).
 */
import type { RankInfo } from "./topology.js";

export type Stream = "nccl" | "stderr";

export type LineKind =
  "version" | "bootstrap" | "net" | "gdr" | "init" | "topo" | "connect" | "coll" | "destroy" | "abort" | "blank" | "warn" | "retcode" | "watchdog";

/** One line one process writes at simulated time `t` (ms since job start). */
export interface SimLine {
  t: number;
  rank: number;
  stream: Stream;
  kind: LineKind;
  text: string;
  /** Communicator name (e.g. "world", "tp.1") for init/coll/destroy lines. */
  comm?: string;
}

export function infoText(r: RankInfo, tid: number, msg: string): string {
  return `${r.host}:${r.pid}:${tid} [${r.dev.cudaDev}] NCCL INFO ${msg}`;
}

/** `retcode` trail line, e.g. `transport/net.cc:1298 -> 6` (fixture 71). */
export function retcodeText(r: RankInfo, tid: number, where: string, code: number, thread?: string): string {
  return infoText(r, tid, `${where} -> ${code}${thread === undefined ? "" : ` [${thread}]`}`);
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** `[2026-03-18 11:13:09] ` for the epoch ms (UTC). */
export function warnStamp(epochMs: number): string {
  const d = new Date(Math.floor(epochMs));
  return (
    `[${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}] `
  );
}

/**
 * The two physical lines NCCL writes for one WARN: an empty line, then
 * `[ts] host:pid:tid [dev] file.cc:line NCCL WARN msg` (fixtures 02, 05, 71).
 */
export function warnLines(r: RankInfo, tid: number, where: string, msg: string, stampMs: number | undefined): string[] {
  const ts = stampMs === undefined ? "" : warnStamp(stampMs);
  return ["", `${ts}${r.host}:${r.pid}:${tid} [${r.dev.cudaDev}] ${where} NCCL WARN ${msg}`];
}

/** c10 logging time `816 01:45:40.183009389` (severity letter added by the caller). */
export function c10Time(epochMs: number, subMsNanos: number): string {
  const ms = Math.floor(epochMs);
  const d = new Date(ms);
  const nanos = (ms % 1000) * 1_000_000 + (Math.floor(subMsNanos) % 1_000_000);
  return `${d.getUTCMonth() + 1}${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:` + `${pad(d.getUTCSeconds())}.${pad(nanos, 9)}`;
}

/** `%02d` as NCCL prints channel numbers. */
export function pad2(n: number): string {
  return pad(n);
}
