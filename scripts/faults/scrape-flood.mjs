#!/usr/bin/env node
// Scrape flood against the built agent: GET /metrics paced at --rate req/s (default 1000) over
// --pool keep-alive connections (16) for --seconds (30), while a simulated job writes
// --lines COLL lines/s (20000) over 16 files. Prints a table; exits 1 when a response failed, a line
// was lost or counted twice, or the agent's RSS went over --max-rss MB (250).
//   npm run build && node scripts/faults/scrape-flood.mjs [--seconds=30] [--rate=1000] [--pool=16] [--lines=20000]
import { importLib, options, reportGoals } from "./compile.mjs";

const o = options();
const { runScrapeFlood, floodTable } = await importLib("flood");
const r = await runScrapeFlood({
  seconds: Number(o.seconds ?? 30),
  rate: Number(o.rate ?? 1000),
  pool: Number(o.pool ?? 16),
  linesPerSecond: Number(o.lines ?? 20000),
});
console.log(floodTable(r));
const maxRss = Number(o["max-rss"] ?? 250);
// Each goal, with what was measured; the memory goal lives here, not in test/faults/scrape-flood.test.ts.
const goals = [
  ["every response a complete 200", r.failed === 0 && r.ok === r.sent, `${r.ok} of ${r.sent}, ${r.failed} failed`],
  ["every line read once", r.linesRead === r.linesInFiles, `${r.linesRead} of ${r.linesInFiles}`],
  ["every collective counted once", r.collCounted === r.collWritten && r.unresolved === 0, `${r.collCounted} of ${r.collWritten}, ${r.unresolved} unresolved`],
  [`RSS max under ${maxRss} MB (--max-rss)`, r.rssMaxMb < maxRss, `${r.rssMaxMb.toFixed(0)} MB`],
];
reportGoals(goals);
