#!/usr/bin/env node
// 10,000 NCCL log files against the built agent (test/faults/lib/many-files.ts): 9,000 at start,
// 1,000 more while it runs, 100 of them appended to, /metrics scraped every 200 ms. Prints what it
// measured and each goal; exits 1 when one is missed.
//   npm run build && node scripts/faults/many-files.mjs [--max-scrape-ms=1000] [--max-rss=400]
import { importLib, options, reportGoals } from "./compile.mjs";

const o = options();
const { runManyFiles, manyFilesSummary, maxScrapeMs, maxRssMb, maxFds, AT_START, LATER } = await importLib("many-files");
const r = await runManyFiles();
console.log(manyFilesSummary(r));
const maxMs = Number(o["max-scrape-ms"] ?? 1000);
const maxRss = Number(o["max-rss"] ?? 400);
const value = (name) => {
  const line = r.final.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};
const goals = [
  [
    "every file followed, every line read",
    r.trackedAfterMs > 0 && value("ringwatch_nccl_log_files") === AT_START + LATER,
    `${value("ringwatch_nccl_log_lines_total")} of ${r.linesWritten} lines, ${value("ringwatch_nccl_log_files")} of ${AT_START + LATER} files`,
  ],
  ["every scrape a 200", r.scrapes.every((s) => s.status === 200), `${r.scrapes.filter((s) => s.status === 200).length} of ${r.scrapes.length}`],
  [`slowest scrape under ${maxMs} ms (--max-scrape-ms)`, maxScrapeMs(r) < maxMs, `${maxScrapeMs(r).toFixed(0)} ms`],
  [`RSS max under ${maxRss} MB (--max-rss)`, maxRssMb(r) < maxRss, `${maxRssMb(r).toFixed(0)} MB`],
  ["descriptors under 200 (none per file)", maxFds(r) < 200, String(maxFds(r))],
];
reportGoals(goals);
