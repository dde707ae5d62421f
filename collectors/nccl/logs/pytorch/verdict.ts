/**
 * The live verdict of PyTorch's own lines in the followed logs: the same reasoning as `ringwatch
 * analyze` (findings/pytorch-groups.ts, pytorch-debug.ts) on the records read in the last 15
 * minutes, so that a job that restarts drops its old verdict. A process group is hung when PyTorch
 * says so in any way (a watchdog timeout, every rank in one work none completes, a heartbeat
 * timeout, a stuck watchdog, a monitoredBarrier failure, ranks behind or in different collectives);
 * the ranks behind and a collective mismatch are named. Each new verdict is logged once, at warn.
 */
import type { Logger } from "pino";
import { processGroupFindings } from "./findings-groups.js";
import { pytorchDebugFindings } from "./findings-debug.js";
import type { Finding } from "../../verdict/report.js";
import type { PytorchLog } from "./log.js";

/** How long a PyTorch line keeps its verdict up. */
export const PYTORCH_HOLD_MS = 15 * 60_000;
/** Verdict keys remembered for "logged once". */
const MAX_LOGGED = 1024;

export interface PytorchVerdict {
  kind: "rank_behind" | "hang_suspected" | "collective_mismatch" | "watchdog_timeout";
  /** `PG 1`, `PG 0 (default_pg)`; "" where the lines name none (DETAIL, monitoredBarrier). */
  processGroup: string;
  ranks: number[];
  seq?: number;
  summary: string;
}

const KINDS = new Set<string>(["rank_behind", "hang_suspected", "collective_mismatch", "watchdog_timeout"]);

/** The records read since sinceMs (records without a time are offline ones and never live). */
function recent(pt: PytorchLog, sinceMs: number): Parameters<typeof processGroupFindings>[0] & Parameters<typeof pytorchDebugFindings>[0] {
  const fresh = <T extends { atMs?: number }>(r: T): boolean => r.atMs !== undefined && r.atMs >= sinceMs;
  return {
    watchdogs: pt.watchdogs.filter(fresh),
    workStatus: pt.workStatus.filter(fresh),
    hangSigns: pt.hangSigns.filter(fresh),
    errors: pt.errors.filter(fresh),
    debug: pt.debug.filter(fresh),
    running: new Map([...pt.running].filter(([, r]) => fresh(r))),
  };
}

function verdictOf(f: Finding): PytorchVerdict | undefined {
  if (!KINDS.has(f.kind) || f.severity !== "critical") return undefined;
  return {
    kind: f.kind as PytorchVerdict["kind"],
    processGroup: f.process_group ?? "",
    ranks: f.ranks,
    ...(f.seq !== undefined ? { seq: f.seq } : {}),
    summary: f.summary,
  };
}

export class PytorchVerdicts {
  private readonly logged = new Set<string>();

  constructor(private readonly opts: { log: Logger; now: () => number; holdMs?: number }) {}

  /** The verdicts of the last hold window; `known`: the ranks the logs' communicators name (asked only when there are lines). */
  evaluate(pt: PytorchLog, known: () => ReadonlySet<number>): PytorchVerdict[] {
    const hold = this.opts.holdMs ?? PYTORCH_HOLD_MS;
    const now = this.opts.now();
    if (pt.lastMs === undefined || now - pt.lastMs > hold) {
      this.logged.clear();
      return [];
    }
    const view = recent(pt, now - hold);
    const out = [...processGroupFindings(view, known()), ...pytorchDebugFindings(view)].map(verdictOf).filter((v): v is PytorchVerdict => v !== undefined);
    for (const v of out) this.logOnce(v);
    return out;
  }

  private logOnce(v: PytorchVerdict): void {
    const key = `${v.kind}|${v.processGroup}|${v.ranks.join(",")}|${v.seq ?? ""}`;
    if (this.logged.has(key)) return;
    if (this.logged.size >= MAX_LOGGED) this.logged.clear();
    this.logged.add(key);
    this.opts.log.warn({ kind: v.kind, process_group: v.processGroup, ranks: v.ranks, seq: v.seq }, `nccl: PyTorch's lines: ${v.summary}`);
  }
}
