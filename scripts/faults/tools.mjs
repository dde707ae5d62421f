#!/usr/bin/env node
// Misbehaving tools against the built agent (test/faults/lib/tool-faults.ts, the scenario of
// test/faults/tools-*.test.ts): per fault mode, one agent whose dmon, ibstat, lsmod and ip misbehave
// (set A) and one whose --query-gpu and perfquery do (set B), next to a clean agent. Prints each
// agent's resident memory and children, each against its goal; exits 1 when one went over --max-rss MB (200).
//   npm run build && node scripts/faults/tools.mjs [--modes=flood,flood-noline] [--window-ms=7000] [--max-rss=200]
import { importLib, options, reportGoals } from "./compile.mjs";

const o = options();
const { runToolFaults } = await importLib("tool-faults");
const { FAULT_MODES } = await importLib("tool-rig");
const modes = o.modes ? o.modes.split(",") : [...FAULT_MODES];
const unknown = modes.filter((m) => !FAULT_MODES.includes(m));
if (unknown.length) {
  console.error(`unknown mode ${unknown.join(", ")} (one of ${FAULT_MODES.join(", ")})`);
  process.exit(2);
}
const maxRss = Number(o["max-rss"] ?? 200);
const run = await runToolFaults(modes, Number(o["window-ms"] ?? 7000));
const MiB = 1024 * 1024;
reportGoals(
  run.runs.map((r) => {
    const rss = Math.max(...r.proc.map((p) => p.rss)) / MiB;
    const children = Math.max(...r.proc.map((p) => p.children));
    return [`${r.mode} set ${r.set}: RSS max under ${maxRss} MB (--max-rss)`, rss < maxRss, `${rss.toFixed(0)} MB, ${children} children at most`];
  }),
);
