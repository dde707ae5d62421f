import { describe, expect, it } from "vitest";
import { fastColl } from "../../../collectors/nccl/coll-fast.js";
import { parseLine } from "../../../collectors/nccl/parse-line.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";
import { Scenario } from "../../sim/index.js";

/** `host:pid:` of a line's NCCL header when the line starts with it. */
function writerPrefix(line: string): string | undefined {
  const ev = parseLine(line);
  if (!ev || ev.host === undefined || ev.pid === undefined) return undefined;
  const p = `${ev.host}:${ev.pid}:`;
  return line.startsWith(p) ? p : undefined;
}

function simulatedLines(): [string, string[]] {
  const sim = new Scenario({ nodes: ["dgx-a01"], ranksPerNode: 8, ncclVersion: "2.21.5", comms: [{ name: "tp", groupSize: 2, layout: "contiguous" }] });
  return ["simulated 2.21.5 job", sim.advance(20_000).lines.map((l) => l.text)];
}

describe("fastColl", () => {
  it("agrees with the full parser on every COLL line of every capture and of a simulated job", () => {
    let checked = 0;
    const sources: [string, string[]][] = listFixtures("nccl", ".log").map((n) => [n, readCapture(`nccl/${n}`).split("\n")]);
    sources.push(simulatedLines());
    for (const [name, lines] of sources) {
      for (const line of lines) {
        const prefix = writerPrefix(line);
        if (!prefix) continue;
        const fast = fastColl(line, prefix.length);
        const full = parseLine(line);
        if (full?.kind === "coll" && !full.torn) {
          expect(fast, `${name}: ${line}`).toEqual({ kind: "coll", op: full.op, opCount: full.opCount, comm: full.comm });
          checked++;
        } else {
          expect(fast, `${name}: ${line}`).toBeUndefined();
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it("leaves a torn line holding a second writer's COLL line to the full parser", () => {
    const torn =
      "learnfair062:32619:32711 [2] NCCL INFO learnfair062:32629:32629 [7] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f372c7f5400 recvbuff 0x7f372c7f5400 count 53 datatype 4 op 0 root 0 comm 0x5566 [nranks=8] stream 0x1";
    expect(fastColl(torn, "learnfair062:32619:".length)).toBeUndefined();
    expect(parseLine(torn)).toMatchObject({ kind: "coll", pid: 32629, torn: true });
  });

  it("rejects lines that only look like COLL lines", () => {
    const p = "h:1:";
    expect(fastColl("h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE", p.length)).toBeUndefined();
    expect(fastColl("h:1:2 [0] NCCL WARN AllReduce: opCount 1 comm 0x55aa11", p.length)).toBeUndefined();
    expect(fastColl("h:1:2 [0] NCCL INFO AllReduce: opCount 1f sendbuff 0x1", p.length)).toBeUndefined();
    expect(fastColl("h:1:2 [0] NCCL INFO AllReduce: opCount 1f count 4 comm 0x55aa11 [nranks=2]", p.length)).toEqual({ kind: "coll", op: "AllReduce", opCount: "1f", comm: "0x55aa11" });
  });
});
