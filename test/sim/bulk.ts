/**
 * Benchmark data: `writeBulk` writes COLL-heavy logs of a given size quickly (hundreds of MB),
 * `collLineRate` appends COLL lines at a steady rate in real time. Both start every file with the
 * rank's real init block and then repeat the healthy step plan, with opCounts as the version
 * prints them; lines are formatted from precomputed halves, so only the opCount is formatted.
 */
import { open, mkdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { collParts, opCountAdvances, type CollParts } from "./coll.js";
import { Scenario } from "./scenario.js";
import type { JobSpec } from "./spec.js";

export interface BulkJob {
  /** Number of files (= processes = ranks); default 16. */
  files?: number;
  /** Ranks per node; default min(8, files). `files` must be a multiple. */
  ranksPerNode?: number;
  seed?: number;
  ncclVersion?: string;
}

/** Healthy 2-level job (TP groups of 2, DP across) sized for `files` ranks. */
export function bulkScenario(o: BulkJob): Scenario {
  const files = o.files ?? 16;
  const rpn = o.ranksPerNode ?? Math.min(8, files);
  if (files % rpn !== 0) throw new Error(`files (${files}) must be a multiple of ranksPerNode (${rpn})`);
  const nodes = Array.from({ length: files / rpn }, (_, i) => `gpu-node-${String(i + 1).padStart(3, "0")}`);
  const comms: JobSpec["comms"] =
    files >= 4 && files % 2 === 0
      ? [
          { name: "tp", groupSize: 2, layout: "contiguous" },
          { name: "dp", groupSize: files / 2, layout: "strided" },
        ]
      : [];
  return new Scenario({ seed: o.seed ?? 7, nodes, ranksPerNode: rpn, comms, ...(o.ncclVersion === undefined ? {} : { ncclVersion: o.ncclVersion }) });
}

/** Endless COLL lines of one rank following the scenario's plan. */
export class CollLineFactory {
  private step = 0;
  private k = 0;
  private readonly opCount = new Map<string, number>();
  private readonly cache = new Map<string, CollParts>();

  constructor(
    private readonly sim: Scenario,
    readonly rank: number,
  ) {}

  next(): string {
    let ops = this.sim.plan(this.step);
    if (this.k >= ops.length) {
      this.step++;
      this.k = 0;
      ops = this.sim.plan(this.step);
    }
    const op = ops[this.k];
    if (op === undefined) throw new Error("empty step plan");
    const comm = this.sim.topo.commOf(this.rank, op.comm);
    const key = `${this.k}/${op.comm}/${op.op}/${op.count}`;
    let parts = this.cache.get(key);
    if (parts === undefined) {
      parts = collParts(this.sim.topo.rank(this.rank), comm, op.op, op.count, op.datatype, op.root ?? 0, this.k);
      this.cache.set(key, parts);
    }
    const oc = this.opCount.get(comm.name) ?? 0;
    if (opCountAdvances(this.sim.spec.traits, comm)) this.opCount.set(comm.name, oc + 1);
    this.k++;
    return parts.head + oc.toString(16) + parts.tail;
  }
}

/** Init block of every file (lines up to the end of init), keyed by file name. */
function initBlocks(sim: Scenario): Map<string, string> {
  const res = sim.advanceTo(sim.spec.initMs);
  const out = new Map<string, string>();
  for (const [file, lines] of res.byFile) out.set(file, `${lines.join("\n")}\n`);
  return out;
}

export interface BulkResult {
  files: string[];
  lines: number;
  bytes: number;
}

/** Writes `files` logs of about `bytesPerFile` each (init block + COLL lines). */
export async function writeBulk(dir: string, o: BulkJob & { bytesPerFile: number }): Promise<BulkResult> {
  const sim = bulkScenario(o);
  await mkdir(dir, { recursive: true });
  const init = initBlocks(sim);
  let lines = 0;
  let bytes = 0;
  for (const r of sim.topo.ranks) {
    const fh = await open(join(dir, r.file), "w");
    try {
      let written = 0;
      const head = init.get(r.file) ?? "";
      await fh.write(head);
      written += Buffer.byteLength(head);
      const f = new CollLineFactory(sim, r.rank);
      while (written < o.bytesPerFile) {
        const chunk: string[] = [];
        let size = 0;
        while (size < 1 << 20 && written + size < o.bytesPerFile) {
          const l = f.next();
          chunk.push(l);
          size += l.length + 1;
        }
        const text = `${chunk.join("\n")}\n`;
        await fh.write(text);
        written += size;
        lines += chunk.length;
      }
      bytes += written;
    } finally {
      await fh.close();
    }
  }
  return { files: sim.topo.ranks.map((r) => join(dir, r.file)), lines, bytes };
}

/**
 * Writes the init blocks, then appends COLL lines round-robin over the files at `linesPerSecond`
 * (wall clock) for `seconds`, in ticks of `tickMs`. Resolves with what was written.
 */
export async function collLineRate(dir: string, o: BulkJob & RateOptions): Promise<BulkResult> {
  const sim = bulkScenario(o);
  await mkdir(dir, { recursive: true });
  const init = initBlocks(sim);
  const handles: FileHandle[] = [];
  const factories = sim.topo.ranks.map((r) => new CollLineFactory(sim, r.rank));
  let lines = 0;
  let bytes = 0;
  try {
    for (const r of sim.topo.ranks) {
      const fh = await open(join(dir, r.file), "w");
      handles.push(fh);
      const head = init.get(r.file) ?? "";
      await fh.write(head);
      bytes += Buffer.byteLength(head);
    }
    const w = await appendAtRate(handles, factories, o);
    lines += w.lines;
    bytes += w.bytes;
  } finally {
    await Promise.all(handles.map((fh) => fh.close()));
  }
  return { files: sim.topo.ranks.map((r) => join(dir, r.file)), lines, bytes };
}

/** How fast, how long, and how often appendAtRate writes. */
export interface RateOptions {
  linesPerSecond: number;
  seconds: number;
  tickMs?: number;
  signal?: AbortSignal;
}

/**
 * Appends COLL lines from `factories[i]` to `handles[i]` round-robin at `linesPerSecond` (wall
 * clock) for `seconds` or until the signal, one write per file every `tickMs`. Returns what it wrote.
 */
export async function appendAtRate(
  handles: readonly FileHandle[],
  factories: readonly CollLineFactory[],
  o: RateOptions,
): Promise<{ lines: number; bytes: number }> {
  const start = performance.now();
  const total = Math.round(o.linesPerSecond * o.seconds);
  let lines = 0;
  let bytes = 0;
  let next = 0;
  while (lines < total && o.signal?.aborted !== true) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * o.linesPerSecond));
    const per = handles.map((): string[] => []);
    for (; lines < due; lines++, next = (next + 1) % handles.length) per[next]?.push(factories[next]?.next() ?? "");
    await Promise.all(
      handles.map(async (fh, i) => {
        const batch = per[i] ?? [];
        if (batch.length === 0) return;
        const text = `${batch.join("\n")}\n`;
        bytes += Buffer.byteLength(text);
        await fh.write(text);
      }),
    );
    if (lines >= total) break;
    try {
      await sleep(o.tickMs ?? 50, undefined, o.signal === undefined ? {} : { signal: o.signal });
    } catch {
      break;
    }
  }
  return { lines, bytes };
}
