/**
 * Runs a simulated job's Inspector lines (test/helpers/inspector-job.ts) through an InspectorFeed
 * on a fake clock that follows the records' dump times, taking a snapshot every `every` lines,
 * and computes from the simulation's ground truth what the detectors should find.
 */
import { InspectorFeed, type InspectorFeedOptions } from "../../../../collectors/nccl/inspector/feed.js";
import type { InspectorCommSnapshot, InspectorSnapshot } from "../../../../collectors/nccl/inspector/types.js";
import type { InspectorJob, InspectorJobLine } from "../../../helpers/inspector-job.js";

export interface Run {
  feed: InspectorFeed;
  snapshots: InspectorSnapshot[];
  last: InspectorSnapshot;
  comm: InspectorCommSnapshot;
  nowMs: number;
}

export function runLines(lines: readonly InspectorJobLine[], every = 0, opts: InspectorFeedOptions = {}): Run {
  let now = 0;
  const feed = new InspectorFeed({ ...opts, now: () => now });
  const snapshots: InspectorSnapshot[] = [];
  lines.forEach((l, i) => {
    now = l.dumpUs / 1000;
    feed.line(l.path, l.text);
    if (every > 0 && (i + 1) % every === 0) snapshots.push(feed.snapshot(now));
  });
  const last = feed.snapshot(now);
  const comm = last.comms[0];
  if (comm === undefined) throw new Error("no communicator in the snapshot");
  return { feed, snapshots, last, comm, nowMs: now };
}

export function runJob(job: InspectorJob, every = 0, opts: InspectorFeedOptions = {}): Run {
  return runLines(job.lines, every, opts);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * The true lateness of `rank` (s): over the last `window` collectives (the feed compares the last
 * 64 of each type: pass its commonSeqs), the median of (its arrival - the median arrival of the
 * other given ranks).
 */
export function trueDelaySeconds(job: InspectorJob, rank: number, ranks: readonly number[], window: number): number {
  const diffs = job.truth.slice(-window).map((t) => (t.arriveUs[rank] as number) - median(ranks.filter((r) => r !== rank).map((r) => t.arriveUs[r] as number)));
  return median(diffs) / 1e6;
}
