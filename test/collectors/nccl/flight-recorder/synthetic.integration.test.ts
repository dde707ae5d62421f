/**
 * Jobs of 8 to 16 ranks whose Flight Recorder dumps Python's pickle writes (test/fakes/fr-dump.py)
 * with the schema of the real H100 dumps: a rank behind, a mismatch of each class torchfrtrace
 * knows (collective type, size, dtype, state), a rank without a dump, a rank that did not complete
 * what every rank enqueued, a 1.x dump, and a healthy job that gives no finding.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LogAnalysis } from "../../../../collectors/nccl/analyze/analyze.js";
import type { Finding, Report } from "../../../../collectors/nccl/verdict/report.js";
import { unpickle } from "../../../../collectors/nccl/flight-recorder/unpickle.js";
import { fixturesDir } from "../../../helpers/fixtures.js";
import { TRAIN_FRAMES, hasPython, ranksUpTo, writeDumps, writeJob, type FakeGroup, type FakeRank } from "../../../helpers/fr-dumps.js";
import { tempDir } from "../../../helpers/temp-dir.js";

const run = hasPython() || process.env.CI ? describe : describe.skip;

const WORLD16: FakeGroup = { name: "0", desc: "default_pg", ranks: ranksUpTo(16), pgId: 0 };
const world = (n: number): FakeGroup => ({ name: "0", desc: "default_pg", ranks: ranksUpTo(n), pgId: 0 });

/** Every dump in `dir`, read as `ringwatch analyze` reads them. */
function analyzeDir(dir: string): Report {
  const a = new LogAnalysis();
  for (const f of readdirSync(dir).sort()) a.flightRecorderDump(f, readFileSync(join(dir, f)));
  return a.report();
}

const brief = (f: Finding): unknown[] => [f.kind, f.severity, f.ranks, f.seq, f.op];

/** `n` ranks that all enqueued `enq` collectives and completed `done`, timing on; `edit` changes one rank. */
function job(n: number, enq: number, done: number, edit: (r: FakeRank) => void = () => undefined): FakeRank[] {
  const g = world(n);
  return ranksUpTo(n).map((rank) => {
    const r: FakeRank = { rank, groups: [{ group: g, enqueued: enq, completed: done, timing: true }] };
    edit(r);
    return r;
  });
}

const GATHER_FRAMES = [{ name: "all_gather_into_tensor", filename: TRAIN_FRAMES[0]?.filename ?? "", line: 4186 }, ...TRAIN_FRAMES.slice(1)];

run("Flight Recorder dumps written by Python's pickle", () => {
  it("have the real dumps' schema: the same keys, in the same order, at every level", () => {
    const dir = tempDir();
    writeJob(dir, job(2, 83, 81));
    const keys = (path: string): unknown => {
      const r = unpickle(readFileSync(path));
      if (!r.ok) throw new Error(r.error);
      const root = r.value as Map<string, unknown>;
      const entry = (root.get("entries") as Map<string, unknown>[])[0] as Map<string, unknown>;
      const config = [...(root.get("pg_config") as Map<string, Map<string, unknown>>).values()][0];
      const status = [...(root.get("pg_status") as Map<string, Map<string, unknown>>).values()][0];
      const frame = (entry.get("frames") as Map<string, unknown>[])[0];
      return {
        root: [...root.keys()],
        entry: [...entry.keys()],
        config: [...(config?.keys() ?? [])],
        status: [...(status?.keys() ?? [])],
        frame: [...(frame?.keys() ?? [])],
      };
    };
    expect(keys(join(dir, "nccl_trace_rank_0"))).toEqual(keys(join(fixturesDir, "fr/h100-2026-11-24/nccl_trace_rank_0")));
    expect(readFileSync(join(dir, "nccl_trace_rank_0")).subarray(0, 2)).toEqual(Buffer.from([0x80, 0x02])); // protocol 2, as PyTorch's
  });

  it("16 ranks, two groups: rank 11 never enqueued #1001 of the default group, the 15 others wait in it", () => {
    const dir = tempDir();
    const tp: FakeGroup = { name: "1", desc: "tp", ranks: [8, 9, 10, 11, 12, 13, 14, 15], pgId: 1 };
    writeJob(
      dir,
      ranksUpTo(16).map((rank) => ({
        rank,
        buffer: 600,
        groups: [
          { group: WORLD16, enqueued: rank === 11 ? 1000 : 1001, completed: 1000 },
          ...(rank >= 8 ? [{ group: tp, enqueued: 250, completed: 250 }] : []),
        ],
      })),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["rank_behind", "critical", [11], 1001, "all_reduce"]]);
    const f = r.findings[0];
    expect(f?.waiting_ranks).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]);
    expect(f?.process_group).toBe("0 (default_pg)");
    expect(f?.stacks).toHaveLength(1);
    expect(f?.stacks?.[0]?.ranks).toHaveLength(15);
    expect(f?.stacks?.[0]?.frames.map((x) => `${x.file}:${x.line} ${x.function}`)).toEqual(TRAIN_FRAMES.map((x) => `${x.filename}:${x.line} ${x.name}`));
    expect(f?.summary).toContain(
      "rank 11 enqueued collectives only up to #1000 while ranks 0-10,12-15 reached #1001: rank 11 never enqueued collective #1001 (all_reduce)",
    );
    expect(f?.summary).toContain("(called from /opt/job/train.py:41)");
    expect(r.process_groups.map((g) => [g.process_group, g.desc, g.size, g.ranks.length])).toEqual([
      ["0", "default_pg", 16, 16],
      ["1", "tp", 8, 8],
    ]);
    expect(r.process_groups[0]?.ranks[11]).toMatchObject({ rank: 11, last_enqueued: 1000, last_completed: 1000, last_started: null });
    expect(r.process_groups[1]?.ranks.every((x) => x.last_enqueued === 250 && x.last_completed === 250)).toBe(true);
  });

  it("8 ranks, collective type: rank 3 issued _all_gather_base at #50 where the others issued all_reduce", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(8, 50, 49, (r) => {
        if (r.rank === 3) {
          const g = r.groups[0];
          if (g) g.calls = { 50: { profilingName: "nccl:_all_gather_base", outputSizes: [[8388608]], frames: GATHER_FRAMES } };
        }
      }),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["collective_mismatch", "critical", [3], 50, "all_reduce"]]);
    const f = r.findings[0];
    expect(f).toMatchObject({ mismatch: "op", expected: "all_reduce", found: "_all_gather_base", other_op: "_all_gather_base" });
    expect(f?.summary).toBe(
      "Flight Recorder, process group 0 (default_pg), collective #50: rank 3 issued _all_gather_base where ranks 0-2,4-7 issued all_reduce (collective type mismatch). The ranks' code took different paths: compare the stacks.",
    );
    expect(f?.stacks?.map((s) => [s.ranks, s.frames[0]?.function])).toEqual([
      [[3], "all_gather_into_tensor"],
      [[0, 1, 2, 4, 5, 6, 7], "all_reduce"],
    ]);
  });

  it("8 ranks, size: rank 5 reduced 524,288 elements where the others reduced 1,048,576", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(8, 50, 49, (r) => {
        const g = r.groups[0];
        if (r.rank === 5 && g) g.calls = { 50: { inputSizes: [[524288]] } };
      }),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["collective_mismatch", "critical", [5], 50, "all_reduce"]]);
    expect(r.findings[0]).toMatchObject({ mismatch: "size", expected: "input [[1048576]] output [[1048576]]", found: "input [[524288]] output [[524288]]" });
  });

  it("8 ranks, dtype: rank 2 reduced BFloat16 where the others reduced Float", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(8, 50, 49, (r) => {
        const g = r.groups[0];
        if (r.rank === 2 && g) g.calls = { 50: { dtype: "BFloat16" } };
      }),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["collective_mismatch", "critical", [2], 50, "all_reduce"]]);
    expect(r.findings[0]).toMatchObject({ mismatch: "dtype", expected: "input Float output Float", found: "input BFloat16 output BFloat16" });
  });

  it("12 ranks, state: every rank entered #70 and none finished, rank 9's kernel never started", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(12, 70, 69, (r) => {
        const g = r.groups[0];
        if (r.rank === 9 && g) g.calls = { 70: { state: "scheduled" } };
      }),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([
      ["hang_suspected", "critical", ranksUpTo(12), 70, "all_reduce"],
      ["collective_mismatch", "warning", [9], 70, "all_reduce"],
    ]);
    expect(r.findings[0]?.summary).toContain("(11 started, 1 scheduled)");
    expect(r.findings[0]?.timeout_ms).toBe(100000);
    expect(r.findings[1]).toMatchObject({ mismatch: "state", expected: "started", found: "scheduled" });
    expect(r.findings[1]?.summary).toContain(
      "rank 9 is scheduled in all_reduce while ranks 0-8,10,11 are started (state mismatch). Its kernel has not started",
    );
  });

  it("16 ranks, no dump from rank 6: the 15 others wait in #40, rank 6 is the one to look at", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(16, 40, 39).filter((r) => r.rank !== 6),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["rank_missing", "critical", [6], 40, "all_reduce"]]);
    expect(r.findings[0]).toMatchObject({ count: 1, waiting_ranks: [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15] });
    expect(r.findings[0]?.summary).toContain(
      "process group 0 (default_pg) (16 ranks): no dump from rank 6, while all 15 ranks with a dump wait in collective #40 (all_reduce)",
    );
    expect(r.process_groups[0]?.missing_ranks).toEqual([6]);
  });

  it("8 ranks, every rank enqueued #60, rank 7 alone did not complete it", () => {
    const dir = tempDir();
    writeJob(
      dir,
      job(8, 60, 60, (r) => {
        const g = r.groups[0];
        if (r.rank === 7 && g) g.completed = 59;
      }),
    );
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["rank_behind", "critical", [7], 60, "all_reduce"]]);
    expect(r.findings[0]?.summary).toContain(
      "every rank enqueued collective #60 (all_reduce) and ranks 0-6 completed it, but rank 7 did not (last completed #59)",
    );
  });

  it("8 ranks with a pipeline group whose sends differ per rank: pg_status counts sends there, so the entries decide (no false rank behind)", () => {
    const dir = tempDir();
    const pp: FakeGroup = { name: "2", desc: "pp", ranks: [0, 2, 4, 6], pgId: 2 };
    writeJob(
      dir,
      ranksUpTo(8).map((rank) => ({
        rank,
        groups: [
          { group: world(8), enqueued: 40, completed: 40 },
          ...(pp.ranks.includes(rank) ? [{ group: pp, enqueued: 5, completed: 5, p2p: rank === 0 || rank === 6 ? 12 : 24 }] : []),
        ],
      })),
    );
    const r = analyzeDir(dir);
    expect(r.findings).toEqual([]);
    const g = r.process_groups.find((x) => x.process_group === "2");
    expect(g?.ranks.map((x) => [x.rank, x.last_enqueued, x.last_completed])).toEqual([
      [0, 5, 5],
      [2, 5, 5],
      [4, 5, 5],
      [6, 5, 5],
    ]);
  });

  it("8 ranks, healthy: every rank completed all 120 collectives, no finding", () => {
    const dir = tempDir();
    writeJob(dir, job(8, 120, 120));
    const r = analyzeDir(dir);
    expect(r.findings).toEqual([]);
    expect(r.process_groups[0]?.ranks.map((x) => [x.rank, x.last_enqueued, x.last_started, x.last_completed])).toEqual(
      ranksUpTo(8).map((x) => [x, 120, 120, 120]),
    );
  });

  it("8 ranks, a 1.x dump (seq_id, pg_config {pg_id: ranks}, no pg_status): rank 4 is behind, from the entries", () => {
    const dir = tempDir();
    const dumps: Record<string, unknown> = {};
    for (const rank of ranksUpTo(8)) {
      const last = rank === 4 ? 30 : 31;
      const entries = Array.from({ length: last }, (_, i) => ({
        record_id: i,
        pg_id: 0,
        seq_id: i + 1,
        op_id: i + 1,
        profiling_name: "nccl:all_reduce",
        time_created_ns: 1_700_000_000_000_000_000 + i * 1_000_000,
        input_sizes: [[4096]],
        output_sizes: [[4096]],
        state: i + 1 <= 30 ? "completed" : "scheduled",
        time_discovered_started_ns: null,
        time_discovered_completed_ns: i + 1 <= 30 ? 1_700_000_000_000_000_000 + i * 1_000_000 + 500 : null,
        retired: i + 1 <= 30,
        frames: TRAIN_FRAMES,
      }));
      dumps[join(dir, `nccl_trace_rank_${rank}`)] = { entries, version: "1.4", pg_config: { __dict_items__: [[0, ranksUpTo(8)]] } };
    }
    writeDumps(dumps);
    const r = analyzeDir(dir);
    expect(r.findings.map(brief)).toEqual([["rank_behind", "critical", [4], 31, "all_reduce"]]);
    expect(r.findings[0]?.process_group).toBe("0");
    expect(r.process_groups[0]).toMatchObject({ process_group: "0", desc: null, size: 8, missing_ranks: [] });
  });
});
