#!/usr/bin/env node
// Accelerated soak against the built agent: --sim-minutes (60) of jobs starting, ending, rotating
// and deleting their NCCL logs, plus a fast dmon stream and polled tools, in --seconds (300) of
// wall time. Prints a table and each goal; exits 1 when one is missed: RSS grew by 10 % or more from
// the early to the late samples (medians of 30-55 % and 75-100 % of the run: give it several
// minutes, V8 collects its old space about once a minute) or the late median rose 10 % above the
// early peak, descriptors grew, a line was lost or read twice, or a child was left.
//   npm run build && node scripts/faults/soak.mjs [--seconds=300] [--sim-minutes=60]
import { importLib, options, reportGoals } from "./compile.mjs";

const o = options();
const { runSoak, soakTable } = await importLib("soak");
const r = await runSoak({ seconds: Number(o.seconds ?? 300), simMs: Number(o["sim-minutes"] ?? 60) * 60_000 });
console.log(soakTable(r));
// Each goal, with what was measured; the memory goals live here, not in test/faults/soak.test.ts
// (a one-minute run falls on V8's once-a-minute old-space collections).
const goals = [
  [
    "RSS: late median under 1.1 x the early median",
    r.rssGrowth < 0.1,
    `${r.rssLateMb.toFixed(1)} / ${r.rssEarlyMb.toFixed(1)} MB (${(r.rssGrowth * 100).toFixed(1)} %)`,
  ],
  [
    "RSS: late median under 1.1 x the early peak",
    r.rssLateMb < r.rssEarlyMaxMb * 1.1,
    `${r.rssLateMb.toFixed(1)} MB, early peak ${r.rssEarlyMaxMb.toFixed(1)} MB`,
  ],
  ["descriptors: late max <= early max + 5", r.fdsLateMax <= r.fdsEarlyMax + 5, `${r.fdsEarlyMax} -> ${r.fdsLateMax}`],
  ["every line read once", r.linesRead === r.linesWritten, `${r.linesRead} of ${r.linesWritten}`],
  ["no truncation counted (none made)", r.truncations === 0, String(r.truncations)],
  ["follows what is on disk", r.filesFollowedAtEnd === r.filesOnDiskAtEnd, `${r.filesFollowedAtEnd} followed, ${r.filesOnDiskAtEnd} on disk`],
  ["no process left after SIGTERM", r.leftovers.length === 0, `${r.leftovers.length} left`],
  ["SIGTERM: exit 0 within 5 s", r.stop.code === 0 && r.stop.ms < 5000, `exit ${r.stop.code} after ${r.stop.ms} ms`],
];
reportGoals(goals);
