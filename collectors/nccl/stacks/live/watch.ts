/**
 * Live Python stacks, on suspicion only: when a communicator with ranks on this node is suspected
 * hung or has a rank behind (by the logs' COLL lines or by NCCL RAS), or PyTorch's lines call a
 * process group hung, the stacks of its ranks' processes here are taken once for that
 * episode (keyed by communicator, or by process group) (collect.ts), grouped (group.ts), and the culprit's frames logged once and published
 * while the episode lasts (culprit.ts, metrics.ts).
 *
 * Bounded, to do no harm to the job: one collection per communicator episode; at most
 * maxPerMinute process collections a minute in all (an episode over it waits, counted once as
 * rate_limited, and goes ahead when the minute allows while it lasts); never two collections of one
 * process at once, and one process's stacks serve every communicator it is in for REUSE_MS; each
 * collection bounded in time and size.
 */
import type { Logger } from "pino";
import type { Exec } from "../../../exec.js";
import type { RankStack } from "../group.js";
import { collectStacks, type Collected, type CollectResult, type StackSource, type StackTarget } from "./collect.js";
import { culpritLabels, judgeStacks, type StackVerdict } from "./culprit.js";

/** One process's stacks serve the communicators it is in for this long. */
export const REUSE_MS = 30_000;
/** The window of --collector.nccl.stacks.max-per-minute. */
const WINDOW_MS = 60_000;
/** Processes of one communicator whose stacks are taken per episode. */
export const MAX_PROCESSES_PER_EPISODE = 16;
/** Culprit series at most (one per communicator or process group). */
export const MAX_CULPRIT_SERIES = 32;

export interface LiveStacksSettings {
  source: StackSource;
  /** The worker server's socket, `{rank}` and `{pid}` filled in; empty: none. */
  workerSocket: string;
  timeoutMs: number;
  maxPerMinute: number;
}

export interface LiveStacksOptions extends LiveStacksSettings {
  exec: Exec;
  now: () => number;
  log: Logger;
}

/** A communicator (or a PyTorch process group) suspected now, with its ranks here and their processes. */
export interface StackSuspect {
  /** The NCCL communicator; "" for a process group PyTorch's lines alone suspect. */
  commId: string;
  /** The PyTorch process group (`PG 0 (default_pg)`) of a PyTorch verdict; absent or "" for a communicator. */
  processGroup?: string;
  ranks: readonly { rank: number; target: StackTarget }[];
  /** The ranks the verdict names behind. */
  behind: readonly number[];
  /** Processes a RAS answer named here that no trusted owner vouches for (stacks-inputs.ts): never asked, counted once an episode as `untrusted`. */
  untrusted?: readonly { rank: number; pid: number; nodePid: number; uid: number | undefined }[];
}

/** The episode of a suspect: its communicator, or its process group. */
export function episodeKey(s: Pick<StackSuspect, "commId" | "processGroup">): string {
  return `${s.commId}\u0000${s.processGroup ?? ""}`;
}

/** A suspect in words: `communicator 0x49bb…` or `process group PG 0`. */
function named(s: Pick<StackSuspect, "commId" | "processGroup">): string {
  return s.commId !== "" ? `communicator ${s.commId}` : `process group ${s.processGroup ?? ""}`;
}

function idFields(s: Pick<StackSuspect, "commId" | "processGroup">): Record<string, string> {
  return { comm_id: s.commId, ...(s.processGroup !== undefined && s.processGroup !== "" ? { process_group: s.processGroup } : {}) };
}

interface Episode {
  state: "waiting" | "collecting" | "done";
  suspect: Pick<StackSuspect, "commId" | "processGroup">;
  limited: boolean;
  verdict?: StackVerdict;
  source?: string;
}

export interface CulpritSample {
  commId: string;
  /** "" for a communicator's episode. */
  processGroup: string;
  labels: Record<string, string>;
}

export class LiveStacks {
  private readonly episodes = new Map<string, Episode>();
  private readonly inFlight = new Map<number, Promise<Collected>>();
  private readonly recent = new Map<number, { at: number; c: Collected }>();
  private starts: number[] = [];
  private readonly pending = new Set<Promise<void>>();
  /** Collections by `source\0result`. */
  readonly counts = new Map<string, number>();

  constructor(private o: LiveStacksOptions) {}

  setOptions(s: LiveStacksSettings): void {
    this.o = { ...this.o, ...s };
  }

  /** The communicators suspected now (every evaluation): episodes begin, wait for the cap, or end. */
  update(suspects: readonly StackSuspect[]): void {
    const now = new Set(suspects.map(episodeKey));
    for (const id of [...this.episodes.keys()]) if (!now.has(id)) this.episodes.delete(id);
    // The default source with no socket named: nothing to ask (no count, no line).
    if (this.o.source === "off" || (this.o.source === "worker" && this.o.workerSocket === "")) return;
    for (const s of suspects) {
      const key = episodeKey(s);
      let ep = this.episodes.get(key);
      if (ep === undefined) {
        ep = { state: "waiting", limited: false, suspect: s };
        this.episodes.set(key, ep);
        this.refuse(s);
      }
      if (ep.state === "waiting") this.begin(s, ep);
    }
  }

  private begin(s: StackSuspect, ep: Episode): void {
    const seen = new Set<number>();
    const targets: StackTarget[] = [];
    for (const r of s.ranks) {
      if (seen.has(r.target.nodePid) || targets.length >= MAX_PROCESSES_PER_EPISODE) continue;
      seen.add(r.target.nodePid);
      targets.push(r.target);
    }
    if (targets.length === 0) return;
    const t = this.o.now();
    this.starts = this.starts.filter((x) => t - x < WINDOW_MS);
    const fresh = targets.filter((x) => !this.inFlight.has(x.nodePid) && !this.reusable(x.nodePid, t));
    if (this.starts.length + fresh.length > this.o.maxPerMinute) {
      if (!ep.limited) {
        ep.limited = true;
        this.count(this.o.source, "rate_limited");
        this.o.log.info(
          { ...idFields(s), processes: fresh.length, max_per_minute: this.o.maxPerMinute },
          `nccl: Python stacks of ${named(s)} wait: ${fresh.length} collections would pass --collector.nccl.stacks.max-per-minute (${this.o.maxPerMinute})`,
        );
      }
      return;
    }
    ep.state = "collecting";
    const p = this.collect(s, ep, targets).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  private reusable(pid: number, t: number): boolean {
    const r = this.recent.get(pid);
    return r !== undefined && t - r.at < REUSE_MS;
  }

  private one(t: StackTarget): Promise<Collected> {
    const now = this.o.now();
    const r = this.recent.get(t.nodePid);
    if (r !== undefined && now - r.at < REUSE_MS) return Promise.resolve(r.c);
    const flying = this.inFlight.get(t.nodePid);
    if (flying !== undefined) return flying;
    this.starts.push(now);
    const opts = {
      source: this.o.source === "off" ? "worker" : this.o.source,
      workerSocket: this.o.workerSocket,
      timeoutMs: this.o.timeoutMs,
      exec: this.o.exec,
    } as const;
    const p = collectStacks(t, opts).then((c) => {
      this.inFlight.delete(t.nodePid);
      this.recent.set(t.nodePid, { at: this.o.now(), c });
      for (const [pid, x] of this.recent) if (this.o.now() - x.at >= REUSE_MS) this.recent.delete(pid);
      this.count(c.source, c.result);
      return c;
    });
    this.inFlight.set(t.nodePid, p);
    return p;
  }

  private async collect(s: StackSuspect, ep: Episode, targets: readonly StackTarget[]): Promise<void> {
    const got = new Map<number, Collected>();
    await Promise.all(targets.map(async (t) => got.set(t.nodePid, await this.one(t))));
    if (this.episodes.get(episodeKey(s)) !== ep) return; // the episode ended meanwhile
    ep.state = "done";
    const stacks: RankStack[] = [];
    for (const r of s.ranks) {
      const dump = got.get(r.target.nodePid)?.dump;
      if (dump !== undefined) stacks.push({ rank: r.rank, process: String(r.target.pid), dump });
    }
    const results = [...got.values()];
    ep.source = results.find((c) => c.result === "ok")?.source ?? results[0]?.source;
    ep.verdict = judgeStacks(stacks, s.behind);
    this.logOnce(s, ep, results);
  }

  private logOnce(s: StackSuspect, ep: Episode, results: readonly Collected[]): void {
    const v = ep.verdict as StackVerdict;
    const ok = results.filter((c) => c.result === "ok").length;
    const failed = results.filter((c) => c.result !== "ok");
    const fields = {
      ...idFields(s),
      source: ep.source,
      processes: results.length,
      ok,
      ...(failed.length > 0 ? { failed: failed.length, problem: failed[0]?.problem } : {}),
    };
    const head = `nccl: Python stacks of ${named(s)} (${ok} of ${results.length} processes here, ${ep.source ?? "no source"})`;
    if (v.culprit !== undefined) {
      const c = v.culprit;
      const why =
        c.why === "behind" ? "the rank behind" : `not where ${v.waiting.length} ranks here wait${v.waitingAt !== undefined ? ` (${v.waitingAt})` : ""}`;
      this.o.log.warn(
        { ...fields, rank: c.rank, pid: c.process, why: c.why, frames: c.chain },
        `${head}: rank ${c.rank}, ${why}, is at ${c.chain} (innermost last)`,
      );
    } else if (ok > 0) {
      const where = v.waitingAt !== undefined ? `${v.waiting.length} of ${v.ranks} wait in ${v.waitingAt}` : `no stack most of them share in a collective`;
      this.o.log.info(fields, `${head}: no culprit here: ${where}`);
    } else {
      this.o.log.info(fields, `${head}: none could be read: ${failed[0]?.problem ?? "no process"}`);
    }
  }

  /** The processes a RAS answer named that are not asked: counted and logged once, when the episode begins. */
  private refuse(s: StackSuspect): void {
    const u = s.untrusted ?? [];
    if (u.length === 0) return;
    for (let i = 0; i < u.length; i++) this.count(this.o.source, "untrusted");
    this.o.log.warn(
      { ...idFields(s), ranks: u.map((x) => x.rank), pids: u.map((x) => x.nodePid), uids: u.map((x) => x.uid ?? null) },
      `nccl: Python stacks of ${named(s)}: ${u.length} process${u.length === 1 ? "" : "es"} NCCL RAS names here not asked (pid ${u.map((x) => x.nodePid).join(", ")}): not of the user whose RAS socket was verified, nor named by a log of their user (docs/security.md)`,
    );
  }

  private count(source: string, result: CollectResult): void {
    const k = `${source}\u0000${result}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }

  /** The culprit series of the episodes that last: at most one per communicator, MAX_CULPRIT_SERIES in all. */
  culprits(): CulpritSample[] {
    const out: CulpritSample[] = [];
    for (const ep of this.episodes.values()) {
      const c = ep.verdict?.culprit;
      if (c === undefined || out.length >= MAX_CULPRIT_SERIES) continue;
      out.push({ commId: ep.suspect.commId, processGroup: ep.suspect.processGroup ?? "", labels: culpritLabels(c, ep.source ?? "") });
    }
    return out;
  }

  /** Resolves when no collection is in flight (stop, tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
