/**
 * What each COLL matcher costs, measured in one run (docs/performance.md, "The COLL matchers"):
 * - backlog: the nccl collector reads 16 COLL-heavy logs whole, in-process, as the follower's
 *   catch-up reads a backlog (ingest.ts's reader, best of 3 per process), in MB/s;
 * - live: the built agent, nccl collector only, follows 16 files that get 20,000 COLL lines/s
 *   (steady.ts), CPU as a share of one core and per line.
 * Each matcher runs in its own processes, in rotating order, `rounds` times; the table gives the
 * best backlog read and the median live CPU.
 *
 *   npm run build && npm run build:bench && node .bench/bench/coll-matchers.js [rounds] [seconds] [MB per file]
 */
import { spawnSync } from "node:child_process";
import { rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeBulk } from "../test/sim/index.js";
import { benchConfig } from "./config.js";
import { ingestSeconds } from "./ingest.js";
import { repoRoot } from "./paths.js";
import { runSteady } from "./steady.js";

interface Matcher {
  name: string;
  what: string;
  /** node options of the processes that read with it. */
  nodeArgs: string[];
}

const preload = pathToFileURL(join(import.meta.dirname, "parser-only.js")).href;
const benchFileSink = join(repoRoot, ".bench/collectors/nccl/logs/ingest/file-sink.js");

const MATCHERS: Matcher[] = [
  { name: "parser", what: "readable parser only (logs/parse/line.ts)", nodeArgs: ["--import", preload] },
  { name: "fast", what: "fast path on the read buffer (coll-bytes.ts), as shipped", nodeArgs: [] },
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** One backlog read in a fresh process (its own JIT and module state). */
function backlogSeconds(m: Matcher, dir: string, bytes: number): number {
  const r = spawnSync(process.execPath, [...m.nodeArgs, import.meta.filename, "--backlog", dir, String(bytes)], {
    env: { ...process.env, BENCH_FILE_SINK: benchFileSink },
    encoding: "utf8",
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`backlog read (${m.name}) failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout) as { seconds: number; comms: number };
  if (out.comms === 0) throw new Error(`backlog read (${m.name}) tracked no communicator`);
  return out.seconds;
}

async function main(rounds: number, seconds: number, mbPerFile: number): Promise<void> {
  const cfg = benchConfig();
  const dir = join(tmpdir(), `ringwatch-bench-coll-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  console.log(`COLL matchers: ${rounds} rounds; backlog 16 x ${mbPerFile} MB; live 20000 lines/s over 16 files for ${seconds} s; load ${load()}`);
  const backlog = new Map<string, number[]>();
  const live = new Map<string, { pct: number; usPerLine: number; read: number; written: number }[]>();
  let mb = 0;
  let lines = 0;
  try {
    const bulk = await writeBulk(dir, { files: 16, bytesPerFile: mbPerFile * 1024 * 1024 });
    mb = bulk.bytes / 1e6;
    lines = bulk.lines;
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < MATCHERS.length; k++) {
        const m = MATCHERS[(k + r) % MATCHERS.length] as Matcher;
        const s = backlogSeconds(m, dir, mbPerFile * 1024 * 1024 * 2);
        backlog.set(m.name, [...(backlog.get(m.name) ?? []), s]);
        console.log(`  round ${r + 1} backlog ${m.name}: ${(mb / s).toFixed(0)} MB/s`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < MATCHERS.length; k++) {
      const m = MATCHERS[(k + r) % MATCHERS.length] as Matcher;
      const s = await runSteady(20_000, seconds, [...cfg.agentNodeArgs, ...m.nodeArgs]);
      const usPerLine = ((s.cpuPercentOfOneCore / 100) * 1e6) / s.linesPerSecond;
      live.set(m.name, [...(live.get(m.name) ?? []), { pct: s.cpuPercentOfOneCore, usPerLine, read: s.linesRead, written: s.linesWritten }]);
      console.log(
        `  round ${r + 1} live ${m.name}: ${s.cpuPercentOfOneCore.toFixed(2)} % of one core; read ${s.linesRead} of ${s.linesWritten} COLL lines (+ init)`,
      );
    }
  }
  console.log(`load at the end ${load()}\n`);
  console.log("| matcher | backlog, best (median) | live CPU at 20k lines/s, median (min-max) | CPU per line | every line read |");
  console.log("|---|---|---|---|---|");
  for (const m of MATCHERS) {
    const b = backlog.get(m.name) ?? [];
    const l = live.get(m.name) ?? [];
    const pcts = l.map((x) => x.pct);
    const best = Math.min(...b);
    console.log(
      `| ${m.what} | ${(mb / best).toFixed(0)} MB/s (${(mb / median(b)).toFixed(0)}), ${(lines / best / 1e6).toFixed(2)} M lines/s ` +
        `| ${median(pcts).toFixed(2)} % (${Math.min(...pcts).toFixed(2)}-${Math.max(...pcts).toFixed(2)}) ` +
        `| ${median(l.map((x) => x.usPerLine)).toFixed(2)} µs | ${l.every((x) => x.read >= x.written) ? "yes" : "NO"} |`,
    );
  }
}

if (process.argv[2] === "--backlog") {
  console.log(JSON.stringify(await ingestSeconds(process.argv[3] as string, Number(process.argv[4]))));
} else if (process.argv[1]?.endsWith("coll-matchers.js")) {
  await main(Number(process.argv[2] ?? 3), Number(process.argv[3] ?? 20), Number(process.argv[4] ?? 16));
}
