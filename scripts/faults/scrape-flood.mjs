#!/usr/bin/env node
// Scrape flood against the built agent: GET /metrics paced at --rate req/s (default 1000) over
// --pool keep-alive connections (16) for --seconds (30), while a simulated job writes
// --lines COLL lines/s (20000) over 16 files. Prints a table; exits 1 when a response failed, a line
// was lost or counted twice, or the agent's RSS went over --max-rss MB (250).
//   npm run build && node scripts/faults/scrape-flood.mjs [--seconds=30] [--rate=1000] [--pool=16] [--lines=20000]
import { importLib, options } from "./compile.mjs";

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
const problems = [];
if (r.failed > 0 || r.ok !== r.sent) problems.push(`${r.failed} failed responses`);
if (r.linesRead !== r.linesInFiles) problems.push(`read ${r.linesRead} of ${r.linesInFiles} lines`);
if (r.collCounted !== r.collWritten) problems.push(`counted ${r.collCounted} of ${r.collWritten} collectives`);
if (r.unresolved !== 0) problems.push(`${r.unresolved} unresolved collectives`);
if (r.rssMaxMb >= maxRss) problems.push(`RSS reached ${r.rssMaxMb.toFixed(0)} MB (limit ${maxRss})`);
console.log(problems.length ? `FAIL: ${problems.join("; ")}` : "PASS");
process.exit(problems.length ? 1 : 0);
