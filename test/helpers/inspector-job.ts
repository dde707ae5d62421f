/**
 * A simulated NCCL job as NCCL Inspector records it, for the inspector tests and the bench: one
 * communicator, one process per local rank, each writing `<host>-pid<pid>.log` through
 * inspector-writer.ts. Deterministic (seeded, test/sim/rng.ts).
 *
 * The timing model is what the plugin measures: every rank's kernel starts when that rank arrives
 * (its arrival = the collective's nominal start + a constant skew + normal jitter + random
 * hiccups + a straggler's delay), data moves once the last rank is in, and each kernel ends a few
 * µs apart after the transfer. The execution time is the kernel's GPU time, cut to whole µs
 * (calculateKernelGpuExecTimeUsecs), and the bandwidths are computed from it as NCCL does.
 * Dumping: "2.30" writes every record (the ring, NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=0);
 * with sampleIntervalUs, only the last collective completed before each dump tick of a rank's
 * dump thread is written (NCCL 2.28-2.29's single slot per communicator).
 */
import { Rng } from "../sim/rng.js";
import { busFactor, inspectorFileName, inspectorLine, trafficBytes, type InspectorFormat } from "./inspector-writer.js";

export interface InspectorJobSpec {
  seed: number;
  nranks: number;
  /** Ranks on this node (whose files are returned); default all. */
  localRanks?: number[];
  nnodes?: number;
  commId?: string;
  commName?: string;
  hostname?: string;
  format?: InspectorFormat;
  /** Collectives simulated. */
  count: number;
  /** Nominal time between two collectives' starts (ms); default 50. */
  gapMs?: number;
  /** Collectives in turn; default one 256 MiB AllReduce. */
  ops?: { op: string; bytes: number }[];
  /** Healthy bus bandwidth (GB/s = 1e9 B/s); default 150. */
  busBwGBs?: number;
  /** Standard deviation of the arrival jitter (ms); default 1. */
  jitterMs?: number;
  /** Each collective, with this probability, one random rank arrives late by U(0, maxMs). */
  hiccups?: { probability: number; maxMs: number };
  /** Constant lateness per rank (ms), a healthy job's small systematic skews. */
  skewMs?: Record<number, number>;
  straggler?: { rank: number; delayMs: number; from?: number };
  /** From collective `from` on, the transfer runs at `factor` x the bandwidth. */
  slowdown?: { from: number; factor: number };
  /** NCCL 2.28-2.29 dumping: the dump thread's interval (µs); default every record is written. */
  sampleIntervalUs?: number;
  /** Epoch µs of the first collective. */
  startUs?: number;
  /** coll_sn of each type's first collective (to continue an earlier run of the same communicator); default 0. */
  firstSn?: number;
  pidBase?: number;
}

export interface InspectorJobLine {
  path: string;
  text: string;
  dumpUs: number;
}

/** What happened in one collective (every rank, local or not): the ground truth the tests compare with. */
export interface InspectorTruth {
  op: string;
  sn: number;
  /** Arrival of each rank (µs), by rank. */
  arriveUs: Float64Array;
}

export interface InspectorJob {
  truth: InspectorTruth[];
  /** Lines per file name, in the order written. */
  files: Map<string, string[]>;
  /** Every line in the order of its dump time. */
  lines: InspectorJobLine[];
  /** The last dump time (µs). */
  endUs: number;
  commId: string;
}

function normal(rng: Rng): number {
  const u = Math.max(rng.next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.next());
}

interface Done {
  sn: number;
  op: string;
  bytes: number;
  execUs: number;
  endUs: number;
}

export function simulateInspectorJob(spec: InspectorJobSpec): InspectorJob {
  const rng = new Rng(spec.seed);
  const n = spec.nranks;
  const local = spec.localRanks ?? Array.from({ length: n }, (_, r) => r);
  const ops = spec.ops ?? [{ op: "AllReduce", bytes: 256 * 2 ** 20 }];
  const gapUs = (spec.gapMs ?? 50) * 1000;
  const busBw = (spec.busBwGBs ?? 150) * 1e9;
  const jitterUs = (spec.jitterMs ?? 1) * 1000;
  const format = spec.format ?? "2.30";
  const hostname = spec.hostname ?? "gpu-node-01";
  const commId = spec.commId ?? rng.commId();
  const startUs = spec.startUs ?? 1_760_000_000_000_000;
  const pid = (r: number): number => (spec.pidBase ?? 41000) + r;
  const seqByOp = new Map<string, number>();
  const prevEnd = new Float64Array(n).fill(-Infinity);
  const done: Done[][] = Array.from({ length: n }, () => []);
  const truth: InspectorTruth[] = [];

  for (let c = 0; c < spec.count; c++) {
    const { op, bytes } = ops[c % ops.length] ?? { op: "AllReduce", bytes: 0 };
    const sn = seqByOp.get(op) ?? spec.firstSn ?? 0;
    seqByOp.set(op, sn + 1);
    const nominal = startUs + c * gapUs;
    const arrive = new Float64Array(n);
    const hiccupRank = spec.hiccups && rng.next() < spec.hiccups.probability ? rng.int(0, n - 1) : -1;
    const hiccupUs = spec.hiccups ? rng.next() * spec.hiccups.maxMs * 1000 : 0;
    for (let r = 0; r < n; r++) {
      let a = nominal + (spec.skewMs?.[r] ?? 0) * 1000 + normal(rng) * jitterUs;
      if (r === hiccupRank) a += hiccupUs;
      const s = spec.straggler;
      if (s && r === s.rank && c >= (s.from ?? 0)) a += s.delayMs * 1000;
      arrive[r] = Math.max(a, (prevEnd[r] as number) + 2);
    }
    truth.push({ op, sn, arriveUs: arrive });
    const factor = spec.slowdown && c >= spec.slowdown.from ? spec.slowdown.factor : 1;
    const transferUs = ((trafficBytes(op, bytes, n) * busFactor(op, n)) / (busBw * factor)) * 1e6;
    let last = -Infinity;
    for (let r = 0; r < n; r++) last = Math.max(last, arrive[r] as number);
    for (let r = 0; r < n; r++) {
      const end = last + transferUs + 3 + rng.next() * 8;
      prevEnd[r] = end;
      done[r]?.push({ sn, op, bytes, execUs: Math.floor(end - (arrive[r] as number)), endUs: end });
    }
  }

  const files = new Map<string, string[]>();
  const lines: InspectorJobLine[] = [];
  for (const r of local) {
    const path = inspectorFileName(hostname, pid(r));
    const out: string[] = [];
    files.set(path, out);
    const write = (d: Done, dumpUs: number): void => {
      const text = inspectorLine(
        {
          commId,
          commName: spec.commName ?? "unknown",
          rank: r,
          nranks: n,
          nnodes: spec.nnodes ?? 1,
          dumpUs: Math.floor(dumpUs),
          hostname,
          pid: pid(r),
          op: d.op,
          sn: d.sn,
          msgBytes: d.bytes,
          execUs: d.execUs,
        },
        format,
      );
      out.push(text);
      lines.push({ path, text, dumpUs: Math.floor(dumpUs) });
    };
    const mine = done[r] ?? [];
    if (spec.sampleIntervalUs === undefined) {
      for (const d of mine) write(d, d.endUs + 1 + rng.next() * 200);
      continue;
    }
    // One slot per communicator: each tick writes the latest completion since the previous tick.
    const iv = spec.sampleIntervalUs;
    let tick = startUs + rng.next() * iv;
    let i = 0;
    const lastEnd = mine.length > 0 ? (mine[mine.length - 1] as Done).endUs : startUs;
    while (i < mine.length && tick <= lastEnd + iv) {
      let latest: Done | undefined;
      while (i < mine.length && (mine[i] as Done).endUs <= tick) latest = mine[i++];
      if (latest !== undefined) write(latest, tick);
      tick += iv;
    }
  }
  lines.sort((a, b) => a.dumpUs - b.dumpUs);
  const endUs = lines.length > 0 ? (lines[lines.length - 1] as InspectorJobLine).dumpUs : startUs;
  return { truth, files, lines, endUs, commId };
}
