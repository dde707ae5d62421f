/**
 * Synthetic PyTorch Flight Recorder dumps with the schema of the real ones (PyTorch 2.11, dump
 * version "2.10": test/fixtures/fr/h100-2026-11-24/), pickled by Python itself through
 * test/fakes/fr-dump.py. A job is described per rank: for each process group, how many collectives
 * the rank enqueued and completed, and what differs at a given collective.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fakesDir } from "./agent-process.js";

export const FR_DUMP_PY = join(fakesDir, "fr-dump.py");

export interface FakeGroup {
  /** process_group[0] and pg_config's key. */
  name: string;
  desc: string;
  ranks: number[];
  pgId: number;
}

/** What one rank recorded at one collective, where it differs from the plain all_reduce. */
export interface FakeCall {
  profilingName?: string;
  inputSizes?: number[][];
  outputSizes?: number[][];
  dtype?: string;
  state?: "scheduled" | "started" | "completed";
  frames?: FakeFrame[];
}

export interface FakeFrame {
  name: string;
  filename: string;
  line: number;
}

export interface FakeRankInGroup {
  group: FakeGroup;
  /** Collectives 1..enqueued are in the buffer (the last `buffer` of them); 1..completed completed. */
  enqueued: number;
  completed: number;
  /** The state of the enqueued, not completed ones (default `started` with timing, else `scheduled`, as PyTorch writes them). */
  pending?: "scheduled" | "started";
  /** TORCH_NCCL_ENABLE_TIMING: last_started_collective is written (else -1). */
  timing?: boolean;
  calls?: Record<number, FakeCall>;
  /**
   * Point-to-point sends after the collectives (pipeline stages): entries with is_p2p, and
   * pg_status' last_* then count them, as PyTorch writes the p2p counter there after a send.
   */
  p2p?: number;
}

export interface FakeRank {
  rank: number;
  groups: FakeRankInGroup[];
  /** TORCH_FR_BUFFER_SIZE: entries kept (default 2000). */
  buffer?: number;
}

const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";
export const TRAIN_FRAMES: FakeFrame[] = [
  { name: "all_reduce", filename: `${TORCH}/distributed_c10d.py`, line: 3068 },
  { name: "wrapper", filename: `${TORCH}/c10d_logger.py`, line: 83 },
  { name: "train_step", filename: "/opt/job/train.py", line: 41 },
  { name: "<module>", filename: "/opt/job/train.py", line: 88 },
];

const T0 = 1_795_485_086_000_000_000;
const STEP_NS = 50_000_000;

/** The dump dict of one rank, keys in the order PyTorch writes them. */
export function fakeDump(r: FakeRank): Record<string, unknown> {
  const pgConfig: Record<string, unknown> = {};
  const pgStatus: Record<string, unknown> = {};
  const all: { seq: number; p2p: number; g: FakeRankInGroup }[] = [];
  for (const g of r.groups) {
    pgConfig[g.group.name] = { name: g.group.name, desc: g.group.desc, ranks: `[${g.group.ranks.join(", ")}]` };
    const last = g.p2p ? { enq: g.p2p, done: g.p2p } : { enq: g.enqueued, done: g.completed };
    pgStatus[String(g.group.pgId)] = {
      last_enqueued_collective: last.enq,
      last_started_collective: g.timing ? last.enq : -1,
      last_completed_collective: last.done,
    };
    for (let s = 1; s <= g.enqueued; s++) all.push({ seq: s, p2p: 0, g });
    for (let p = 1; p <= (g.p2p ?? 0); p++) all.push({ seq: g.enqueued, p2p: p, g });
  }
  all.sort((a, b) => a.seq - b.seq || a.p2p - b.p2p || a.g.group.pgId - b.g.group.pgId);
  const kept = all.slice(-(r.buffer ?? 2000));
  const entries = kept.map(({ seq, p2p, g }, i) => {
    const c = (p2p === 0 ? g.calls?.[seq] : undefined) ?? {};
    const done = p2p > 0 || seq <= g.completed;
    const state = c.state ?? (done ? "completed" : (g.pending ?? (g.timing ? "started" : "scheduled")));
    const created = T0 + (seq * 100 + p2p) * STEP_NS;
    const size = c.inputSizes ?? [[1048576]];
    const dtype = c.dtype ?? "Float";
    const peer = g.group.ranks.indexOf(r.rank) + 1;
    return {
      frames: c.frames ?? TRAIN_FRAMES,
      record_id: all.length - kept.length + i,
      pg_id: g.group.pgId,
      process_group: [g.group.name, g.group.desc],
      thread_name: "python3",
      thread_id: "140442393100608",
      collective_seq_id: seq,
      p2p_seq_id: p2p,
      op_id: seq + p2p,
      profiling_name: p2p > 0 ? `nccl:send ${peer - 1}->${peer % g.group.ranks.length}` : (c.profilingName ?? "nccl:all_reduce"),
      time_created_ns: created,
      input_sizes: size,
      input_dtypes: size.map(() => dtype),
      output_sizes: c.outputSizes ?? size,
      output_dtypes: (c.outputSizes ?? size).map(() => dtype),
      state,
      time_discovered_started_ns: state !== "scheduled" && g.timing ? created + 1_000_000 : null,
      time_discovered_completed_ns: state === "completed" ? created + 9_000_000 : null,
      retired: state === "completed",
      timeout_ms: 100000,
      is_p2p: p2p > 0,
    };
  });
  return { version: "2.10", pg_config: pgConfig, comm_lib_version: "2.28.9", pg_status: pgStatus, entries };
}

/** Writes `dumps` (path → dump dict) with Python's pickle; throws with Python's stderr if it fails. */
export function writeDumps(dumps: Record<string, unknown>): void {
  const spec = { dumps: Object.entries(dumps).map(([path, dump]) => ({ path, dump })) };
  const r = spawnSync("python3", [FR_DUMP_PY], { input: JSON.stringify(spec), encoding: "utf8", timeout: 60_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`fr-dump.py failed (${r.status}): ${r.stderr}`);
}

/** Writes one `nccl_trace_rank_<rank>` per rank into `dir`; returns the paths by rank. */
export function writeJob(dir: string, ranks: readonly FakeRank[], prefix = "nccl_trace_rank_"): Map<number, string> {
  const paths = new Map<number, string>();
  const dumps: Record<string, unknown> = {};
  for (const r of ranks) {
    const p = join(dir, `${prefix}${r.rank}`);
    paths.set(r.rank, p);
    dumps[p] = fakeDump(r);
  }
  writeDumps(dumps);
  return paths;
}

/** `n` ranks 0..n-1. */
export const ranksUpTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Does this machine run python3 (test/fakes/fr-dump.py)? */
export function hasPython(): boolean {
  const r = spawnSync("python3", ["-c", "import pickle"], { encoding: "utf8", timeout: 30_000 });
  return r.status === 0;
}
