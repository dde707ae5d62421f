/**
 * Which processes the live stacks take from NCCL RAS's verdicts (collectors/nccl/stacks-inputs.ts):
 * a pid a RAS answer names is believed only where its process runs as the uid of the verified RAS
 * socket, or is a logged rank's process that passed the logs' owner rule; any other is untrusted.
 * Communicators the logs already suspect are left to the logs' suspect (one episode).
 * And from PyTorch's process-group verdicts: the processes of the logs whose PyTorch lines of the
 * last 15 minutes speak for the group, by the logs' owner rule, with the ranks named behind.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import type { ProcessState } from "../../../../../collectors/nccl/logs/state/model.js";
import { PYTORCH_HOLD_MS, PytorchVerdicts } from "../../../../../collectors/nccl/logs/pytorch/verdict.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import type { RasCommVerdict } from "../../../../../collectors/nccl/ras/verdict.js";
import { pytorchStackSuspects, rasStackSuspects, type RasStackNode } from "../../../../../collectors/nccl/stacks-inputs.js";
import { memoryLogger } from "../../../../helpers/memory-logger.js";

function verdict(commId: string, size: number, local: { rank: number; pid: number; alive?: boolean }[], hang: boolean, behind: number[] = []): RasCommVerdict {
  return {
    commId,
    hang,
    stillMs: hang ? 10_000 : 0,
    thresholdMs: 4000,
    behind: behind.map((rank) => ({ rank })),
    network: false,
    crossed: false,
    local: local.map((l) => ({ rank: l.rank, pid: l.pid, alive: l.alive ?? true })),
    gpus: [],
    evidence: hang ? ["ras"] : [],
    size,
    reason: "",
  };
}

/** Container pid p is node pid 1000 + p; pids 1-3 run as uid 500 (the job), 4 as uid 600, 9 is gone. */
function node(verifiedUid: number | undefined, logged: number[] = []): RasStackNode {
  return {
    nodePid: (pid) => (pid === 9 ? undefined : 1000 + pid),
    uidOf: (pid) => (pid === 1004 ? 600 : 500),
    verifiedUid,
    loggedPids: new Set(logged),
  };
}

describe("live stacks: suspects from NCCL RAS", () => {
  it("a hung communicator's ranks here, by node pid, with their global rank from the largest communicator", () => {
    const world = verdict(
      "0xw",
      16,
      [
        { rank: 8, pid: 1 },
        { rank: 9, pid: 2 },
      ],
      false,
    );
    const hung = verdict(
      "0xa",
      2,
      [
        { rank: 0, pid: 1 },
        { rank: 1, pid: 2 },
        { rank: 1, pid: 2 },
        { rank: 5, pid: 9 },
        { rank: 6, pid: 3, alive: false },
      ],
      true,
      [1, 12],
    );
    const got = rasStackSuspects([world, hung], node(500), new Set());
    expect(got).toEqual([
      {
        commId: "0xa",
        ranks: [
          { rank: 0, target: { nodePid: 1001, pid: 1, globalRank: 8, uid: 500 } },
          { rank: 1, target: { nodePid: 1002, pid: 2, globalRank: 9, uid: 500 } },
        ],
        behind: [1, 12],
      },
    ]);
  });

  it("a pid of another user than the verified socket's: untrusted, unless a log of its user names it", () => {
    const hung = verdict(
      "0xa",
      2,
      [
        { rank: 0, pid: 1 },
        { rank: 1, pid: 4 },
      ],
      true,
    );
    const [s] = rasStackSuspects([hung], node(500), new Set());
    expect(s?.ranks.map((r) => r.target.nodePid)).toEqual([1001]);
    expect(s?.untrusted).toEqual([{ rank: 1, pid: 4, nodePid: 1004, uid: 600 }]);
    const [logged] = rasStackSuspects([hung], node(500, [1004]), new Set());
    expect(logged?.ranks.map((r) => r.target.nodePid)).toEqual([1001, 1004]);
    expect(logged?.untrusted).toBeUndefined();
  });

  it("no verified socket (no owner check): only logged rank processes", () => {
    const hung = verdict(
      "0xa",
      2,
      [
        { rank: 0, pid: 1 },
        { rank: 1, pid: 2 },
      ],
      true,
    );
    const [s] = rasStackSuspects([hung], node(undefined, [1002]), new Set());
    expect(s?.ranks.map((r) => r.rank)).toEqual([1]);
    expect(s?.untrusted?.map((u) => u.rank)).toEqual([0]);
  });

  it("a verified root socket vouches for root's processes only", () => {
    const hung = verdict("0xa", 2, [{ rank: 0, pid: 1 }], true);
    const [s] = rasStackSuspects([hung], node(0), new Set());
    expect(s?.ranks).toEqual([]);
    expect(s?.untrusted?.map((u) => u.uid)).toEqual([500]);
  });

  it("not hung: none; a communicator the logs already suspect: left to theirs", () => {
    const ok = verdict("0xa", 2, [{ rank: 0, pid: 1 }], false);
    const hung = verdict("0xb", 2, [{ rank: 0, pid: 1 }], true);
    expect(rasStackSuspects([ok, hung], node(500), new Set(["0xb"]))).toEqual([]);
  });
});

/** A PyTorch 2.6 ProcessGroupNCCL line's head: `[rank1]:[E... ProcessGroupNCCL.cpp:1664] [PG ID 1 PG GUID 1 Rank 1]`. */
const H = (rank: number, pg: number): string => `[rank${rank}]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:1664] [PG ID ${pg} PG GUID ${pg} Rank ${rank}]`;
/** A rank's stderr log: NCCL's version line names its process (host:pid), then PyTorch's lines (no COLL line). */
function rankLog(pid: number, lines: readonly string[]): string[] {
  return [`node1:${pid}:${pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4`, ...lines];
}
const NOW = 10_000_000;

/**
 * PG 1 (ranks 0-3, pids 100-103): rank 1 times out in work 11, ranks 2 and 3 wait in it too, rank 0
 * never enqueued it (behind). PG 2 (rank 4, pid 104) times out on its own. Every log is owned by uid
 * 500; pid 103 runs as uid 600 (not its log's owner). `readMs` per pid: when its lines were read.
 */
function setup(readMs: (pid: number) => number = () => NOW): { t: Tracker; pt: PytorchVerdicts } {
  const t = new Tracker();
  const logs: [number, string[]][] = [
    [
      100,
      [
        `${H(0, 1)} Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 10, last completed NCCL work: 10.`,
      ],
    ],
    [101, [`${H(1, 1)} Exception (either an error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 15, last completed NCCL work: 10.`]],
    [102, [`${H(2, 1)} Exception (either an error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 14, last completed NCCL work: 10.`]],
    [103, [`${H(3, 1)} Exception (either an error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 14, last completed NCCL work: 10.`]],
    [
      104,
      [
        `[rank4]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:616] [PG ID 2 PG GUID 2 Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.`,
      ],
    ],
  ];
  for (const [pid, lines] of logs)
    rankLog(pid, lines).forEach((l, i) => {
      const ev = parseLine(l);
      if (ev === undefined) throw new Error(`not parsed: ${l}`);
      t.ingest(ev, { source: `rank-${pid}.log`, lineNo: i + 1, readMs: readMs(pid), owner: 500 });
    });
  return { t, pt: new PytorchVerdicts({ log: memoryLogger("info").logger, now: () => NOW }) };
}

/** Node pid of pid p: 1000 + p; 103 runs as uid 600, the others as 500; `gone` are not alive. */
function ptView(gone: readonly number[] = []): {
  view: { alive: (p: ProcessState) => boolean; nodePid: (p: ProcessState) => number };
  uidOf: (pid: number) => number;
} {
  return {
    view: { alive: (p) => !gone.includes(p.pid), nodePid: (p) => 1000 + p.pid },
    uidOf: (pid) => (pid === 1103 ? 600 : 500),
  };
}

describe("live stacks: suspects from PyTorch's process-group verdicts", () => {
  it("per group, the processes whose PyTorch lines speak for it, not another group's; the ranks named behind", () => {
    const { t, pt } = setup();
    const verdicts = pt.evaluate(t.pt, () => new Set());
    expect(verdicts.some((v) => v.processGroup === "PG 1" && v.kind === "rank_behind" && v.ranks.join() === "0")).toBe(true);
    const { view, uidOf } = ptView();
    const got = pytorchStackSuspects(t, t.pt, verdicts, view, uidOf, NOW - PYTORCH_HOLD_MS);
    const pg1 = got.find((s) => s.processGroup === "PG 1");
    expect(pg1).toEqual({
      commId: "",
      processGroup: "PG 1",
      ranks: [
        { rank: 0, target: { nodePid: 1100, pid: 100, globalRank: 0, uid: 500 } },
        { rank: 1, target: { nodePid: 1101, pid: 101, globalRank: 1, uid: 500 } },
        { rank: 2, target: { nodePid: 1102, pid: 102, globalRank: 2, uid: 500 } },
      ],
      behind: [0],
    });
    const pg2 = got.find((s) => s.processGroup === "PG 2");
    expect(pg2?.ranks.map((r) => r.target.nodePid)).toEqual([1104]);
    expect(pg2?.commId).toBe("");
  });

  it("a process not running as its log's owner is left out; so is one gone", () => {
    const { t, pt } = setup();
    const verdicts = pt.evaluate(t.pt, () => new Set());
    const { view, uidOf } = ptView([102]);
    const [pg1] = pytorchStackSuspects(t, t.pt, verdicts, view, uidOf, NOW - PYTORCH_HOLD_MS).filter((s) => s.processGroup === "PG 1");
    expect(pg1?.ranks.map((r) => r.rank)).toEqual([0, 1]);
    // As its log's owner, rank 3's process counts.
    const [asOwner] = pytorchStackSuspects(t, t.pt, verdicts, view, () => 500, NOW - PYTORCH_HOLD_MS).filter((s) => s.processGroup === "PG 1");
    expect(asOwner?.ranks.map((r) => r.rank)).toEqual([0, 1, 3]);
  });

  it("a rank's line that names no group, or the group without its name, counts for the group its verdict places it in", () => {
    const W = (head: string, rank: number): string =>
      `[rank${rank}]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:616] ${head} Watchdog caught collective operation timeout: WorkNCCL(SeqNum=11, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600042 milliseconds before timing out.`;
    const t = new Tracker();
    const logs: [number, string][] = [
      [100, W("[PG ID 1 PG GUID 1(tp) Rank 0]", 0)],
      // PyTorch 2.4-2.6's watchdog line names no group: the same work's named line places it in PG 1.
      [101, W("[Rank 1]", 1)],
      [102, `${H(2, 1)} Exception (either an error or timeout) detected by watchdog at work: 11, last enqueued NCCL work: 14, last completed NCCL work: 10.`],
    ];
    for (const [pid, line] of logs)
      rankLog(pid, [line]).forEach((l, i) => {
        const ev = parseLine(l);
        if (ev === undefined) throw new Error(`not parsed: ${l}`);
        t.ingest(ev, { source: `rank-${pid}.log`, lineNo: i + 1, readMs: NOW, owner: 500 });
      });
    const verdicts = new PytorchVerdicts({ log: memoryLogger("info").logger, now: () => NOW }).evaluate(t.pt, () => new Set());
    expect(new Set(verdicts.map((v) => v.processGroup))).toEqual(new Set(["PG 1 (tp)"]));
    const { view } = ptView();
    const got = pytorchStackSuspects(t, t.pt, verdicts, view, () => 500, NOW - PYTORCH_HOLD_MS);
    expect(got.map((s) => [s.processGroup, s.ranks.map((r) => r.target.nodePid)])).toEqual([["PG 1 (tp)", [1100, 1101, 1102]]]);
  });

  it("only lines of the last 15 minutes speak for a group; no live process: no suspect", () => {
    const { t, pt } = setup((pid) => (pid === 101 ? NOW - PYTORCH_HOLD_MS - 1 : NOW));
    const verdicts = pt.evaluate(t.pt, () => new Set());
    const { view, uidOf } = ptView();
    const [pg1] = pytorchStackSuspects(t, t.pt, verdicts, view, uidOf, NOW - PYTORCH_HOLD_MS).filter((s) => s.processGroup === "PG 1");
    expect(pg1?.ranks.map((r) => r.rank)).toEqual([0, 2]);
    const none = ptView([100, 101, 102, 103, 104]);
    expect(pytorchStackSuspects(t, t.pt, verdicts, none.view, none.uidOf, NOW - PYTORCH_HOLD_MS)).toEqual([]);
  });
});
