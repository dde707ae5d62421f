/**
 * Which processes the live stacks take from NCCL RAS's verdicts (collectors/nccl/stacks-inputs.ts):
 * a pid a RAS answer names is believed only where its process runs as the uid of the verified RAS
 * socket, or is a logged rank's process that passed the logs' owner rule; any other is untrusted.
 * Communicators the logs already suspect are left to the logs' suspect (one episode).
 */
import { describe, expect, it } from "vitest";
import type { RasCommVerdict } from "../../../../../collectors/nccl/ras/verdict.js";
import { rasStackSuspects, type RasStackNode } from "../../../../../collectors/nccl/stacks-inputs.js";

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
