#!/usr/bin/env node
// A job user's flood of empty files in the followed folder (test/faults/lib/file-flood.ts) while
// another user's job hangs. Prints what it measured and each goal; exits 1 when one is missed.
//   npm run build && node scripts/faults/file-flood.mjs [--files=300000] [--max-rss=256] [--max-cpu=25]
import { importLib, options, reportGoals } from "./compile.mjs";

const o = options();
const { runFileFlood, fileFloodSummary } = await importLib("file-flood");
const r = await runFileFlood(Number(o.files ?? 300_000));
console.log(fileFloodSummary(r));
const maxRss = Number(o["max-rss"] ?? 256);
const maxCpu = Number(o["max-cpu"] ?? 25);
const rss = Math.max(...r.proc.map((p) => p.rss)) / (1024 * 1024);
reportGoals([
  ["the legitimate hang is called", r.hangAfterMs > 0, `${r.hangAfterMs} ms`],
  [`RSS max under ${maxRss} MB (--max-rss: the DaemonSet's limit)`, rss < maxRss, `${rss.toFixed(0)} MB`],
  [`CPU under ${maxCpu} % of a core after the flood (--max-cpu)`, r.cpuShare * 100 < maxCpu, `${(r.cpuShare * 100).toFixed(1)} %`],
]);
