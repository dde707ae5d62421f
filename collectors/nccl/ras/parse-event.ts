/**
 * NCCL RAS monitor events (NCCL 2.29+: `MONITOR [lifecycle,trace,all]` keeps the connection open and
 * the service pushes one notification per event; src/ras/client_support.cc rasClientsNotifyEvent).
 *
 * Text (the connection's default format), one line per event:
 *   [2026-11-24 06:40:00] PEER_NEW: Process 4003 on node 10.0.0.2 managing GPUs 0,1 <details>
 *   [2026-11-24 06:40:00] PEER_DEAD: 10.0.0.9<28028> <details>      (a peer NCCL no longer knows)
 * JSON (after `SET FORMAT json`), one multi-line object per event:
 *   {"timestamp": "...", "group": "LIFECYCLE", "event": "PEER_DEAD",
 *    "peer": {"host": "10.0.0.2", "pid": 4003, "cuda_devs": [0,1], "nvml_devs": [0,1]} | {"addr": "..."},
 *    "details": "..."}
 * NCCL does not escape `details` in JSON, so an object that JSON.parse refuses is read field by field.
 * PEER_DEAD and PEER_NEW are lifecycle events (src/ras/peers.cc); trace events (connection retries,
 * timeouts) are not asked for.
 */

export interface RasEvent {
  /** PEER_DEAD, PEER_NEW, or whatever a newer NCCL sends. */
  type: string;
  /** Local time of the node that sent it, as NCCL writes it (`%F %T`). */
  timestamp: string;
  /** The process, when NCCL still knew it. */
  host?: string;
  pid?: number;
  /** GPUs of the process: CUDA ordinals and NVML indices (the latter = nvidia-smi's index). */
  cudaDevs?: number[];
  nvmlDevs?: number[];
  /** A peer NCCL no longer knows: its RAS address, as NCCL prints it (`host<port>`). */
  addr?: string;
  details: string;
}

/** An event object is never this long; a longer one is garbage and dropped. */
const MAX_EVENT_LINES = 64;

/** Reads monitor notifications line by line, text or JSON, and hands over whole events. */
export class RasEventReader {
  private json: string[] | undefined;
  /** Lines that were not an event (counted, for a metric). */
  skipped = 0;

  constructor(private readonly onEvent: (e: RasEvent) => void) {}

  line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (this.json !== undefined) {
      this.json.push(line);
      if (line === "}") {
        const e = eventFromJson(this.json.join("\n"));
        this.json = undefined;
        if (e !== undefined) this.onEvent(e);
        else this.skipped++;
      } else if (this.json.length > MAX_EVENT_LINES) {
        this.json = undefined;
        this.skipped++;
      }
      return;
    }
    if (line === "{") {
      this.json = [line];
      return;
    }
    if (line === "") return;
    const e = eventFromText(line);
    if (e !== undefined) this.onEvent(e);
    else this.skipped++;
  }
}

/** `[time] TYPE: rest`; undefined when the line is not one. */
export function eventFromText(line: string): RasEvent | undefined {
  if (!line.startsWith("[")) return undefined;
  const close = line.indexOf("] ");
  if (close < 0) return undefined;
  const colon = line.indexOf(": ", close + 2);
  const type = colon < 0 ? "" : line.slice(close + 2, colon);
  if (!isEventType(type)) return undefined;
  const e: RasEvent = { type, timestamp: line.slice(1, close), details: "" };
  const rest = line.slice(colon + 2);
  if (rest.startsWith("Process ")) {
    // rasPeerInfoToString: "Process <pid> on node <host> managing GPU[s] <cuda>[ (NVML <nvml>)]"
    const on = rest.indexOf(" on node ");
    const managing = rest.indexOf(" managing GPU", on);
    const pid = on > 8 ? Number(rest.slice(8, on)) : NaN;
    if (on > 0 && managing > on && Number.isInteger(pid)) {
      e.pid = pid;
      e.host = rest.slice(on + 9, managing);
      let gpus = rest.slice(managing + 13);
      gpus = gpus.startsWith("s ") ? gpus.slice(2) : gpus.trimStart();
      const sp = gpus.indexOf(" ");
      let list = sp < 0 ? gpus : gpus.slice(0, sp);
      let tail = sp < 0 ? "" : gpus.slice(sp + 1);
      e.cudaDevs = numbers(list);
      e.nvmlDevs = e.cudaDevs;
      if (tail.startsWith("(NVML ")) {
        const end = tail.indexOf(")");
        list = tail.slice(6, end < 0 ? tail.length : end);
        e.nvmlDevs = numbers(list);
        tail = end < 0 ? "" : tail.slice(end + 1).trimStart();
      }
      e.details = tail.trim();
      return e;
    }
  }
  const lt = rest.indexOf("<");
  const gt = rest.indexOf(">", lt);
  if (lt > 0 && gt > lt && !rest.slice(0, lt).includes(" ")) {
    e.addr = rest.slice(0, gt + 1);
    e.details = rest.slice(gt + 1).trim();
  } else e.details = rest.trim();
  return e;
}

/** One JSON notification; tolerant of an unescaped quote in `details`. */
export function eventFromJson(text: string): RasEvent | undefined {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    o = fieldsOf(text);
  }
  if (typeof o !== "object" || o === null) return undefined;
  const r = o as Record<string, unknown>;
  const type = typeof r.event === "string" ? r.event : "";
  if (!isEventType(type)) return undefined;
  const e: RasEvent = { type, timestamp: typeof r.timestamp === "string" ? r.timestamp : "", details: typeof r.details === "string" ? r.details : "" };
  const peer = r.peer;
  if (typeof peer === "object" && peer !== null) {
    const p = peer as Record<string, unknown>;
    if (typeof p.host === "string") e.host = p.host;
    if (typeof p.pid === "number" && Number.isInteger(p.pid)) e.pid = p.pid;
    if (Array.isArray(p.cuda_devs)) e.cudaDevs = p.cuda_devs.filter((x): x is number => Number.isInteger(x));
    if (Array.isArray(p.nvml_devs)) e.nvmlDevs = p.nvml_devs.filter((x): x is number => Number.isInteger(x));
    if (typeof p.addr === "string") e.addr = p.addr;
  }
  return e;
}

/** The object's lines read one `"key": value` at a time (NCCL writes one field a line). */
function fieldsOf(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const peer: Record<string, unknown> = {};
  let inPeer = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.startsWith('"peer"')) inPeer = true;
    else if (inPeer && line.startsWith("}")) inPeer = false;
    if (!line.startsWith('"')) continue;
    const q = line.indexOf('"', 1);
    if (q < 0 || line.slice(q, q + 3) !== '": ') continue;
    const key = line.slice(1, q);
    let v = line.slice(q + 3);
    if (v.endsWith(",")) v = v.slice(0, -1);
    let value: unknown;
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) value = v.slice(1, -1);
    else {
      try {
        value = JSON.parse(v);
      } catch {
        continue;
      }
    }
    if (inPeer && key !== "peer") peer[key] = value;
    else if (key !== "peer") out[key] = value;
  }
  if (Object.keys(peer).length > 0) out.peer = peer;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Upper-case letters, digits and underscores: PEER_DEAD, PEER_NEW, ... */
function isEventType(s: string): boolean {
  if (s.length === 0 || s.length > 64) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}

function numbers(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(",")) {
    const n = Number(part);
    if (part !== "" && Number.isInteger(n) && n >= 0) out.push(n);
  }
  return out;
}
