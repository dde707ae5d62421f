/**
 * Progress of a job as successive NCCL RAS reports show it. A report is a snapshot of how many
 * operations of each collective type every rank launched; a communicator whose counts did not move
 * across reports that span the hang threshold is stuck. What a report can show:
 *  - JSON (NCCL 2.28.7+): every rank's counts per type, so any movement shows, and a stuck
 *    communicator whose ranks are all at equal counts launched the collective and none finished it
 *    (NCCL issue 1730: the network, not a rank);
 *  - text: counts only where they differ (a MISMATCH block), so the same mismatch standing across
 *    reports is the evidence; equal counts show nothing (the report cannot tell moving from stuck).
 * Pure: times come from the caller.
 */
import { blocksOfRanks } from "./counts.js";
import type { RasOpMismatch, RasRank, RasReport } from "./parse-text.js";

/** One communicator in one report. */
export interface RasCommObservation {
  /** The hash as the report prints it (16 hex digits). */
  commHash: string;
  /** Ranks the report names (JSON: all; text: the listed ones), with their process and GPU. */
  ranks: RasRank[];
  /** Types whose counts differ. */
  blocks: RasOpMismatch[];
  /** Every rank's counts are known (JSON): equal counts mean equal. */
  complete: boolean;
  /** What must stay equal for the communicator to be stuck; undefined: the report shows nothing to compare. */
  fingerprint: string | undefined;
  /** Ranks whose process RAS considers dead or cannot reach. */
  unreachable: RasRank[];
  size?: number;
}

const MAX_COMMS = 1_024;

function blocksKey(blocks: readonly RasOpMismatch[]): string {
  return blocks
    .map(
      (b) =>
        `${b.op}[${b.groups
          .map((g) => `${g.opCount ?? "?"}x${g.count}:${g.ranks.map((r) => r.rank).join(",")}`)
          .sort()
          .join(" ")}]`,
    )
    .sort()
    .join(";");
}

/** The communicators of one report, as progress compares them. */
export function observe(report: RasReport): RasCommObservation[] {
  const out = new Map<string, RasCommObservation>();
  const get = (commHash: string): RasCommObservation | undefined => {
    let o = out.get(commHash);
    if (o === undefined && out.size < MAX_COMMS)
      out.set(commHash, (o = { commHash, ranks: [], blocks: [], complete: false, fingerprint: undefined, unreachable: [] }));
    return o;
  };
  if (report.full !== undefined) {
    for (const c of report.full) {
      const o = get(c.commHash);
      if (o === undefined) continue;
      o.complete = true;
      o.size = c.size;
      o.ranks = [...c.ranks];
      o.blocks = blocksOfRanks(c);
      o.unreachable = c.missing.filter((m) => m.unresponsive || m.dead);
      // Every rank's counts, summed per type with their spread: any launch moves one of them.
      const per = new Map<string, { sum: number; min: number; max: number }>();
      for (const r of c.ranks) {
        for (const [op, n] of r.counts) {
          const p = per.get(op);
          if (p === undefined) per.set(op, { sum: n, min: n, max: n });
          else {
            p.sum += n;
            if (n < p.min) p.min = n;
            if (n > p.max) p.max = n;
          }
        }
      }
      o.fingerprint = `${c.ranks.length}/${c.missing.length}|${[...per]
        .map(([op, p]) => `${op}=${p.sum},${p.min},${p.max}`)
        .sort()
        .join(";")}|${blocksKey(o.blocks)}`;
    }
  }
  for (const e of report.comms) {
    const o = get(e.commHash);
    if (o === undefined || o.complete) continue;
    if (e.kind === "MISMATCH" && e.ops.length > 0) {
      o.blocks.push(...e.ops);
      for (const b of e.ops) for (const g of b.groups) o.ranks.push(...g.ranks);
      o.fingerprint = blocksKey(o.blocks);
    }
    if (e.kind === "INCOMPLETE") o.unreachable.push(...e.ranks);
  }
  return [...out.values()];
}

/** The processes (node:pid) a report says are dead. */
export function deadProcesses(report: RasReport): Set<string> {
  const out = new Set<string>();
  for (const p of report.processes) if (p.kind === "DEAD") for (const x of p.processes) out.add(`${x.node}:${x.pid}`);
  for (const c of report.full ?? []) for (const m of c.missing) if (m.dead && m.node !== undefined && m.pid !== undefined) out.add(`${m.node}:${m.pid}`);
  return out;
}

export interface ProgressOptions {
  hangThresholdMs: number;
  /** The threshold stretches to this many times the longest recent standstill that ended... */
  gapFactor: number;
  /** ...but never beyond this (ms). */
  maxThresholdMs: number;
}

export interface RasCommProgress {
  obs: RasCommObservation;
  /** When the current fingerprint was first seen. */
  sinceMs: number;
  /** When the last report was taken. */
  lastMs: number;
  /** How long the counts have stood still, by the reports (lastMs - sinceMs); 0 when nothing to compare. */
  stillMs: number;
  thresholdMs: number;
}

interface CommTrack {
  obs: RasCommObservation;
  sinceMs: number;
  lastMs: number;
  /** Standstills that ended in movement (ms), most recent last. */
  spans: number[];
}

const MAX_SPANS = 16;

export class RasProgress {
  private readonly comms = new Map<string, CommTrack>();

  constructor(private readonly opts: ProgressOptions) {}

  setThreshold(ms: number): void {
    this.opts.hangThresholdMs = ms;
  }

  /** A report taken at nowMs: communicators gone from it are forgotten. */
  record(nowMs: number, observations: readonly RasCommObservation[]): void {
    const seen = new Set<string>();
    for (const obs of observations) {
      seen.add(obs.commHash);
      const t = this.comms.get(obs.commHash);
      if (t === undefined || obs.fingerprint === undefined || obs.fingerprint !== t.obs.fingerprint) {
        const spans = t?.spans ?? [];
        if (t !== undefined && t.obs.fingerprint !== undefined && t.lastMs > t.sinceMs) {
          spans.push(t.lastMs - t.sinceMs);
          if (spans.length > MAX_SPANS) spans.shift();
        }
        this.comms.set(obs.commHash, { obs, sinceMs: nowMs, lastMs: nowMs, spans });
      } else {
        t.obs = obs;
        t.lastMs = nowMs;
      }
    }
    for (const k of [...this.comms.keys()]) if (!seen.has(k)) this.comms.delete(k);
  }

  /** No report (the job ended, or RAS went away): everything is forgotten. */
  clear(): void {
    this.comms.clear();
  }

  *states(): Iterable<RasCommProgress> {
    for (const t of this.comms.values()) {
      const longest = t.spans.reduce((m, s) => Math.max(m, s), 0);
      const thresholdMs = Math.min(this.opts.maxThresholdMs, Math.max(this.opts.hangThresholdMs, this.opts.gapFactor * longest));
      yield { obs: t.obs, sinceMs: t.sinceMs, lastMs: t.lastMs, stillMs: t.obs.fingerprint === undefined ? 0 : t.lastMs - t.sinceMs, thresholdMs };
    }
  }
}
