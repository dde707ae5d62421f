/**
 * Replays NCCL debug logs through the live path (FileSink fed by the follower's LineSplitter,
 * Tracker, evaluateAll) on a fake clock. Each line has a time it was written; each file is read
 * the way the follower reads a file that is being written: every `periodMs` (change-watch.ts's
 * HOT_MS, 500 ms) at its own phase, everything written by then in one pass. Verdicts are taken
 * every `scrapeMs`.
 *
 * The H100 capture of 2026-11-24 (test/fixtures/nccl-device/h100-2026-11-24) has no timestamps
 * on its lines, so when they were written comes from the same job script's Flight Recorder dumps
 * (test/fixtures/fr/h100-2026-11-24, the hung run's 81 collectives both ranks completed, the same
 * machine and script): the real gaps between one step's AllReduce and the next, and the real
 * enqueue skew between rank 0 and rank 1 of each collective, reused in order.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LineSplitter } from "../../../../../collectors/follow/line-splitter.js";
import { DEFAULT_DETECT, type CommVerdict, type DetectOptions } from "../../../../../collectors/nccl/logs/detect/types.js";
import { evaluateAll, type NodeView } from "../../../../../collectors/nccl/logs/detect/verdict.js";
import { readFrDump } from "../../../../../collectors/nccl/flight-recorder/read.js";
import type { FrEntry } from "../../../../../collectors/nccl/flight-recorder/types.js";
import { FileSink } from "../../../../../collectors/nccl/logs/ingest/file-sink.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { fixturesDir } from "../../../../helpers/fixtures.js";

export const DEVICE_DIR = join(fixturesDir, "nccl-device", "h100-2026-11-24");
export const FR_DIR = join(fixturesDir, "fr", "h100-2026-11-24");

export interface TimedLine {
  /** Bytes of the line, newline included. */
  bytes: Buffer;
  /** When the writer wrote it (ms since the replay began). */
  atMs: number;
}

export interface TimedFile {
  path: string;
  lines: TimedLine[];
}

/** The lines of a file, exactly as stored, newline kept on each. */
export function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let s = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, s)) {
    out.push(bytes.subarray(s, i + 1));
    s = i + 1;
  }
  if (s < bytes.length) out.push(bytes.subarray(s));
  return out;
}

/** What the real Flight Recorder dumps say about the job's timing (ms). */
export interface RealTiming {
  /** Gaps between consecutive steps' AllReduce on rank 0. */
  stepGapsMs: number[];
  /** Rank 1's enqueue time minus rank 0's, per collective both completed, in order. */
  skewMs: number[];
  /** Gap between two collectives of one step (AllReduce → AllGather → Broadcast), median. */
  inStepGapMs: number;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export function realTiming(): RealTiming {
  const entries = [0, 1].map((r) => {
    const name = `nccl_trace_rank_${r}`;
    const read = readFrDump(readFileSync(join(FR_DIR, name)), name);
    if (!read.ok) throw new Error(read.error);
    return new Map(read.dump.entries.map((e) => [e.seq ?? -1, e]));
  });
  const r0 = entries[0] as Map<number, FrEntry>;
  const r1 = entries[1] as Map<number, FrEntry>;
  const seqs = [...r0.keys()].filter((s) => r1.has(s) && s > 0).sort((a, b) => a - b);
  const t = (e: FrEntry | undefined): number => (e?.timeCreatedNs ?? NaN) / 1e6;
  const skewMs = seqs.map((s) => t(r1.get(s)) - t(r0.get(s)));
  const ar = seqs.filter((s) => r0.get(s)?.profilingName === "nccl:all_reduce").map((s) => t(r0.get(s)));
  const stepGapsMs = ar.slice(1).map((x, i) => x - (ar[i] as number));
  const inStep: number[] = [];
  for (let i = 1; i < seqs.length; i++) {
    const g = t(r0.get(seqs[i] as number)) - t(r0.get(seqs[i - 1] as number));
    if (g < 5) inStep.push(g);
  }
  return { stepGapsMs, skewMs, inStepGapMs: median(inStep) };
}

/** Epoch of a replay's time 0 (ms), unless told otherwise. */
export const EPOCH_MS = 1_800_000_000_000;

function pad(n: number, w = 2): string {
  return String(n).padStart(w, "0");
}

/** `[2027-01-15 08:00:00.123456] `: NCCL's timestamp prefix with microseconds, in local time. */
export function ncclStamp(epochMs: number): string {
  const d = new Date(Math.floor(epochMs));
  const us = Math.floor((epochMs - Math.floor(epochMs / 1000) * 1000) * 1000);
  return `[${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(us, 6)}] `;
}

const COLL = / NCCL INFO (AllReduce|AllGather|Broadcast|ReduceScatter|Reduce): opCount ([0-9a-f]+) /;

/**
 * Write times for a two-rank capture: every line before a rank's first COLL line at 0 (Init),
 * COLL line k in step s at the step's start (real step gaps, from `startMs`) plus its place in the
 * step plus, for rank 1, the real skew of collective k; every line after the last COLL line just
 * after the last step. Options: `extraDelayMs(rank, k)` adds a delay of one's own (a synthetic
 * straggler); `collectives` runs the job on for that many COLL lines per rank, cycling through
 * the capture's own COLL lines with opCount counting on; `stamp` prefixes every line with NCCL's
 * timestamp (NCCL_DEBUG_TIMESTAMP_LEVELS=INFO with a microsecond format) of its write time.
 */
export function scheduleTwoRanks(
  files: readonly [string, string],
  timing: RealTiming,
  opts: { startMs?: number; extraDelayMs?: (rank: number, k: number) => number; collectives?: number; stamp?: boolean; epochMs?: number } = {},
): TimedFile[] {
  const start = opts.startMs ?? 1000;
  const epoch = opts.epochMs ?? EPOCH_MS;
  return files.map((path, rank) => {
    const all = splitLines(readFileSync(path));
    const firstColl = all.findIndex((b) => COLL.test(b.toString("latin1")));
    let lastColl = all.length - 1;
    while (lastColl > 0 && !COLL.test((all[lastColl] as Buffer).toString("latin1"))) lastColl--;
    const head = all.slice(0, firstColl);
    const colls = all.slice(firstColl, lastColl + 1).filter((b) => COLL.test(b.toString("latin1")));
    const tail = all.slice(lastColl + 1);
    const n = opts.collectives ?? colls.length;
    let step = -1;
    let stepStart = start;
    let inStep = 0;
    let last = start;
    const out: TimedLine[] = head.map((b) => ({ bytes: b, atMs: 0 }));
    for (let k = 0; k < n; k++) {
      let text = (colls[k % colls.length] as Buffer).toString("latin1");
      const m = COLL.exec(text) as RegExpExecArray;
      if (k >= colls.length) text = text.replace(` opCount ${m[2] as string} `, ` opCount ${k.toString(16)} `);
      if (m[1] === "AllReduce") {
        step++;
        if (step > 0) stepStart += timing.stepGapsMs[(step - 1) % timing.stepGapsMs.length] as number;
        inStep = 0;
      } else inStep++;
      const skew = rank === 1 ? (timing.skewMs[k % timing.skewMs.length] as number) : 0;
      last = stepStart + inStep * timing.inStepGapMs + skew + (opts.extraDelayMs?.(rank, k) ?? 0);
      out.push({ bytes: Buffer.from(text, "latin1"), atMs: last });
    }
    for (const b of tail) out.push({ bytes: b, atMs: last + 1 });
    if (opts.stamp === true) for (const l of out) l.bytes = Buffer.concat([Buffer.from(ncclStamp(epoch + l.atMs)), l.bytes]);
    return { path, lines: out };
  });
}

export interface ReplayOptions {
  /** Read interval of each file (ms): the follower's HOT_MS. */
  periodMs?: number;
  /** Phase of each file's reads within the period (ms). */
  phasesMs: readonly number[];
  /** Extra delay of each read after its tick (ms), e.g. the event loop's; default none. */
  readLagMs?: (file: number, read: number) => number;
  scrapeMs?: number;
  /** Epoch of the replay's 0 (ms). */
  epochMs?: number;
  detect?: Partial<DetectOptions>;
  /** Run on this long after the last line (ms). */
  tailMs?: number;
}

export interface Replay {
  tracker: Tracker;
  /** Verdicts at every scrape, with the scrape's time (ms since the replay began). */
  scrapes: { t: number; verdicts: CommVerdict[] }[];
}

const ALIVE: NodeView = { alive: () => true, gpuFor: () => undefined };

/** Feeds the files through FileSink as the follower would, scraping verdicts on the way. */
export function replay(files: readonly TimedFile[], o: ReplayOptions): Replay {
  const period = o.periodMs ?? 500;
  const scrapeMs = o.scrapeMs ?? 500;
  const epoch = o.epochMs ?? EPOCH_MS;
  const detect = { ...DEFAULT_DETECT, ...o.detect };
  const tracker = new Tracker();
  const feeds = files.map((f, i) => ({
    f,
    i,
    sink: new FileSink(tracker, (err) => {
      throw err;
    }),
    splitter: new LineSplitter(65536),
    next: 0,
    reads: 0,
  }));
  const end = Math.max(...files.flatMap((f) => f.lines.map((l) => l.atMs))) + (o.tailMs ?? 2000);
  // Every event (a read of some file, a scrape) in time order; reads before scrapes at a tie.
  const events: { t: number; read?: (typeof feeds)[number] }[] = [];
  for (const feed of feeds) {
    const phase = o.phasesMs[feed.i] ?? 0;
    for (let n = 0, t = phase; t <= end; n++, t = phase + n * period) events.push({ t: t + (o.readLagMs?.(feed.i, n) ?? 0), read: feed });
  }
  for (let t = scrapeMs; t <= end; t += scrapeMs) events.push({ t });
  events.sort((a, b) => a.t - b.t || (a.read ? 0 : 1) - (b.read ? 0 : 1));
  const scrapes: Replay["scrapes"] = [];
  for (const ev of events) {
    const feed = ev.read;
    if (feed === undefined) {
      scrapes.push({ t: ev.t, verdicts: evaluateAll(tracker, epoch + ev.t, detect, ALIVE) });
      continue;
    }
    const ready: Buffer[] = [];
    const lines = feed.f.lines;
    while (feed.next < lines.length && (lines[feed.next] as TimedLine).atMs <= ev.t) ready.push((lines[feed.next++] as TimedLine).bytes);
    if (ready.length === 0) {
      feed.sink.looked(epoch + ev.t);
      continue;
    }
    const buf = Buffer.concat(ready);
    feed.sink.open(feed.f.path, epoch + ev.t, false, epoch + ev.t);
    feed.splitter.pushTo(buf, 0, buf.length, feed.sink);
  }
  return { tracker, scrapes };
}

/** Ranks named stragglers at each scrape (comm → ranks), for the scrapes that named any. */
export function namedAt(r: Replay): { t: number; ranks: number[] }[] {
  return r.scrapes.map((s) => ({ t: s.t, ranks: s.verdicts.flatMap((v) => v.stragglers) })).filter((s) => s.ranks.length > 0);
}
