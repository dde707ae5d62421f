/**
 * What a process's lines say about its failures, beyond the WARN records: NCCL's error-return
 * chains (`host:pid:tid [dev] NCCL INFO misc/socket.cc:47 -> 3`, one line per stack frame the error
 * passes through), whether the process went on after one, and the global rank a launcher prefix gave.
 *
 * A chain is the run of consecutive retcode lines of one process, each at a frame not yet in the
 * run; it remembers the WARN of the same process right before it, and is marked recovered when the
 * process later completes an init, sets up channels or runs collectives (NCCL handled the error:
 * `NET/IB : No device found` style fallbacks print a one-frame chain and go on).
 */
import type { GdrEvent, NcclEvent, RetcodeEvent } from "../parse/types.js";
import type { ProcessState, RetcodeChain } from "./model.js";

const MAX_CHAINS = 8;
const MAX_FRAMES = 4;

/** Folds one event of a known process into its failure facts (called for every event of the process). */
export function noteFailureFacts(p: ProcessState, ev: NcclEvent, where: string): void {
  const kind = ev.launcher?.kind;
  // mpirun's and PyTorch's tags, and an actor that names its rank (`(VllmWorker rank=1 pid=..)`, `[rank=107]`).
  if (p.launcherRank === undefined && ev.launcherRank !== undefined && (kind === "mpi" || kind === "rank" || kind === "ray")) p.launcherRank = ev.launcherRank;
  if (p.srunTask === undefined && ev.launcherRank !== undefined && kind === "srun") p.srunTask = ev.launcherRank;
  switch (ev.kind) {
    case "retcode":
      noteRetcode(p, ev, where);
      p.lastEvent = "retcode";
      return;
    case "warn":
      p.lastEvent = "warn";
      return;
    case "init":
      if (ev.phase === "complete") recovered(p);
      break;
    case "coll":
    case "channel":
    case "connected":
      recovered(p);
      break;
    default:
      break;
  }
  p.lastEvent = "other";
}

function recovered(p: ProcessState): void {
  for (const c of p.chains) c.recovered = true;
}

function noteRetcode(p: ProcessState, ev: RetcodeEvent, where: string): void {
  const frame = `${ev.file}:${ev.line}`;
  const last = p.chains[p.chains.length - 1];
  if (p.lastEvent === "retcode" && last !== undefined && last.code === ev.code && !last.frames.includes(frame)) {
    last.frameCount++;
    if (last.frames.length < MAX_FRAMES) last.frames.push(frame);
    else last.frames[MAX_FRAMES - 1] = frame;
    last.lastWhere = where;
    // `[Proxy Thread]`, `[Async thread]` tag one frame: kept when the last frame has it.
    if (ev.context !== undefined) last.context = ev.context;
    else delete last.context;
    return;
  }
  const chain: RetcodeChain = { code: ev.code, frames: [frame], frameCount: 1, firstWhere: where, lastWhere: where, recovered: false };
  if (ev.cudaDev !== undefined) chain.cudaDev = ev.cudaDev;
  if (ev.context !== undefined) chain.context = ev.context;
  if (p.lastEvent === "warn") {
    const w = p.warnings[p.warnings.length - 1];
    if (w !== undefined) chain.afterWarn = w.where;
  }
  p.chains.push(chain);
  if (p.chains.length > MAX_CHAINS) p.chains.shift();
}

/** A `GPU Direct RDMA Disabled` line in few words: `GPU ca000 / HCA 0 (distance 7 > 4)`, `HCA 0 'lo'`, a plugin's words. */
export function gdrOffText(ev: GdrEvent): string {
  if (ev.scope === "net") return ev.reason ?? "the net plugin turned it off";
  const hca =
    ev.hca !== undefined || ev.hcaName !== undefined
      ? `HCA ${[ev.hca, ev.hcaName && `'${ev.hcaName}'`].filter((x) => x !== undefined && x !== "").join(" ")}`
      : "";
  const dist =
    ev.distance !== undefined
      ? ` (distance ${ev.distance}${ev.limit !== undefined ? ` > ${ev.limit}` : ""})`
      : ev.reason !== undefined
        ? ` (${ev.reason})`
        : "";
  const gpu = ev.gpu !== undefined ? `GPU ${ev.gpu}${ev.rank !== undefined ? ` (rank ${ev.rank})` : ""}` : "";
  return `${[gpu, hca].filter((x) => x !== "").join(" / ")}${dist}`;
}
