/**
 * Looks at followed paths with stat(): what they name now, and whether there is unread data.
 * The poll loop does it every pollIntervalMs for files that have no watch (polling file systems,
 * no inotify watch left). The safety sweep does it every sweepIntervalMs for every file that is
 * not waiting on an armed watch (hot, errored, orphaned...), plus a rotating share of those that
 * are (at most ARMED_PER_SWEEP: with 10,000 idle files each is still checked every 10 sweeps, and
 * an idle node does not stat 2,000 files a second). Orphans with an open fd are read too.
 */
import { stat } from "node:fs/promises";
import type { FsGate } from "../job-fs-gate.js";
import { errCode } from "./fs-async.js";
import type { Registry } from "./registry.js";
import type { Tail } from "./tail-state.js";

const CONCURRENCY = 16;
export const ARMED_PER_SWEEP = 1000;

/** Checks one followed path: gone -> unlinked, another file -> added, changed -> queued. */
export async function checkPath(reg: Registry, p: string, enqueue: (t: Tail) => void, gate: FsGate): Promise<void> {
  try {
    const st = await gate.run(p, () => stat(p));
    const t = reg.byPath.get(p);
    if (t === undefined) return;
    if (!st.isFile()) reg.unlinked(p);
    else if (!t.sameFile(st)) reg.added(p, st);
    else if (t.errored || t.headPending || st.size !== t.offset || st.mtimeMs !== t.mtimeMs) enqueue(t);
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT" || code === "ENOTDIR") reg.unlinked(p);
  }
}

/** all: the safety sweep; full: every path (flush); polled: files without a watch (poll loop). */
export type SweepKind = "all" | "full" | "polled";

export class Sweeper {
  /** Where the rotating share of armed files starts next time. */
  private cursor = 0;

  constructor(
    private readonly reg: Registry,
    private readonly enqueue: (t: Tail) => void,
    private readonly gate: FsGate,
  ) {}

  async run(kind: SweepKind): Promise<void> {
    const paths: string[] = [];
    let armed = 0;
    const from = this.cursor;
    for (const [p, t] of this.reg.byPath) {
      if (kind === "full" || (kind === "polled" ? t.polled : t.watch === null)) paths.push(p);
      else if (kind === "all" && armed++ >= from && armed <= from + ARMED_PER_SWEEP) paths.push(p);
    }
    if (kind === "all") this.cursor = from + ARMED_PER_SWEEP < armed ? from + ARMED_PER_SWEEP : 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < paths.length) await checkPath(this.reg, paths[next++] as string, this.enqueue, this.gate);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, paths.length) }, worker));
    for (const t of this.reg.byId.values()) if (t.paths.size === 0 && t.fd !== null) this.enqueue(t);
  }
}
