#!/usr/bin/env node
// Accelerated soak against the built agent: --sim-minutes (60) of jobs starting, ending, rotating
// and deleting their NCCL logs, plus a fast dmon stream and polled tools, in --seconds (300) of
// wall time. Prints a table; exits 1 when RSS grew by 10 % or more from the early to the late
// samples (medians of 30-55 % and 75-100 % of the run: give it several minutes, V8
// collects its old space about once a minute), descriptors grew, a line was lost, or a child was left.
//   npm run build && node scripts/faults/soak.mjs [--seconds=300] [--sim-minutes=60]
import { importLib, options } from "./compile.mjs";

const o = options();
const { runSoak, soakTable } = await importLib("soak");
const r = await runSoak({ seconds: Number(o.seconds ?? 300), simMs: Number(o["sim-minutes"] ?? 60) * 60_000 });
console.log(soakTable(r));
const problems = [];
if (r.rssGrowth >= 0.1) problems.push(`RSS grew ${(r.rssGrowth * 100).toFixed(1)} %`);
if (r.fdsLateMax > r.fdsEarlyMax + 5) problems.push(`descriptors grew from ${r.fdsEarlyMax} to ${r.fdsLateMax}`);
if (r.linesRead !== r.linesWritten) problems.push(`read ${r.linesRead} of ${r.linesWritten} lines`);
if (r.filesFollowedAtEnd !== r.filesOnDiskAtEnd) problems.push(`follows ${r.filesFollowedAtEnd} files, ${r.filesOnDiskAtEnd} on disk`);
if (r.leftovers.length > 0) problems.push(`${r.leftovers.length} processes left after SIGTERM`);
if (r.stop.code !== 0 || r.stop.ms >= 5000) problems.push(`SIGTERM: exit ${r.stop.code} after ${r.stop.ms} ms`);
console.log(problems.length ? `FAIL: ${problems.join("; ")}` : "PASS");
process.exit(problems.length ? 1 : 0);
