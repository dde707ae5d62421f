/**
 * Verdicts per communicator, as functions of the tracked state, the time and two views of the
 * node (process liveness, GPU readings). See DetectOptions for the knobs and docs/nccl.md, "Verdicts".
 * Not pure in one respect, on purpose: the straggler verdict's hysteresis (comm.stragglerHold,
 * straggler.ts) lives in the state and evaluating advances it. Evaluating twice at the same time
 * gives the same verdicts, so a scrape between two evaluations changes nothing.
 *
 * hang: every live local rank's process has made no progress on ANY communicator for the threshold
 *   (stretched by the communicator's own recent p99 gap), this communicator holds the last collective
 *   of at least one of them, it has entered at least one collective, ranks are not torn down, and the
 *   GPUs do not all read "busy" (a busy GPU computes: CUDA-graph replay prints no COLL lines).
 * behind: during a hang, the ranks whose collective count (or opCount, when counting began mid-run)
 *   trails the communicator's maximum: they never entered the collective the others wait in.
 * straggler: while moving, a rank surely last, by a lead that matters against the interval between
 *   collectives, at >= 80 % of the last >= 20 collectives, held for a while before it is named or
 *   dropped (straggler.ts).
 * mismatch: two ranks issued different collective types at the same sequence index, or NCCL warned.
 */
import type { CommState, ProcessState, RankState } from "../state/model.js";
import { classifyGpu, gpuReleased, type GpuObservation, type GpuReading } from "../../verdict/gpu-signature.js";
import { quantile } from "./percentile.js";
import { forgetStragglers, holdStragglers, stragglerWindow } from "./straggler.js";
import type { CommVerdict, DetectOptions } from "./types.js";

export interface NodeView {
  /** true alive, false gone, undefined unknown (another host's pid, another pid namespace). */
  alive(proc: ProcessState): boolean | undefined;
  /** The GPU a rank runs on and its latest reading, when known. */
  gpuFor(rank: RankState): (GpuReading & { gpu: string }) | undefined;
  /** The node's pid (in <path.procfs>) of a process alive() found, when known. */
  nodePid?(proc: ProcessState): number | undefined;
}

export interface TrackedState {
  processes: ReadonlyMap<string, ProcessState>;
  comms: ReadonlyMap<string, CommState>;
}

interface ProcessProgress {
  lastMs: number;
  /** Communicator of the process's most recent collective. */
  currentComm: string;
}

function processProgress(state: TrackedState): Map<string, ProcessProgress> {
  const out = new Map<string, ProcessProgress>();
  for (const comm of state.comms.values()) {
    for (const r of comm.ranks.values()) {
      if (r.lastProgressMs === undefined) continue;
      const p = out.get(r.processKey);
      if (!p || r.lastProgressMs > p.lastMs) out.set(r.processKey, { lastMs: r.lastProgressMs, currentComm: comm.key });
    }
  }
  return out;
}

export function thresholdFor(comm: CommState, opts: DetectOptions): number {
  const p99 = quantile(comm.gaps, 0.99) ?? 0;
  return Math.min(opts.maxThresholdMs, Math.max(opts.hangThresholdMs, opts.gapFactor * p99));
}

/** Ranks that never entered the collective the others wait in. */
export function ranksBehind(ranks: readonly RankState[]): number[] {
  if (ranks.length < 2) return [];
  if (ranks.every((r) => r.countFromInit)) {
    const max = Math.max(...ranks.map((r) => r.collectives));
    return ranks
      .filter((r) => r.collectives < max)
      .map((r) => r.rank)
      .sort((a, b) => a - b);
  }
  // Counting began mid-run (ringwatch restarted): NCCL's opCount orders them when it advances.
  const known = ranks.filter((r): r is RankState & { lastOpCount: number } => r.lastOpCount !== undefined).map((r) => ({ rank: r.rank, op: r.lastOpCount }));
  if (known.length < 2) return [];
  const max = known.reduce((m, o) => (o.op > m ? o.op : m), 0);
  if (max === 0) return [];
  return known
    .filter((o) => o.op < max)
    .map((o) => o.rank)
    .sort((a, b) => a - b);
}

/** Ranks named stragglers now (window + hysteresis); call once per evaluation of a moving communicator. */
export function stragglers(comm: CommState, opts: DetectOptions, now: number): number[] {
  return holdStragglers(comm, stragglerWindow(comm, opts), now, opts);
}

function mismatchWarned(comm: CommState, procs: ReadonlyMap<string, ProcessState>, ranks: readonly RankState[]): boolean {
  for (const r of ranks) {
    const p = procs.get(r.processKey);
    if (p?.warnings.some((w) => w.kind === "collective_mismatch" && w.atMs >= comm.createdMs)) return true;
  }
  return false;
}

export function evaluateComm(
  comm: CommState,
  state: TrackedState,
  progress: ReadonlyMap<string, ProcessProgress>,
  now: number,
  opts: DetectOptions,
  view: NodeView,
): CommVerdict {
  const thresholdMs = thresholdFor(comm, opts);
  const ranks = [...comm.ranks.values()].filter((r) => r.tornDownMs === undefined);
  const live = ranks.filter((r) => {
    const p = state.processes.get(r.processKey);
    return p !== undefined && view.alive(p) !== false;
  });
  const verdict: CommVerdict = {
    commKey: comm.key,
    hangSuspected: false,
    thresholdMs,
    behind: [],
    stragglers: [],
    mismatch: comm.mismatch !== undefined || mismatchWarned(comm, state.processes, ranks),
    liveRanks: live.map((r) => r.rank).sort((a, b) => a - b),
    gpus: [],
    reason: "",
  };
  // Not moving: no straggler, and one named before starts again from nothing.
  const still = (reason: string): CommVerdict => {
    forgetStragglers(comm);
    return { ...verdict, reason };
  };
  if (live.length === 0) return still(ranks.length === 0 ? "torn down" : "no live process");
  if (comm.maxCollectives < 1) return still("no collective yet");
  const lastMs = Math.max(...live.map((r) => progress.get(r.processKey)?.lastMs ?? -Infinity));
  if (!Number.isFinite(lastMs)) return still("no progress time known");
  verdict.silentMs = Math.max(0, now - lastMs);
  if (verdict.silentMs < thresholdMs) {
    return { ...verdict, stragglers: stragglers(comm, opts, now), reason: "moving" };
  }
  forgetStragglers(comm);
  if (!live.some((r) => progress.get(r.processKey)?.currentComm === comm.key)) {
    return { ...verdict, reason: "idle: its processes last worked on another communicator" };
  }
  const gpus: GpuObservation[] = [];
  const readings = live.map((r) => view.gpuFor(r));
  for (const [i, g] of readings.entries()) {
    const sig = g ? classifyGpu(g) : undefined;
    const rank = live[i]?.rank;
    if (g && sig && rank !== undefined) gpus.push({ gpu: g.gpu, rank, signature: sig });
  }
  // Liveness unknown (pods) but every GPU of these ranks has released its memory: the job ended.
  const unknown = live.every((r) => {
    const p = state.processes.get(r.processKey);
    return p !== undefined && view.alive(p) === undefined;
  });
  if (unknown && readings.length > 0 && readings.every((g) => g !== undefined && gpuReleased(g))) {
    return { ...verdict, gpus, reason: "ended: every GPU of its ranks released its memory" };
  }
  verdict.gpus = gpus;
  if (gpus.length > 0 && gpus.every((g) => g.signature === "busy")) {
    return { ...verdict, reason: "silent but every GPU is computing (CUDA graph replay or a long step)" };
  }
  return { ...verdict, hangSuspected: true, behind: ranksBehind(ranks), reason: "every live rank silent past the threshold" };
}

export function evaluateAll(state: TrackedState, now: number, opts: DetectOptions, view: NodeView): CommVerdict[] {
  const progress = processProgress(state);
  return [...state.comms.values()].map((c) => evaluateComm(c, state, progress, now, opts, view));
}
