/**
 * The straggler verdict from COLL lines: which local rank of a communicator keeps arriving last,
 * late enough to matter, and held so that it does not flicker. See docs/nccl.md, "Stragglers".
 *
 * window (stragglerWindow): over the last finished collectives (at least stragglerMinSamples), a
 *   rank that was surely last (tracker: its earliest possible arrival after every other rank's
 *   latest) by a lead of at least max(stragglerMinSpreadMs, stragglerMinLeadOfInterval × the mean
 *   interval between those collectives), in at least stragglerShare of them. Its median lead is
 *   then at least that much too.
 * hold (holdStragglers): named once the window has named it at every evaluation for
 *   stragglerRaiseMs and over stragglerMinSamples more collectives; no longer named once the window
 *   has not named it for stragglerClearMs and stragglerMinSamples collectives. One late collective,
 *   or one evaluation either way, changes nothing.
 */
import type { ArrivalRecord, CommState } from "../state/model.js";
import type { DetectOptions } from "./types.js";

/** The lead (ms) that matters for this window: the floor, or a share of the mean interval between its collectives. */
export function leadNeededMs(window: readonly ArrivalRecord[], opts: DetectOptions): number {
  const first = window[0];
  const last = window[window.length - 1];
  const meanInterval = first !== undefined && last !== undefined && window.length > 1 ? Math.max(0, last.atMs - first.atMs) / (window.length - 1) : 0;
  return Math.max(opts.stragglerMinSpreadMs, opts.stragglerMinLeadOfInterval * meanInterval);
}

/** Ranks the current window names (no hysteresis). */
export function stragglerWindow(comm: CommState, opts: DetectOptions): number[] {
  const window = comm.arrivals;
  if (window.length < opts.stragglerMinSamples) return [];
  const need = leadNeededMs(window, opts);
  const counts = new Map<number, number>();
  for (const a of window) if (a.lastRank >= 0 && a.leadMs >= need) counts.set(a.lastRank, (counts.get(a.lastRank) ?? 0) + 1);
  return [...counts]
    .filter(([, n]) => n / window.length >= opts.stragglerShare)
    .map(([rank]) => rank)
    .sort((a, b) => a - b);
}

/**
 * The ranks named now, given what the window names now; updates comm.stragglerHold. Evaluating
 * twice at the same time gives the same answer.
 */
export function holdStragglers(comm: CommState, named: readonly number[], now: number, opts: DetectOptions): number[] {
  const hold = comm.stragglerHold;
  const count = comm.arrivalCount;
  for (const rank of named) {
    const h = hold.get(rank);
    if (h === undefined) hold.set(rank, { sinceMs: now, sinceCount: count, raised: false });
    else {
      h.offSinceMs = undefined;
      h.offSinceCount = undefined;
    }
  }
  const out: number[] = [];
  for (const [rank, h] of [...hold]) {
    if (named.includes(rank)) {
      if (!h.raised && now - h.sinceMs >= opts.stragglerRaiseMs && count - h.sinceCount >= opts.stragglerMinSamples) h.raised = true;
    } else if (!h.raised) {
      hold.delete(rank); // the window let go before it was raised: the clock starts again
      continue;
    } else {
      h.offSinceMs ??= now;
      h.offSinceCount ??= count;
      if (now - h.offSinceMs >= opts.stragglerClearMs && count - h.offSinceCount >= opts.stragglerMinSamples) {
        hold.delete(rank);
        continue;
      }
    }
    if (h.raised) out.push(rank);
  }
  return out.sort((a, b) => a - b);
}

/** The communicator stopped moving (hung, idle, ended): a straggler verdict starts again from nothing. */
export function forgetStragglers(comm: CommState): void {
  comm.stragglerHold.clear();
}
