/**
 * Ingest throughput: the nccl collector's whole pipeline (follow → split → parse → track) over 16
 * realistic COLL-heavy logs, against `grep -c opCount` on the same files in the same run.
 * Usage (after `npm run build:bench`): node .bench/bench/ingest.js [MB per file]
 */
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { createExec } from "../collectors/exec.js";
import { createNcclCollector } from "../collectors/nccl/collector.js";
import { writeBulk } from "../test/sim/index.js";

export interface IngestResult {
  files: number;
  bytes: number;
  lines: number;
  grepSeconds: number;
  grepMBps: number;
  ingestSeconds: number;
  ingestMBps: number;
  ingestLinesPerSecond: number;
  ratio: number;
}

async function grepSeconds(files: string[]): Promise<number> {
  const exec = createExec();
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const r = await exec.run("grep", ["-c", "opCount", ...files], { timeoutMs: 120_000 });
    if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`grep failed: ${r.problem ?? ""}`);
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

/** The best of 3 in-process reads of the backlog in dir (each file read whole: headBytes > its size). */
export async function ingestSeconds(dir: string, bytes: number): Promise<{ seconds: number; comms: number }> {
  let best = Infinity;
  let comms = 0;
  for (let i = 0; i < 3; i++) {
    const c = createNcclCollector(
      { registry: new Registry(), logger: pino({ level: "silent" }), exec: createExec(), now: Date.now },
      {
        paths: [dir],
        procfsRoot: "/proc",
        hangThresholdMs: 120_000,
        maxComms: 256,
        retireAfterMs: 3_600_000,
        checkPids: false,
        usePolling: false,
        headBytes: bytes + 1,
      },
    );
    const t0 = performance.now();
    await c.once();
    best = Math.min(best, (performance.now() - t0) / 1000);
    comms = c.tracker.comms.size;
  }
  return { seconds: best, comms };
}

export async function runIngest(mbPerFile = 16): Promise<IngestResult> {
  const dir = join(tmpdir(), `ringwatch-bench-ingest-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  const bulk = await writeBulk(dir, { files: 16, bytesPerFile: mbPerFile * 1024 * 1024 });
  try {
    const files = bulk.files.map((f) => (f.startsWith("/") ? f : join(dir, f)));
    const g = await grepSeconds(files);
    const ing = await ingestSeconds(dir, mbPerFile * 1024 * 1024 * 2);
    if (ing.comms === 0) throw new Error("the collector tracked no communicator: the bench input is not being parsed");
    const mb = bulk.bytes / 1e6;
    return {
      files: files.length,
      bytes: bulk.bytes,
      lines: bulk.lines,
      grepSeconds: g,
      grepMBps: mb / g,
      ingestSeconds: ing.seconds,
      ingestMBps: mb / ing.seconds,
      ingestLinesPerSecond: bulk.lines / ing.seconds,
      ratio: g / ing.seconds,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("ingest.js")) {
  const r = await runIngest(Number(process.argv[2] ?? 16));
  console.log(JSON.stringify(r, null, 2));
}
