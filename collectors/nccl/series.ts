/**
 * Which NCCL series a scrape publishes: the series budget (docs/metrics.md, "NCCL series budget").
 *
 * Always, per communicator with a rank on this node: ringwatch_nccl_hang_suspected (0 or 1) and
 * _comm_slowest_rank_progress. Always, per rank process: _process_transport_info and
 * _process_net_device_info. Per rank (rank_info, rank_progress, rank_last_progress_timestamp_seconds),
 * and the communicator's _hang_threshold_seconds, only while the communicator is suspect: hung by
 * any source, a mismatch, a rank behind, a straggler or a straggler candidate; or always with
 * --collector.nccl.rank-series=always. Verdict gauges (rank_behind, straggler, collective_mismatch,
 * hang_evidence) only where they fire. NCCL Inspector's per-rank series follow the same
 * communicators (inspector/metrics.ts).
 *
 * --collector.nccl.max-series bounds the lot: the per-rank series of suspect communicators are
 * admitted by priority (a rank behind, a mismatch, a hang of the largest communicator, a
 * straggler), then the healthy communicators' own series; what does not fit is counted.
 *
 * Pure: the same state and verdicts give the same series.
 */
import type { Sample } from "../publish.js";
import type { Tracker } from "./logs/state/tracker.js";
import type { CommState, ProcessState, RankState } from "./logs/state/model.js";
import { rankHcaPorts } from "./logs/state/net-devices.js";
import { transportOf } from "./logs/state/transport.js";
import type { MergedVerdicts, Series } from "./verdict/merge.js";
import type { RasCommVerdict } from "./ras/verdict.js";

export type RankSeriesMode = "suspect" | "always";

export interface SeriesOptions {
  rankSeries: RankSeriesMode;
  /** At most this many series of the families below (per-communicator, per-rank, per-process). */
  maxSeries: number;
}

export const DEFAULT_SERIES: SeriesOptions = { rankSeries: "suspect", maxSeries: 2000 };

/** The samples of each family this module decides. */
export interface NcclSeries {
  hang: Sample[];
  threshold: Sample[];
  slowest: Sample[];
  evidence: Sample[];
  mismatch: Sample[];
  behind: Sample[];
  straggler: Sample[];
  info: Sample[];
  progress: Sample[];
  lastProgress: Sample[];
  transport: Sample[];
  netDevice: Sample[];
  /** Series left out by the budget. */
  dropped: number;
  /** Communicators whose per-rank series were left out (some or all), for the log. */
  droppedComms: string[];
  /** Communicators whose per-rank series are shown (all of them, or some within the budget). */
  shownComms: Set<string>;
}

/**
 * How many collectives a rank has entered, comparable across nodes: NCCL's opCount + 1 where the
 * communicator numbers its operations (opCount > 0 on a rank here), else the COLL lines counted
 * (single-node communicators from NCCL 2.27 keep opCount at 0; one agent sees all their ranks).
 * Undefined for a rank of a numbered communicator whose opCount was never read.
 */
export function rankProgress(r: RankState, numbered: boolean): number | undefined {
  if (!numbered) return r.countedBefore + r.collectives;
  return r.lastOpCount === undefined ? undefined : r.lastOpCount + 1;
}

export function isNumbered(comm: CommState): boolean {
  for (const r of comm.ranks.values()) if ((r.lastOpCount ?? 0) > 0) return true;
  return false;
}

/** A per-communicator series as comm_id -> value. */
function byComm(series: Series): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of series.values()) m.set(s.labels.comm_id ?? "", s.value);
  return m;
}

/** The communicators where some rank's verdict of this series fires. */
function firing(series: Series): Set<string> {
  const m = new Set<string>();
  for (const s of series.values()) if (s.value === 1) m.add(s.labels.comm_id ?? "");
  return m;
}

interface CommVerdicts {
  hang: Map<string, number>;
  mismatch: Map<string, number>;
  threshold: Map<string, number>;
  behind: Set<string>;
  straggler: Set<string>;
  suspect: ReadonlySet<string>;
}

/** Why a communicator's ranks are shown, most urgent first; undefined: healthy. */
function suspicion(commId: string, v: CommVerdicts): number | undefined {
  if (v.behind.has(commId)) return 0;
  if (v.mismatch.get(commId) === 1) return 1;
  if (v.hang.get(commId) === 1) return 2;
  if (v.straggler.has(commId) || v.suspect.has(commId)) return 3;
  return undefined;
}

type DetailFamily = "threshold" | "info" | "progress" | "lastProgress" | "behind" | "straggler";

interface RankDetail {
  commId: string;
  priority: number;
  /** The communicator's size (larger first within a priority: the job's anchor). */
  size: number;
  samples: { family: DetailFamily; sample: Sample }[];
}

function emptySeries(): NcclSeries {
  return {
    hang: [],
    threshold: [],
    slowest: [],
    evidence: [],
    mismatch: [],
    behind: [],
    straggler: [],
    info: [],
    progress: [],
    lastProgress: [],
    transport: [],
    netDevice: [],
    dropped: 0,
    droppedComms: [],
    shownComms: new Set(),
  };
}

/** Admits samples while the budget lasts and counts the rest. */
class Budget {
  constructor(
    private left: number,
    private readonly out: NcclSeries,
  ) {}

  fits(n: number): boolean {
    return n <= this.left;
  }

  admit(list: Sample[], s: Sample): boolean {
    if (this.left <= 0) {
      this.out.dropped++;
      return false;
    }
    list.push(s);
    this.left--;
    return true;
  }

  /** All of them or none. */
  admitAll(items: readonly (readonly [Sample[], Sample])[]): void {
    if (!this.fits(items.length)) {
      this.out.dropped += items.length;
      return;
    }
    for (const [list, s] of items) this.admit(list, s);
  }
}

/** What RAS adds: its verdicts of this node's communicators and the NCCL version its report gives. */
export interface RasSeriesInput {
  verdicts: readonly RasCommVerdict[];
  version?: string;
}

/** A process's pid on the node (--path.procfs), once found there; undefined before (the host_pid label is then empty). */
export type NodePidOf = (p: ProcessState) => number | undefined;

export function ncclSeries(t: Tracker, merged: MergedVerdicts, ras: RasSeriesInput, opts: SeriesOptions, nodePid: NodePidOf = () => undefined): NcclSeries {
  const out = emptySeries();
  const budget = new Budget(opts.maxSeries, out);
  const v: CommVerdicts = {
    hang: byComm(merged.hang),
    mismatch: byComm(merged.mismatch),
    threshold: byComm(merged.threshold),
    behind: firing(merged.behind),
    straggler: firing(merged.straggler),
    suspect: merged.suspect,
  };

  // The budget goes first to the verdicts that fire.
  for (const [commId, h] of v.hang) if (h === 1) budget.admit(out.hang, { labels: { comm_id: commId }, value: 1 });
  for (const s of merged.evidence.values()) budget.admit(out.evidence, s);
  for (const [commId, m] of v.mismatch) if (m === 1) budget.admit(out.mismatch, { labels: { comm_id: commId }, value: 1 });

  const details = new Map<string, RankDetail>();
  const detail = (commId: string, size: number): RankDetail | undefined => {
    let d = details.get(commId);
    if (d !== undefined) return d;
    const p = suspicion(commId, v);
    if (p === undefined && opts.rankSeries === "suspect") return undefined;
    d = { commId, priority: p ?? 4, size, samples: [] };
    const th = v.threshold.get(commId);
    if (th !== undefined) d.samples.push({ family: "threshold", sample: { labels: { comm_id: commId }, value: th } });
    details.set(commId, d);
    return d;
  };
  const slowest = new Map<string, number>();
  const ranksOf = new Map<ProcessState, RankState[]>();
  for (const c of t.comms.values()) {
    const numbered = isNumbered(c);
    // Before NCCL 2.23 only the first process prints the version line: its peers share it.
    let commVersion = "";
    for (const r of c.ranks.values()) commVersion ||= t.processes.get(r.processKey)?.version ?? "";
    const d = detail(c.key, c.nranks ?? c.ranks.size);
    for (const r of c.ranks.values()) {
      const p = t.processes.get(r.processKey);
      if (p !== undefined) {
        const list = ranksOf.get(p);
        if (list === undefined) ranksOf.set(p, [r]);
        else list.push(r);
      }
      const progress = rankProgress(r, numbered);
      if (progress !== undefined && !(progress >= (slowest.get(c.key) ?? Infinity))) slowest.set(c.key, progress);
      if (d === undefined) continue;
      const l = { comm_id: c.key, rank: String(r.rank) };
      const info = {
        ...l,
        nranks: String(r.nranks ?? c.nranks ?? ""),
        pid: String(p?.pid ?? ""),
        host_pid: String((p && nodePid(p)) ?? ""),
        cuda_dev: String(r.cudaDev ?? ""),
        bus_id: r.busId ?? "",
        nccl_version: p?.version ?? commVersion,
      };
      d.samples.push({ family: "info", sample: { labels: info, value: 1 } });
      if (progress !== undefined) d.samples.push({ family: "progress", sample: { labels: l, value: progress } });
      if (r.lastProgressMs !== undefined) d.samples.push({ family: "lastProgress", sample: { labels: l, value: r.lastProgressMs / 1000 } });
    }
  }
  // Ranks here that only RAS knows (no INIT line followed) of a hung communicator: their identity, so alerts name the pid.
  for (const rv of ras.verdicts) {
    if (!rv.hang) continue;
    const known = t.comms.get(rv.commId);
    const d = detail(rv.commId, rv.size ?? rv.local.length);
    if (d === undefined) continue;
    for (const l of rv.local) {
      if (known?.ranks.has(l.rank)) continue;
      const info = {
        comm_id: rv.commId,
        rank: String(l.rank),
        nranks: String(rv.size ?? ""),
        pid: String(l.pid ?? ""),
        host_pid: "",
        cuda_dev: l.cudaDev ?? "",
        bus_id: "",
        nccl_version: ras.version ?? "",
      };
      d.samples.push({ family: "info", sample: { labels: info, value: 1 } });
    }
  }
  // Communicators only another source suspects (NCCL Inspector's bandwidth drop): shown, with no rank of the logs.
  for (const commId of v.suspect) detail(commId, 0);
  for (const s of merged.behind.values()) if (s.value === 1) detail(s.labels.comm_id ?? "", 0)?.samples.push({ family: "behind", sample: s });
  for (const s of merged.straggler.values()) if (s.value === 1) detail(s.labels.comm_id ?? "", 0)?.samples.push({ family: "straggler", sample: s });

  // Each communicator's own series next: its whole set, or none of it.
  for (const commId of new Set([...v.hang.keys(), ...t.comms.keys()])) {
    const own: [Sample[], Sample][] = [];
    const comm = { comm_id: commId };
    const h = v.hang.get(commId);
    if (h !== undefined && h !== 1) own.push([out.hang, { labels: comm, value: h }]);
    const sl = slowest.get(commId);
    if (sl !== undefined) own.push([out.slowest, { labels: comm, value: sl }]);
    budget.admitAll(own);
  }

  // The rank processes: how they reach other nodes.
  for (const [p, ranks] of ranksOf) {
    const pid = String(p.pid);
    const host_pid = String(nodePid(p) ?? "");
    const tr = transportOf(p);
    budget.admit(out.transport, { labels: { pid, host_pid, net: tr.net, gdr: tr.gdr }, value: 1 });
    const ports = new Map<string, Sample>();
    for (const r of ranks)
      for (const h of rankHcaPorts(p, r)) ports.set(`${h.device}/${h.port}`, { labels: { pid, host_pid, device: h.device, port: String(h.port) }, value: 1 });
    for (const s of ports.values()) budget.admit(out.netDevice, s);
  }

  // Last, the ranks of suspect communicators, most urgent first.
  const order = [...details.values()].sort((a, b) => a.priority - b.priority || b.size - a.size || (a.commId < b.commId ? -1 : a.commId > b.commId ? 1 : 0));
  for (const d of order) {
    let cut = false;
    if (d.samples.length === 0) out.shownComms.add(d.commId);
    for (const { family, sample } of d.samples) {
      if (budget.admit(out[family], sample)) out.shownComms.add(d.commId);
      else cut = true;
    }
    if (cut) out.droppedComms.push(d.commId);
  }
  return out;
}
