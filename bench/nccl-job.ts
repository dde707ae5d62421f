/**
 * The bench's NCCL job: 16 ranks on two 8-GPU nodes in 4 communicators (the world, tensor
 * parallel within each node: tp.0 and tp.1, and a 16-rank data-parallel communicator), rendered
 * by the simulator in test/sim (every line shape copied from a real capture). `prewriteJob`
 * writes each rank's init block plus some COLL lines; `appendColl` appends COLL lines at a steady
 * wall-clock rate, round-robin over the 16 files, the way the bench writer child does.
 */
import { open, mkdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { appendAtRate, CollLineFactory, Scenario, type RateOptions } from "../test/sim/index.js";

export const RANKS = 16;
export const COMMUNICATORS = 4;

export function benchJob(): Scenario {
  return new Scenario({
    seed: 11,
    nodes: ["gpu-node-001", "gpu-node-002"],
    ranksPerNode: 8,
    comms: [
      { name: "tp", groupSize: 8, layout: "contiguous" },
      { name: "dp", groupSize: 16, layout: "strided" },
    ],
  });
}

export interface Written {
  files: number;
  lines: number;
  bytes: number;
}

/** Opens the 16 files (truncating) and writes every rank's init block; returns the handles. */
async function openWithInit(dir: string, sim: Scenario): Promise<{ handles: FileHandle[]; bytes: number }> {
  await mkdir(dir, { recursive: true });
  const init = sim.advanceTo(sim.spec.initMs).byFile;
  const handles: FileHandle[] = [];
  let bytes = 0;
  for (const r of sim.topo.ranks) {
    const fh = await open(join(dir, r.file), "w");
    handles.push(fh);
    const head = `${(init.get(r.file) ?? []).join("\n")}\n`;
    await fh.write(head);
    bytes += Buffer.byteLength(head);
  }
  return { handles, bytes };
}

/** Init blocks plus `collPerFile` COLL lines in every file, written at once. */
export async function prewriteJob(dir: string, collPerFile: number): Promise<Written> {
  const sim = benchJob();
  const { handles, bytes: head } = await openWithInit(dir, sim);
  let bytes = head;
  try {
    for (const [i, fh] of handles.entries()) {
      const f = new CollLineFactory(sim, sim.topo.ranks[i]?.rank ?? i);
      const text = `${Array.from({ length: collPerFile }, () => f.next()).join("\n")}\n`;
      await fh.write(text);
      bytes += Buffer.byteLength(text);
    }
  } finally {
    await Promise.all(handles.map((fh) => fh.close()));
  }
  return { files: handles.length, lines: collPerFile * handles.length, bytes };
}

/**
 * Init blocks, then COLL lines at `linesPerSecond` in total for `seconds` (or until the signal),
 * one write per file every `tickMs`.
 */
export async function writeAtRate(dir: string, o: RateOptions): Promise<Written> {
  const sim = benchJob();
  const { handles, bytes: head } = await openWithInit(dir, sim);
  const factories = sim.topo.ranks.map((r) => new CollLineFactory(sim, r.rank));
  let bytes = head;
  let lines = 0;
  try {
    const w = await appendAtRate(handles, factories, o);
    lines = w.lines;
    bytes += w.bytes;
  } finally {
    await Promise.all(handles.map((fh) => fh.close()));
  }
  return { files: handles.length, lines, bytes };
}
