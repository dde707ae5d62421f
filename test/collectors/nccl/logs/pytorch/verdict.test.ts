/**
 * The live PyTorch verdict (collectors/nccl/logs/pytorch/verdict.ts) on a fake clock: lines read now
 * hold their verdict for 15 minutes, lines without a read time (offline) never count live, a
 * verdict is logged once however often it is evaluated, and the numbers of each verdict are the
 * ones analyze gives for the same lines.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { PYTORCH_HOLD_MS, PytorchVerdicts } from "../../../../../collectors/nccl/logs/pytorch/verdict.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { memoryLogger } from "../../../../helpers/memory-logger.js";

const H = (rank: number): string => `[rank${rank}]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:1664] [PG ID 1 PG GUID 1 Rank ${rank}]`;
const LINES = [
  `${H(1)} Exception (either an error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 15, last completed NCCL work: 10.`,
  `${H(0)} Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 10, last completed NCCL work: 10.`,
];

function setup(readMs: number | undefined): { t: Tracker; v: PytorchVerdicts; clock: { now: number }; lines: () => Array<Record<string, unknown>> } {
  const t = new Tracker();
  LINES.forEach((l, i) => {
    const ev = parseLine(l);
    if (ev === undefined) throw new Error(`not parsed: ${l}`);
    t.ingest(ev, { source: "job.log", lineNo: i + 1, ...(readMs !== undefined ? { readMs } : {}) });
  });
  const clock = { now: 1_000_000 };
  const { logger, lines } = memoryLogger("info");
  return { t, v: new PytorchVerdicts({ log: logger, now: () => clock.now }), clock, lines };
}

describe("live PyTorch verdicts", () => {
  it("rank 0 never enqueued work 11 of PG 1: behind, and PG 1 hangs", () => {
    const { t, v } = setup(1_000_000);
    const out = v.evaluate(t.pt, () => new Set());
    expect(out.map((x) => [x.kind, x.processGroup, x.ranks, x.seq])).toEqual(expect.arrayContaining([["rank_behind", "PG 1", [0], 11]]));
    expect(out.every((x) => x.processGroup === "PG 1")).toBe(true);
  });

  it("holds for 15 minutes after the last line, then drops", () => {
    const { t, v, clock } = setup(1_000_000);
    clock.now = 1_000_000 + PYTORCH_HOLD_MS;
    expect(v.evaluate(t.pt, () => new Set()).length).toBeGreaterThan(0);
    clock.now = 1_000_000 + PYTORCH_HOLD_MS + 1;
    expect(v.evaluate(t.pt, () => new Set())).toEqual([]);
  });

  it("lines with no read time (read offline) are never live", () => {
    const { t, v } = setup(undefined);
    expect(v.evaluate(t.pt, () => new Set())).toEqual([]);
  });

  it("each verdict is logged once, however often it is evaluated", () => {
    const { t, v, lines } = setup(1_000_000);
    for (let i = 0; i < 5; i++) v.evaluate(t.pt, () => new Set());
    const warns = lines().filter(
      (l) => typeof l.msg === "string" && l.msg.startsWith("nccl: PyTorch's lines: In PG 1, rank 0 enqueued NCCL work only up to #10"),
    );
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ level: 40, kind: "rank_behind", process_group: "PG 1", ranks: [0], seq: 11 });
  });
});
