/**
 * (f) NCCL Inspector: the agent's cost per Inspector record, in process (no files: the follower's
 * cost per line is part (a)'s). Records as NCCL writes them (test/helpers/inspector-writer.ts):
 * parseInspectorLine alone on three shapes (2.28 plain, 2.30 with comm_name, verbose with 8
 * channels), JSON.parse on the same lines for reference, InspectorFeed.line (parse + state +
 * detector series) on a simulated 8-rank job with 4 communicators, and snapshot() with 128
 * communicators x 8 ranks of full windows. Each figure is the best of REPEAT passes (shared
 * machines are noisy), in ns per record.
 */
import { InspectorFeed } from "../collectors/nccl/inspector/feed.js";
import { parseInspectorLine } from "../collectors/nccl/inspector/parse.js";
import { simulateInspectorJob } from "../test/helpers/inspector-job.js";
import { inspectorLine, type InspectorRecordSpec } from "../test/helpers/inspector-writer.js";

export interface InspectorBenchRow {
  what: string;
  nsPerRecord: number;
  /** Bytes per record, where the row is about parsing. */
  bytes?: number;
}

export interface InspectorBenchResult {
  rows: InspectorBenchRow[];
  /** snapshot() of 128 communicators x 8 ranks, ms. */
  snapshotMs: number;
  /** Records per second one core could take through InspectorFeed.line. */
  feedRecordsPerCoreSecond: number;
}

const REPEAT = 5;

function lines(n: number, verbose: boolean, format: "2.28" | "2.30"): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const base: InspectorRecordSpec = {
      commId: `0x${(0x7f8c496ae9f661 + (i % 16) * 4099).toString(16)}`,
      commName: "DP Group 0",
      rank: i % 8,
      nranks: 8,
      nnodes: 2,
      dumpUs: 1_760_000_000_000_000 + i * 37,
      hostname: "gpu-node-017",
      pid: 41000 + (i % 8),
      op: i % 3 === 0 ? "AllGather" : "AllReduce",
      sn: 1000 + (i >> 3),
      msgBytes: 2 ** (14 + (i % 15)),
      execUs: 800 + ((i * 7919) % 40000),
    };
    if (verbose) {
      const channels = Array.from({ length: 8 }, (_, ch) => ({
        startSn: 3 + ch,
        stopSn: 40 + ch,
        recordSn: 39 + ch,
        startUs: base.dumpUs - 900 + ch,
        stopUs: base.dumpUs - 50 + ch,
        recordUs: base.dumpUs - 50 + ch,
      }));
      base.verbose = { startSn: 1, stopSn: 2, startUs: base.dumpUs - 1000, stopUs: base.dumpUs - 990, channels };
    }
    out.push(inspectorLine(base, format));
  }
  return out;
}

function best(fn: () => void, count: number): number {
  let t = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    t = Math.min(t, Number(process.hrtime.bigint() - t0));
  }
  return t / count;
}

function parseRows(name: string, ls: string[]): InspectorBenchRow[] {
  const bytes = ls.reduce((a, l) => a + l.length + 1, 0) / ls.length;
  let sink = 0;
  const ours = best(() => {
    for (const l of ls) if (parseInspectorLine(l) !== undefined) sink++;
  }, ls.length);
  const json = best(() => {
    for (const l of ls) if ((JSON.parse(l) as { header?: unknown }).header !== undefined) sink++;
  }, ls.length);
  if (sink === 0) throw new Error("nothing parsed");
  return [
    { what: `parseInspectorLine, ${name}`, nsPerRecord: ours, bytes },
    { what: `JSON.parse (reference), ${name}`, nsPerRecord: json, bytes },
  ];
}

export function runInspector(records: number): InspectorBenchResult {
  const rows: InspectorBenchRow[] = [
    ...parseRows("2.28 record", lines(records, false, "2.28")),
    ...parseRows("2.30 record", lines(records, false, "2.30")),
    ...parseRows("verbose, 8 channels", lines(Math.max(1, records >> 2), true, "2.30")),
  ];

  // parse + state: 4 communicators of 8 ranks, their files interleaved as a follower hands them over.
  const per = Math.max(20, Math.floor(records / 32));
  const jobs = [0, 1, 2, 3].map((c) =>
    simulateInspectorJob({
      seed: 100 + c,
      nranks: 8,
      count: per,
      ops: [
        { op: "AllReduce", bytes: 2 ** (20 + c) },
        { op: "AllGather", bytes: 2 ** 18 },
      ],
      straggler: c === 1 ? { rank: 3, delayMs: 5 } : undefined,
    }),
  );
  const feedLines = jobs.flatMap((j) => j.lines).sort((a, b) => a.dumpUs - b.dumpUs);
  const endMs = (feedLines[feedLines.length - 1]?.dumpUs ?? 0) / 1000;
  const feedNs = best(() => {
    const feed = new InspectorFeed({ now: () => endMs });
    for (const l of feedLines) feed.line(l.path, l.text);
    if (feed.stats().records !== feedLines.length) throw new Error("feed lost records");
  }, feedLines.length);
  rows.push({ what: "InspectorFeed.line (parse + state), 4 comms x 8 ranks", nsPerRecord: feedNs });

  // snapshot(): 128 communicators x 8 ranks with full windows, each re-evaluated (a record came since).
  const big = new InspectorFeed({ now: () => endMs });
  const one = simulateInspectorJob({ seed: 7, nranks: 8, count: 80 });
  for (let c = 0; c < 128; c++) {
    const id = `0x${(0x1000 + c).toString(16)}`;
    for (const l of one.lines) big.line(l.path, l.text.replace(one.commId, id));
  }
  const fresh = one.lines[one.lines.length - 1];
  let snapshotMs = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    // A new record per communicator invalidates every cached evaluation.
    if (fresh !== undefined)
      for (let c = 0; c < 128; c++)
        big.line(fresh.path, fresh.text.replace(one.commId, `0x${(0x1000 + c).toString(16)}`).replace(/"coll_sn":\d+/, `"coll_sn":${1000 + r}`));
    const t0 = process.hrtime.bigint();
    const s = big.snapshot(endMs);
    snapshotMs = Math.min(snapshotMs, Number(process.hrtime.bigint() - t0) / 1e6);
    if (s.comms.length !== 128) throw new Error(`snapshot has ${s.comms.length} comms`);
  }
  return { rows, snapshotMs, feedRecordsPerCoreSecond: 1e9 / feedNs };
}
