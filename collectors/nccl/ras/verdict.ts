/**
 * Verdicts from NCCL RAS alone (no COLL line needed), per communicator with a live rank on this node:
 *  - hang: its operation counts stood still across reports spanning the hang threshold
 *    (ras/progress.ts); never while the local GPUs all compute (`busy`); a local GPU that has read
 *    `spin` (NCCL kernels polling: ~100 % SM at low power) for the threshold corroborates it;
 *  - behind: the ranks at a lower count of some collective type and a higher count of none
 *    (ras/counts.ts), and ranks whose process RAS cannot reach, on whatever node they run;
 *  - network: a stuck communicator whose ranks all launched the same collectives (every count
 *    equal, JSON) and none finished: no rank is behind (NCCL issue 1730).
 * Which ranks run here: RAS's node address is one of this node's addresses; in a text report, which
 * lists only some ranks, the followed logs' INIT lines or a RAS service on this node's loopback
 * (a job process here answered) tell it too.
 */
import { commIdOfHash, described } from "./findings.js";
import { classifyGpu, type GpuReading, type GpuSignature } from "../verdict/gpu-signature.js";
import type { GpuObservation } from "../verdict/gpu-signature.js";
import type { HangLine } from "../verdict/hang-transitions.js";
import { splitCounts } from "./counts.js";
import type { RasRank } from "./parse-text.js";
import type { RasCommProgress } from "./progress.js";

export interface RasNode {
  /** Is this address (as RAS prints a node) one of this node's? */
  isLocal(host: string): boolean;
  /** Is this node's process pid running (true), gone (false), or unknown. */
  alive(pid: number): boolean | undefined;
  /** The latest reading of the GPU with this NVML index (nvidia-smi's, dmon's). */
  gpu(nvmlDev: number): (GpuReading & { gpu: string }) | undefined;
  /** How long the GPU has read `spin` without a break (ms); 0 when it does not now. */
  spinHeldMs(gpu: string): number;
  /** Do the followed logs show a live rank of this communicator on this node (comm_id); undefined: they do not know it. */
  loggedHere(commId: string): boolean | undefined;
  /** The RAS service asked is this node's own (a loopback address). */
  rasIsLocal: boolean;
}

export interface RasLocalRank {
  rank: number;
  pid?: number;
  /** NVML index of its GPU. */
  gpu?: string;
  cudaDev?: string;
  alive: boolean | undefined;
}

export type HangEvidence = "ras" | "gpu";

export interface RasCommVerdict {
  commId: string;
  hang: boolean;
  /** How long the counts stood still, by the reports (ms). */
  stillMs: number;
  thresholdMs: number;
  /** Job-wide: ranks that never entered the collective the others wait in, or whose process is unreachable. */
  behind: RasRank[];
  /** Stuck with every count equal: every rank launched the collective, none finished it. */
  network: boolean;
  /** Ranks launched more of one type and fewer of another: they issued different collectives. */
  crossed: boolean;
  /** The collective the others wait in (`AllReduce #61`), when counts differ. */
  waitingIn?: string;
  local: RasLocalRank[];
  gpus: GpuObservation[];
  evidence: HangEvidence[];
  size?: number;
  reason: string;
}

function cudaOf(gpu: string | undefined): string | undefined {
  if (gpu === undefined) return undefined;
  const sp = gpu.indexOf(" ");
  return sp < 0 ? gpu : gpu.slice(0, sp);
}

/** The verdict of one communicator, or undefined when no live rank of it runs here. */
export function rasVerdict(p: RasCommProgress, node: RasNode): RasCommVerdict | undefined {
  const obs = p.obs;
  const commId = commIdOfHash(obs.commHash);
  const local: RasLocalRank[] = [];
  const seen = new Set<number>();
  for (const r of obs.ranks) {
    if (seen.has(r.rank) || r.node === undefined || !node.isLocal(r.node)) continue;
    seen.add(r.rank);
    const cudaDev = cudaOf(r.gpu);
    local.push({
      rank: r.rank,
      ...(r.pid !== undefined ? { pid: r.pid } : {}),
      ...(r.nvmlDev !== undefined ? { gpu: String(r.nvmlDev) } : {}),
      ...(cudaDev !== undefined ? { cudaDev } : {}),
      alive: r.pid !== undefined ? node.alive(r.pid) : undefined,
    });
  }
  const live = local.filter((l) => l.alive !== false);
  // A text report lists some ranks only: the logs, when they know the communicator, say whether it
  // runs here; else a RAS service on this node's loopback answered, so the job does.
  const here = live.length > 0 || (!obs.complete && local.length === 0 && (node.loggedHere(commId) ?? node.rasIsLocal));
  if (!here) return undefined;

  const gpus: GpuObservation[] = [];
  let spinHeld = false;
  for (const l of live) {
    const reading = l.gpu !== undefined ? node.gpu(Number(l.gpu)) : undefined;
    const sig: GpuSignature | undefined = reading ? classifyGpu(reading) : undefined;
    if (reading === undefined || sig === undefined) continue;
    gpus.push({ gpu: reading.gpu, rank: l.rank, signature: sig });
    if (node.spinHeldMs(reading.gpu) >= p.thresholdMs) spinHeld = true;
  }
  const computing = gpus.length > 0 && gpus.length === live.length && gpus.every((g) => g.signature === "busy");
  const stalled = obs.fingerprint !== undefined && p.stillMs >= p.thresholdMs;
  const hang = stalled && !computing;
  const split = hang ? splitCounts(obs.blocks) : undefined;
  const behind: RasRank[] = [];
  if (hang) {
    const named = new Set<number>();
    for (const r of [...(split?.behind ?? []), ...obs.unreachable]) {
      if (named.has(r.rank)) continue;
      named.add(r.rank);
      behind.push(r);
    }
    behind.sort((a, b) => a.rank - b.rank);
  }
  const network = hang && obs.complete && obs.blocks.length === 0 && obs.unreachable.length === 0;
  const crossed = split !== undefined && split.behind.length === 0 && split.crossed.length > 0;
  const trails = split?.ops.filter((o) => o.below > 0) ?? [];
  const evidence: HangEvidence[] = [];
  if (hang) evidence.push("ras");
  if (hang && spinHeld) evidence.push("gpu");
  const reason = !hang
    ? computing
      ? "the local GPUs compute (busy)"
      : obs.fingerprint === undefined
        ? "the report shows no counts to compare"
        : `counts still for ${Math.round(p.stillMs / 1000)} s of ${Math.round(p.thresholdMs / 1000)} s`
    : network
      ? "every rank launched the same collectives and none finished them"
      : `counts unchanged for ${Math.round(p.stillMs / 1000)} s`;
  return {
    commId,
    hang,
    stillMs: p.stillMs,
    thresholdMs: p.thresholdMs,
    behind,
    network,
    crossed,
    ...(trails.length > 0 ? { waitingIn: trails.map((o) => `${o.op} #${o.top}`).join(" and ") } : {}),
    local,
    gpus,
    evidence,
    ...(obs.size !== undefined ? { size: obs.size } : {}),
    reason,
  };
}

export function rasVerdicts(progress: readonly RasCommProgress[], node: RasNode): RasCommVerdict[] {
  const out: RasCommVerdict[] = [];
  for (const p of progress) {
    const v = rasVerdict(p, node);
    if (v !== undefined) out.push(v);
  }
  return out;
}

/** The log line of a RAS hang that begins: its fields and message. */
export function rasHangLine(v: RasCommVerdict): HangLine {
  return {
    fields: {
      comm_id: v.commId,
      source: "ras",
      still_seconds: Math.round(v.stillMs / 1000),
      threshold_seconds: Math.round(v.thresholdMs / 1000),
      ranks_behind: v.behind.map((r) => r.rank),
      processes_behind: v.behind.map((r) => (r.pid !== undefined ? `${r.node ?? "?"}:${r.pid}` : "")),
      evidence: v.evidence,
      local_ranks: v.local.map((l) => l.rank),
      gpu_signatures: v.gpus.map((g) => `${g.gpu}:${g.signature}`),
    },
    message: rasHangMessage(v),
  };
}

/** The log line of a RAS hang that ended. */
export function rasHangEndedLine(commId: string): HangLine {
  return { fields: { comm_id: commId, source: "ras" }, message: `nccl: communicator ${commId} no longer hung (NCCL RAS)` };
}

/** The message of a RAS hang's log line. */
export function rasHangMessage(v: RasCommVerdict): string {
  const head = `nccl: hang suspected on communicator ${v.commId} (NCCL RAS: ${v.reason}${v.evidence.includes("gpu") ? "; the local GPUs spin in NCCL" : ""})`;
  if (v.behind.length > 0) return `${head}; ${described(v.behind)} never entered ${v.waitingIn ?? "the collective the others wait in"}`;
  if (v.network)
    return `${head}; no rank is behind: every rank launched the collective and none finished it. Suspect the network (link errors, a switch, a stuck transport) before the ranks`;
  if (v.crossed) return `${head}; the ranks issued different collectives (a rank launched more of one type and fewer of another)`;
  return head;
}
