/**
 * (g) PyTorch Flight Recorder: the agent's cost per dump, in process. The two real H100 dumps
 * (test/fixtures/fr/h100-2026-11-24/, ~15 KB each, 2,000-entry buffers holding 83 collectives) are
 * read (readFrDump: pickleparser plus the typed conversion) and analyzed together
 * (analyzeFrDumps), as the live watch and `ringwatch analyze` do. The MB/s rate is the real
 * dumps' bytes over the time to read them. Best of REPEAT passes, ms per dump.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { analyzeFrDumps } from "../collectors/nccl/flight-recorder/analyze.js";
import { readFrDump } from "../collectors/nccl/flight-recorder/read.js";
import type { FrRead } from "../collectors/nccl/flight-recorder/types.js";
import { fixturesDir } from "./paths.js";

export interface FlightRecorderBenchResult {
  /** Mean bytes of one real dump. */
  dumpBytes: number;
  readMsPerDump: number;
  /** Reading rate, MB per second of one core. */
  readMBps: number;
  analyzeMs: number;
}

const REPEAT = 5;

export function runFlightRecorder(passes: number): FlightRecorderBenchResult {
  const dir = join(fixturesDir, "fr/h100-2026-11-24");
  const files = [0, 1].map((r) => ({ name: `nccl_trace_rank_${r}`, bytes: readFileSync(join(dir, `nccl_trace_rank_${r}`)) }));
  const bytes = files.reduce((n, f) => n + f.bytes.length, 0);
  let reads: FrRead[] = [];
  let readMs = Infinity;
  let analyzeMs = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    const t0 = performance.now();
    for (let i = 0; i < passes; i++) reads = files.map((f) => readFrDump(f.bytes, f.name, { entriesPerGroup: 512 }));
    readMs = Math.min(readMs, (performance.now() - t0) / (passes * files.length));
    const t1 = performance.now();
    for (let i = 0; i < passes; i++) analyzeFrDumps(reads);
    analyzeMs = Math.min(analyzeMs, (performance.now() - t1) / passes);
  }
  if (!reads.every((x) => x.ok)) throw new Error("bench: the real dumps could not be read");
  return { dumpBytes: bytes / files.length, readMsPerDump: readMs, readMBps: bytes / files.length / 1e6 / (readMs / 1000), analyzeMs };
}
