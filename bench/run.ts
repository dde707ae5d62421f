/**
 * `npm run bench`: the NCCL ingest and steady-state figures, printed as a table and written to
 * bench/out/results.json. Goals (issue 3): ingest >= 0.25 x `grep -c opCount` on the same files;
 * < 5 % of one core at 20,000 COLL lines/s over 16 files.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { runIngest } from "./ingest.js";
import { runSteady } from "./steady.js";

const mb = Number(process.env.BENCH_MB_PER_FILE ?? 16);
const seconds = Number(process.env.BENCH_STEADY_SECONDS ?? 20);
const ingest = await runIngest(mb);
const steady = await runSteady(20_000, seconds);
const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? "?", node: process.versions.node, loadavg: loadavg().map((x) => Number(x.toFixed(2))) };

const rows: [string, string, string, string][] = [
  ["NCCL ingest (follow+parse+track)", `${ingest.ingestMBps.toFixed(0)} MB/s, ${(ingest.ingestLinesPerSecond / 1e6).toFixed(2)} M lines/s`, `grep -c opCount: ${ingest.grepMBps.toFixed(0)} MB/s`, `ratio ${ingest.ratio.toFixed(3)} (goal >= 0.25)`],
  ["Steady 20k COLL lines/s, 16 files", `${steady.cpuPercentOfOneCore.toFixed(1)} % of one core`, `RSS ${steady.rssMB.toFixed(0)} MB`, `goal < 5 %; read ${steady.linesRead}/${steady.linesWritten}+init lines`],
];
const w = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
console.log(`ringwatch bench — ${machine.cpus} x ${machine.model}, node ${machine.node}, load ${machine.loadavg.join(" ")}`);
for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i] ?? 0)).join("  |  "));
const out = resolve(import.meta.dirname, "../../bench/out");
await mkdir(out, { recursive: true });
await writeFile(join(out, "results.json"), JSON.stringify({ at: new Date().toISOString(), machine, ingest, steady }, null, 2) + "\n");
console.log(`written to ${join(out, "results.json")}`);
