/**
 * `ringwatch analyze` (the built agent) on each hostile Flight Recorder dump (test/fakes/fr-big-dump.py)
 * beside the real H100 dumps: it refuses the hostile one with one stderr line and a finding, still
 * gives the real dumps' verdict, exits 0, in bounded time and memory. Before each dump had a budget,
 * the rank-list dump took 88 s, 4.25 GB and ended in an abort with no verdict; the entry dump 7.4 s
 * and 1.47 GB. The peak RSS is the process's own (VmHWM, written at exit by a preloaded hook).
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { agentMain } from "../helpers/agent-process.js";
import { writeBigDump, type BigDumpKind } from "../helpers/fr-big-dumps.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { hasPython } from "../helpers/fr-dumps.js";
import { runProcess } from "../helpers/run-process.js";
import { tempDir } from "./env.js";

const H100 = join(fixturesDir, "fr/h100-2026-11-24");
const run = hasPython() || process.env.CI ? describe : describe.skip;

/** Writes the peak RSS (kB) of the process it is preloaded in to $RW_HWM_FILE when it exits. */
const HWM_HOOK = `data:text/javascript,${encodeURIComponent(
  'import { readFileSync, writeFileSync } from "node:fs"; process.on("exit", () => writeFileSync(process.env.RW_HWM_FILE, /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]));',
)}`;

/** `ringwatch analyze --json dir`, with its wall time and peak RSS. */
async function analyze(dir: string): Promise<{ code: number | null; stderr: string; report: Report; seconds: number; peakMb: number }> {
  const hwm = join(tempDir(), "hwm");
  const t0 = Date.now();
  const r = await runProcess(process.execPath, ["--import", HWM_HOOK, agentMain, "analyze", "--json", dir], {
    env: { ...process.env, RW_HWM_FILE: hwm },
    timeoutMs: 60_000,
    what: "ringwatch analyze",
  });
  const seconds = (Date.now() - t0) / 1000;
  return { code: r.code, stderr: r.stderr, report: JSON.parse(r.stdout) as Report, seconds, peakMb: Number(readFileSync(hwm, "utf8")) / 1024 };
}

const HOSTILE: { kind: BigDumpKind; rank: number; error: string }[] = [
  { kind: "shared-ranks", rank: 2, error: "too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)" },
  { kind: "shared-entry", rank: 3, error: "too large: tensor sizes over budget (more than 4,194,304 tensors and dimensions)" },
];

run("ringwatch analyze on a hostile Flight Recorder dump beside real ones", () => {
  for (const h of HOSTILE) {
    it(`${h.kind}: one stderr line, a dump_unreadable finding, the real dumps' verdict; exit 0 in seconds, under 300 MB`, async () => {
      const dir = tempDir();
      for (const r of [0, 1]) copyFileSync(join(H100, `nccl_trace_rank_${r}`), join(dir, `nccl_trace_rank_${r}`));
      const hostile = join(dir, `nccl_trace_rank_${h.rank}`);
      writeBigDump(h.kind, hostile, { rank: h.rank });
      const r = await analyze(dir);
      expect(r.code).toBe(0);
      expect(r.stderr.trim().split("\n")).toEqual([`ringwatch: analyze: ${hostile}: not a readable Flight Recorder dump: ${h.error}`]);
      expect(r.report.findings.map((f) => [f.kind, f.ranks])).toEqual([
        ["rank_behind", [1]],
        ["dump_unreadable", [h.rank]],
      ]);
      expect(r.report.findings[0]).toMatchObject({ seq: 82, op: "all_reduce", waiting_ranks: [0], process_group: "0 (default_pg)" });
      expect(r.report.findings[1]?.summary).toContain(`could not be read: ${h.error}`);
      // Measured: about 1 s and 105-110 MB each (the agent alone, reading the two real dumps: about 80 MB).
      expect(r.seconds).toBeLessThan(15);
      expect(r.peakMb).toBeLessThan(300);
      process.stdout.write(`analyze ${h.kind}: ${r.seconds.toFixed(2)} s, peak RSS ${r.peakMb.toFixed(0)} MB\n`);
    });
  }
});
