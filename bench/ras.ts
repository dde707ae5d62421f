/**
 * Production mode's cost on the agent's side and its speed: agent CPU per NCCL RAS query (a
 * refused connection, a 16-rank and a 1,024-rank JSON report, a 16-rank text report: query, parse,
 * compare), against test/fakes/nccl-ras --job (NCCL's own forms); and the wall time from a stall to
 * the verdict with a short threshold and interval, in real time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { queryRas } from "../collectors/nccl/ras/client.js";
import { observe } from "../collectors/nccl/ras/progress.js";
import { RasWatch, reportOf } from "../collectors/nccl/ras/watch.js";
import { rasVerdicts } from "../collectors/nccl/ras/verdict.js";
import type { RasJob } from "../test/fakes/ras/render.mjs";
import { stubRasNode } from "../test/helpers/ras-node.js";
import { closedPort, startRasJob, type RasService } from "../test/helpers/ras-process.js";

export interface RasBenchRow {
  what: string;
  cpuMsPerQuery: number;
  wallMsPerQuery: number;
  bytes: number;
}

export interface RasBenchResult {
  rows: RasBenchRow[];
  /** Stall to verdict (ms), with the threshold and interval it ran with. */
  stallToVerdictMs: number;
  thresholdMs: number;
  intervalMs: number;
}

function job(version: string, ranks: number, behind: number | undefined, top: number): RasJob {
  return {
    version,
    comms: [
      {
        hash: "0x49bbd7790311d5eb",
        size: ranks,
        ranks: Array.from({ length: ranks }, (_, r) => ({
          rank: r,
          host: `10.0.${Math.floor(r / 8 / 250)}.${1 + (Math.floor(r / 8) % 250)}`,
          pid: 4000 + r,
          cudaDev: r % 8,
          nvmlDev: r % 8,
          counts: { Broadcast: 1, Reduce: 0, AllGather: 3, ReduceScatter: 0, AllReduce: r === behind ? top - 1 : top },
        })),
      },
    ],
  };
}

async function measure(what: string, port: number, n: number): Promise<RasBenchRow> {
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await queryRas({ host: "127.0.0.1", port, legTimeoutSeconds: 5, deadlineMs: 10_000, maxBytes: 64 * 1024 * 1024, json: true });
    if (r.ok) {
      bytes = r.text.length;
      const report = reportOf(r.text, r.format);
      if (report !== undefined) observe(report);
    }
  }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { what, cpuMsPerQuery: (c.user + c.system) / 1000 / n, wallMsPerQuery: wall / n, bytes };
}

export async function runRas(queries: number): Promise<RasBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "rw-bench-ras-"));
  const fakes: RasService[] = [];
  try {
    const rows: RasBenchRow[] = [];
    rows.push(await measure("refused (no job)", await closedPort(), queries * 5));
    for (const [what, version, ranks] of [
      ["16 ranks, JSON (2.29.7)", "2.29.7", 16],
      ["1,024 ranks, JSON (2.29.7)", "2.29.7", 1024],
      ["16 ranks, text (2.26.2)", "2.26.2", 16],
    ] as const) {
      const f = await startRasJob(mkdtempSync(join(dir, "job-")), job(version, ranks, 5, 40));
      fakes.push(f);
      rows.push(await measure(what, f.port, ranks > 100 ? Math.max(5, Math.floor(queries / 10)) : queries));
    }
    // Stall to verdict in real time: the job stands still from the start; threshold 2 s, interval 1 s.
    const f = await startRasJob(mkdtempSync(join(dir, "job-")), job("2.29.7", 16, 5, 40));
    fakes.push(f);
    const thresholdMs = 2_000;
    const intervalMs = 1_000;
    const w = new RasWatch({
      address: { host: "127.0.0.1", port: f.port },
      intervalMs,
      now: Date.now,
      log: pino({ level: "silent" }),
      progress: { hangThresholdMs: thresholdMs, gapFactor: 2, maxThresholdMs: 60_000 },
    });
    const node = stubRasNode(["10.0.0.1"], { rasIsLocal: true });
    const t0 = Date.now();
    let stallToVerdictMs = Number.NaN;
    while (Date.now() - t0 < 20_000) {
      w.tick();
      await w.settled();
      if (rasVerdicts(w.snapshot().progress, node).some((v) => v.hang)) {
        stallToVerdictMs = Date.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await w.close();
    return { rows, stallToVerdictMs, thresholdMs, intervalMs };
  } finally {
    await Promise.all(fakes.map((f) => f.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
