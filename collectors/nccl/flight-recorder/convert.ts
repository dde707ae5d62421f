/**
 * An unpickled Flight Recorder dict (unpickle.ts) → FrDump. Tolerant: a key that is missing or of
 * another type is left out, older key names are read too (seq_id, nccl_version, pg_config as
 * `{pg_id: [ranks]}`), and a dump without pg_status gets each group's last enqueued and completed
 * collective from its entries. Every list is read up to a limit, so the work is bounded by the
 * limits, not by how often a hostile pickle repeats one object.
 */
import { parseRanks } from "./ranks.js";
import type { FrDump, FrEntry, FrFrame, FrGroup } from "./types.js";

/** Entries kept per dump (the newest); PyTorch's buffer (TORCH_FR_BUFFER_SIZE) is usually 2,000-20,000. */
export const MAX_ENTRIES = 50_000;
/** Frames kept per entry (innermost first). */
export const MAX_FRAMES = 64;
/** Tensors per entry and dimensions per tensor whose sizes are kept. */
const MAX_TENSORS = 64;
const MAX_DIMS = 16;
/** Process groups kept per dump. */
export const MAX_GROUPS = 4_096;
const MAX_TEXT = 4_096;

type Dict = Map<unknown, unknown>;

const isDict = (v: unknown): v is Dict => v instanceof Map;
const get = (d: Dict, key: string): unknown => Map.prototype.get.call(d, key) as unknown;
const str = (v: unknown): string | undefined => (typeof v === "string" ? (v.length > MAX_TEXT ? v.slice(0, MAX_TEXT) : v) : undefined);

/** An integer, from a number, a bigint or (JSON dumps) a decimal string. */
function int(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : undefined;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string" && v.length > 0 && v.length < 20) {
    const n = Number(v);
    return Number.isFinite(n) ? Math.trunc(n) : undefined;
  }
  return undefined;
}

/** A sequence number: PyTorch writes -1 for "none yet" (last_started without timing). */
const seqNum = (v: unknown): number | undefined => {
  const n = int(v);
  return n !== undefined && n >= 0 ? n : undefined;
};

const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);

function sizes(v: unknown): number[][] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: number[][] = [];
  for (const t of v.slice(0, MAX_TENSORS)) {
    if (!Array.isArray(t)) return undefined;
    const dims: number[] = [];
    for (const d of t.slice(0, MAX_DIMS)) {
      const n = int(d);
      if (n === undefined) return undefined;
      dims.push(n);
    }
    out.push(dims);
  }
  return out;
}

function strings(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (const x of v.slice(0, MAX_TENSORS)) {
    const s = str(x);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

/**
 * Frames, shared: PyTorch pickles each distinct frame once and every entry refers to it (the
 * pickle's memo), so the same raw frame becomes the same FrFrame, and the same sequence of them the
 * same array. 20,000 entries with 20-frame stacks stay 20,000 references, not 400,000 objects.
 */
class FrameCache {
  private readonly frames = new Map<Dict, FrFrame>();
  private readonly ids = new Map<FrFrame, number>();
  private readonly stacks = new Map<string, FrFrame[]>();

  stack(v: unknown): FrFrame[] {
    if (!Array.isArray(v)) return [];
    const out: FrFrame[] = [];
    let key = "";
    for (const f of v.slice(0, MAX_FRAMES)) {
      if (!isDict(f)) continue;
      let frame = this.frames.get(f);
      if (frame === undefined) {
        frame = { name: str(get(f, "name")) ?? "?", file: str(get(f, "filename")) ?? "?", line: int(get(f, "line")) ?? 0 };
        this.frames.set(f, frame);
        this.ids.set(frame, this.ids.size);
      }
      out.push(frame);
      key += `${this.ids.get(frame)},`;
    }
    const shared = this.stacks.get(key);
    if (shared) return shared;
    this.stacks.set(key, out);
    return out;
  }
}

/** `nccl:all_reduce` → `all_reduce`; `nccl:send 0->1` → `send`. */
export function opOf(profilingName: string): string {
  const colon = profilingName.indexOf(":");
  const rest = colon >= 0 ? profilingName.slice(colon + 1) : profilingName;
  const space = rest.indexOf(" ");
  return space >= 0 ? rest.slice(0, space) : rest;
}

function entryOf(e: Dict, frames: FrameCache): FrEntry {
  const profilingName = str(get(e, "profiling_name")) ?? "?";
  const op = opOf(profilingName);
  const out: FrEntry = { profilingName, op, isP2p: bool(get(e, "is_p2p")) ?? (op === "send" || op === "recv"), frames: frames.stack(get(e, "frames")) };
  const set = <K extends keyof FrEntry>(k: K, v: FrEntry[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set("recordId", int(get(e, "record_id")));
  set("pgId", int(get(e, "pg_id")));
  const pg = get(e, "process_group");
  if (Array.isArray(pg)) {
    set("pgName", str(pg[0]));
    set("pgDesc", str(pg[1]));
  }
  set("seq", int(get(e, "collective_seq_id")) ?? int(get(e, "seq_id")));
  set("p2pSeq", int(get(e, "p2p_seq_id")));
  set("opId", int(get(e, "op_id")));
  set("inputSizes", sizes(get(e, "input_sizes")));
  set("outputSizes", sizes(get(e, "output_sizes")));
  set("inputDtypes", strings(get(e, "input_dtypes")));
  set("outputDtypes", strings(get(e, "output_dtypes")));
  set("state", str(get(e, "state")));
  set("timeCreatedNs", int(get(e, "time_created_ns")));
  // JSON dumps write 0 for "not yet"; pickles write None.
  set("timeStartedNs", int(get(e, "time_discovered_started_ns")) || undefined);
  set("timeCompletedNs", int(get(e, "time_discovered_completed_ns")) || undefined);
  const d = get(e, "duration_ms");
  if (typeof d === "number" && Number.isFinite(d)) out.durationMs = d;
  set("retired", bool(get(e, "retired")));
  set("timeoutMs", int(get(e, "timeout_ms")));
  return out;
}

/** The group an entry belongs to: its process_group name, else (1.x) its pg_id. */
export const groupNameOf = (e: FrEntry): string | undefined => e.pgName ?? (e.pgId !== undefined ? String(e.pgId) : undefined);

function groupsOf(root: Dict, entries: readonly FrEntry[]): FrGroup[] {
  const groups = new Map<string, FrGroup>();
  const group = (name: string): FrGroup | undefined => {
    let g = groups.get(name);
    if (g === undefined && groups.size < MAX_GROUPS) {
      g = { name };
      groups.set(name, g);
    }
    return g;
  };
  const config = get(root, "pg_config");
  if (isDict(config)) {
    for (const [key, v] of config) {
      const name = typeof key === "string" ? key : typeof key === "number" ? String(key) : undefined;
      if (name === undefined) continue;
      const g = group(name);
      if (g === undefined) break;
      if (isDict(v)) {
        const desc = str(get(v, "desc"));
        if (desc !== undefined) g.desc = desc;
        const ranks = parseRanks(get(v, "ranks"));
        if (ranks !== undefined) g.ranks = ranks;
      } else {
        const ranks = parseRanks(v); // 1.x: pg_id → [ranks]
        if (ranks !== undefined) g.ranks = ranks;
        if (typeof key === "number") g.pgId = key;
      }
    }
  }
  // pg_status is keyed by pg_id; the entries tell which name a pg_id has (else pg_config's key equals it).
  const nameOfId = new Map<number, string>();
  for (const e of entries) {
    const name = groupNameOf(e);
    if (name === undefined) continue;
    if (e.pgId !== undefined && !nameOfId.has(e.pgId)) nameOfId.set(e.pgId, name);
    const g = group(name);
    if (g !== undefined && g.desc === undefined && e.pgDesc !== undefined) g.desc = e.pgDesc;
  }
  const status = get(root, "pg_status");
  if (isDict(status)) {
    for (const [key, v] of status) {
      const id = int(key);
      if (id === undefined || !isDict(v)) continue;
      const g = group(nameOfId.get(id) ?? String(id));
      if (g === undefined) continue;
      g.pgId = id;
      g.statusFrom = "pg_status";
      const enq = seqNum(get(v, "last_enqueued_collective"));
      const started = seqNum(get(v, "last_started_collective"));
      const done = seqNum(get(v, "last_completed_collective"));
      if (enq !== undefined) g.lastEnqueued = enq;
      if (started !== undefined) g.lastStarted = started;
      if (done !== undefined) g.lastCompleted = done;
    }
  }
  // Without pg_status (dumps before 2.3) the collectives' own states say how far a group got. So
  // they do where the group also ran point-to-point operations: PyTorch then writes the p2p
  // counter into pg_status' last_* whenever the last operation was a send or recv.
  const seen = new Map<string, Pick<FrGroup, "lastEnqueued" | "lastStarted" | "lastCompleted">>();
  const p2p = new Set<string>();
  for (const e of entries) {
    const name = groupNameOf(e);
    if (name === undefined) continue;
    if (e.isP2p) p2p.add(name);
    if (e.isP2p || e.seq === undefined) continue;
    const s = seen.get(name) ?? {};
    seen.set(name, s);
    if (s.lastEnqueued === undefined || e.seq > s.lastEnqueued) s.lastEnqueued = e.seq;
    if ((e.state === "started" || e.state === "completed") && (s.lastStarted === undefined || e.seq > s.lastStarted)) s.lastStarted = e.seq;
    if (e.state === "completed" && (s.lastCompleted === undefined || e.seq > s.lastCompleted)) s.lastCompleted = e.seq;
  }
  for (const g of groups.values()) {
    if (g.statusFrom === "pg_status" && !p2p.has(g.name)) continue;
    if (g.statusFrom === undefined && !seen.has(g.name)) continue;
    delete g.lastEnqueued;
    delete g.lastStarted;
    delete g.lastCompleted;
    Object.assign(g, seen.get(g.name) ?? {}, { statusFrom: "entries" });
  }
  return [...groups.values()];
}

/** The dump in `root` (a dict), or why it is not one. */
export function dumpOf(root: unknown, source: string): { dump: Omit<FrDump, "rank" | "rankFrom">; rank?: number } | string {
  if (!isDict(root)) return "not a Flight Recorder dump: the pickle holds no dict";
  const rawEntries = get(root, "entries");
  const hasEntries = Array.isArray(rawEntries);
  if (!hasEntries && get(root, "pg_status") === undefined && get(root, "version") === undefined) {
    return "not a Flight Recorder dump: no version, pg_status or entries";
  }
  const list: unknown[] = hasEntries ? rawEntries : [];
  const from = Math.max(0, list.length - MAX_ENTRIES);
  let dropped = from;
  const entries: FrEntry[] = [];
  const frames = new FrameCache();
  for (let i = from; i < list.length; i++) {
    const e = list[i];
    if (isDict(e)) entries.push(entryOf(e, frames));
    else dropped++;
  }
  const dump: Omit<FrDump, "rank" | "rankFrom"> = {
    source,
    hasPgStatus: isDict(get(root, "pg_status")),
    groups: groupsOf(root, entries),
    entries,
    entriesDropped: dropped,
  };
  const version = str(get(root, "version"));
  if (version !== undefined) dump.version = version;
  const lib = str(get(root, "comm_lib_version")) ?? str(get(root, "nccl_version"));
  if (lib !== undefined) dump.commLibVersion = lib;
  const rank = int(get(root, "rank"));
  return rank !== undefined && rank >= 0 ? { dump, rank } : { dump };
}
