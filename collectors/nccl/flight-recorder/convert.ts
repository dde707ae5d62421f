/**
 * An unpickled Flight Recorder dict (unpickle.ts) → FrDump. Tolerant: a key that is missing or of
 * another type is left out, older key names are read too (seq_id, nccl_version, pg_config as
 * `{pg_id: [ranks]}`), and a dump without pg_status gets each group's last enqueued and completed
 * collective from its entries. Every list is read up to a limit, and everything read is counted
 * against the dump's budget (budget.ts), every reference to a shared object as often as it is
 * referred to: the work is bounded by the budget, not by how often a hostile pickle repeats one
 * object. Rank lists are parsed once each (ranks.ts), frames made once each (FrameCache).
 */
import { Budget } from "./budget.js";
import { RankLists } from "./ranks.js";
import { groupNameOf, keptEntries } from "./trim.js";
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
/** Fields of an entry read for its key (every entry), and for the rest of it (the entries kept). */
const KEY_FIELDS = 8;
const ENTRY_FIELDS = 16;

/** A string as kept: its first MAX_TEXT characters. */
const clip = (v: unknown): string | undefined => (typeof v === "string" ? (v.length > MAX_TEXT ? v.slice(0, MAX_TEXT) : v) : undefined);

/** A string kept, its characters counted. */
function str(v: unknown, b: Budget): string | undefined {
  const s = clip(v);
  if (s !== undefined) b.spend("chars", s.length);
  return s;
}

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

function sizes(v: readonly unknown[]): number[][] | undefined {
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

function strings(v: readonly unknown[]): string[] | undefined {
  const out: string[] = [];
  for (const x of v.slice(0, MAX_TENSORS)) {
    const s = clip(x);
    if (s === undefined) return undefined;
    out.push(s);
  }
  return out;
}

/**
 * An entry's sizes and dtypes, each list converted once: a pickle may name one list from many
 * entries (its memo). What a list costs is counted at every reference all the same, since the
 * analysis goes through it once per entry that holds it. The same array is handed to every such
 * entry, so it must not be changed.
 */
class SharedLists {
  private readonly sizesMade = new Map<unknown[], number[][] | undefined>();
  private readonly stringsMade = new Map<unknown[], string[] | undefined>();

  constructor(private readonly budget: Budget) {}

  sizes(v: unknown): number[][] | undefined {
    if (!Array.isArray(v)) return undefined;
    let cost = 0;
    for (let i = 0; i < v.length && i < MAX_TENSORS; i++) {
      const t: unknown = v[i];
      cost += 1 + (Array.isArray(t) ? Math.min(t.length, MAX_DIMS) : 0);
    }
    this.budget.spend("sizes", cost);
    if (!this.sizesMade.has(v)) this.sizesMade.set(v, sizes(v));
    return this.sizesMade.get(v);
  }

  strings(v: unknown): string[] | undefined {
    if (!Array.isArray(v)) return undefined;
    let chars = 0;
    for (let i = 0; i < v.length && i < MAX_TENSORS; i++) chars += clip(v[i])?.length ?? 0;
    this.budget.spend("values", Math.min(v.length, MAX_TENSORS));
    this.budget.spend("chars", chars);
    if (!this.stringsMade.has(v)) this.stringsMade.set(v, strings(v));
    return this.stringsMade.get(v);
  }
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

  constructor(private readonly budget: Budget) {}

  stack(v: unknown): FrFrame[] {
    if (!Array.isArray(v)) return [];
    const out: FrFrame[] = [];
    let key = "";
    const items = v.slice(0, MAX_FRAMES);
    this.budget.spend("values", items.length);
    for (const f of items) {
      if (!isDict(f)) continue;
      let frame = this.frames.get(f);
      if (frame === undefined) {
        const b = this.budget;
        frame = { name: str(get(f, "name"), b) ?? "?", file: str(get(f, "filename"), b) ?? "?", line: int(get(f, "line")) ?? 0 };
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

/** What every entry is read for, kept or not: its group, its collective and how far it got. */
type EntryKey = Pick<FrEntry, "profilingName" | "op" | "isP2p" | "pgId" | "pgName" | "pgDesc" | "seq" | "state">;

function keyOf(e: Dict, b: Budget): EntryKey {
  b.spend("values", KEY_FIELDS);
  const profilingName = str(get(e, "profiling_name"), b) ?? "?";
  const op = opOf(profilingName);
  const key: EntryKey = { profilingName, op, isP2p: bool(get(e, "is_p2p")) ?? (op === "send" || op === "recv") };
  const pgId = int(get(e, "pg_id"));
  if (pgId !== undefined) key.pgId = pgId;
  const pg = get(e, "process_group");
  if (Array.isArray(pg)) {
    const name = str(pg[0], b);
    const desc = str(pg[1], b);
    if (name !== undefined) key.pgName = name;
    if (desc !== undefined) key.pgDesc = desc;
  }
  const seq = int(get(e, "collective_seq_id")) ?? int(get(e, "seq_id"));
  if (seq !== undefined) key.seq = seq;
  const state = str(get(e, "state"), b);
  if (state !== undefined) key.state = state;
  return key;
}

function entryOf(e: Dict, key: EntryKey, frames: FrameCache, lists: SharedLists, b: Budget): FrEntry {
  b.spend("values", ENTRY_FIELDS);
  const out: FrEntry = { profilingName: key.profilingName, op: key.op, isP2p: key.isP2p, frames: frames.stack(get(e, "frames")) };
  const set = <K extends keyof FrEntry>(k: K, v: FrEntry[K] | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  set("recordId", int(get(e, "record_id")));
  set("pgId", key.pgId);
  set("pgName", key.pgName);
  set("pgDesc", key.pgDesc);
  set("seq", key.seq);
  set("p2pSeq", int(get(e, "p2p_seq_id")));
  set("opId", int(get(e, "op_id")));
  set("inputSizes", lists.sizes(get(e, "input_sizes")));
  set("outputSizes", lists.sizes(get(e, "output_sizes")));
  set("inputDtypes", lists.strings(get(e, "input_dtypes")));
  set("outputDtypes", lists.strings(get(e, "output_dtypes")));
  set("state", key.state);
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

function groupsOf(root: Dict, entries: readonly EntryKey[], b: Budget): FrGroup[] {
  const groups = new Map<string, FrGroup>();
  const rankLists = new RankLists(b);
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
      b.spend("values", 1);
      const name = typeof key === "string" ? key : typeof key === "number" ? String(key) : undefined;
      if (name === undefined) continue;
      b.spend("chars", name.length);
      const g = group(name);
      if (g === undefined) break;
      if (isDict(v)) {
        const desc = str(get(v, "desc"), b);
        if (desc !== undefined) g.desc = desc;
        const ranks = rankLists.ranksOf(get(v, "ranks"));
        if (ranks !== undefined) g.ranks = ranks;
      } else {
        const ranks = rankLists.ranksOf(v); // 1.x: pg_id → [ranks]
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
      b.spend("values", 1);
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

/**
 * The dump in `root` (a dict), or why it is not one; throws OverBudget past `budget`. With
 * `entriesPerGroup`, only the entries trim.ts keeps are read whole (the others only for their
 * group, collective and state, which the groups' progress is taken from).
 */
export function dumpOf(
  root: unknown,
  source: string,
  budget: Budget = new Budget(),
  entriesPerGroup?: number,
): { dump: Omit<FrDump, "rank" | "rankFrom">; rank?: number } | string {
  if (!isDict(root)) return "not a Flight Recorder dump: the pickle holds no dict";
  const rawEntries = get(root, "entries");
  const hasEntries = Array.isArray(rawEntries);
  if (!hasEntries && get(root, "pg_status") === undefined && get(root, "version") === undefined) {
    return "not a Flight Recorder dump: no version, pg_status or entries";
  }
  const list: unknown[] = hasEntries ? rawEntries : [];
  const from = Math.max(0, list.length - MAX_ENTRIES);
  let dropped = from;
  const raw: Dict[] = [];
  const keys: EntryKey[] = [];
  for (let i = from; i < list.length; i++) {
    const e = list[i];
    if (isDict(e)) {
      raw.push(e);
      keys.push(keyOf(e, budget));
    } else dropped++;
  }
  const keep = entriesPerGroup !== undefined ? keptEntries(keys, entriesPerGroup) : undefined;
  const entries: FrEntry[] = [];
  const frames = new FrameCache(budget);
  const lists = new SharedLists(budget);
  for (let i = 0; i < raw.length; i++)
    if (keep === undefined || keep[i] === true) entries.push(entryOf(raw[i] as Dict, keys[i] as EntryKey, frames, lists, budget));
  dropped += raw.length - entries.length;
  const dump: Omit<FrDump, "rank" | "rankFrom"> = {
    source,
    hasPgStatus: isDict(get(root, "pg_status")),
    groups: groupsOf(root, keys, budget),
    entries,
    entriesDropped: dropped,
  };
  const version = str(get(root, "version"), budget);
  if (version !== undefined) dump.version = version;
  const lib = str(get(root, "comm_lib_version"), budget) ?? str(get(root, "nccl_version"), budget);
  if (lib !== undefined) dump.commLibVersion = lib;
  const rank = int(get(root, "rank"));
  return rank !== undefined && rank >= 0 ? { dump, rank } : { dump };
}
